// What `signalboard copy` carries from one database to another, worked out from the two schemas
// (store/sqlite/schema.ts with manual-tables.ts, store/pg/schema.ts), which name their tables and
// columns alike. Every table of either schema is copied row for row, in foreign-key order, unless
// NOT_COPIED says why not; a column one dialect lacks is copied only where COLUMNS says how. A new
// table in both schemas is copied with no change here; one in a single schema, or a column the
// other lacks, stops the copy (and the test of this file) until it is declared.
import { type Column, getTableName, is, type Table } from "drizzle-orm";
import { getTableConfig as pgTableConfig, PgTable } from "drizzle-orm/pg-core";
import { getTableConfig as sqliteTableConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import { searchText } from "../pg/events.ts";
import * as pgSchema from "../pg/schema.ts";
import * as sqliteManual from "../sqlite/manual-tables.ts";
import * as sqliteSchema from "../sqlite/schema.ts";

export type Dialect = "sqlite" | "postgresql";

/**
 * Tables that are not carried row for row, and why: each is rebuilt at the target from what is
 * copied, or belongs to the target's own machinery. Tables of either database not copied and not
 * here stop the copy (see `coverage`).
 */
export const NOT_COPIED: Record<string, string> = {
  __migrations: "each database's record of its own migrations: the copy migrates the target before it writes",
  deleted_events:
    "SQLite: events deleted since the full-text index (search.db) last caught up; the target's index is built from its own events when its server starts",
  profile_changes:
    "SQLite: profiles changed since the users search last caught up; on an SQLite target the copied profiles record themselves here (its triggers), and the index is built from them",
  user_search: "PostgreSQL: the users search's words, rebuilt at the target from the copied profiles and events",
  event_ids:
    "PostgreSQL: the event id counter, set at the target to the source's last id, so ids go on after the copied ones",
  rate_limits: "PostgreSQL: sign-in attempts per address in the current window; they start again at the target",
};

/** Keys of `meta` that belong to the database they are in, not to the instance: the target keeps its own. */
export const OWN_META_KEYS: Record<string, string> = {
  "schema.migrated_by": "the version that migrated this database, written by the target's migrations",
  "schema.oldest_compatible": "the oldest version that may run on this database, written by the target's migrations",
  "search.lineage": "SQLite: ties search.db to its database; the target gets its own, and builds its own search.db",
  access_version: "PostgreSQL: the instances' access counter, the target's own",
  "readiness.probe": "a readiness check's row, there for an instant",
};

/** A column that one dialect has and the other does not: how the copy fills it at a target that has it. */
type OneSided = { why: string; fill?: (value: (column: string) => unknown) => unknown };

/** Columns (table.column) in one schema only. Generated columns are the target's own and need no entry. */
export const COLUMNS: Record<string, OneSided> = {
  "events.search_text": {
    why: "PostgreSQL: the folded words of the name and description, which its search index is made of; filled as its writer fills them",
    fill: (value) => searchText(value("event") as string, value("description") as string | null),
  },
};

export type CopyColumn = {
  name: string;
  /** Where its value comes from: a column of the source (its index in `read`), or made from the row. */
  from: number | ((value: (column: string) => unknown) => unknown);
  target: Column;
};

export type CopyTable = {
  name: string;
  /** The source's columns, read in this order. */
  read: Column[];
  /** The target's columns, written in this order. */
  write: CopyColumn[];
  /** The primary key (names): pages are read in its order. */
  key: string[];
  /** Rows left out on both sides (and out of the counts): meta's keys that each database keeps for itself. */
  skip: { column: string; values: string[] } | null;
  /** Whether rows here mean the target holds data (meta's do not: a server started once leaves some). */
  isData: boolean;
  /** The columns of the table at the source and the target: what the databases must not have more of. */
  known: { source: Set<string>; target: Set<string> };
};

type Tables = Record<string, Table>;

/** Each dialect's tables by name. */
export const SCHEMAS: Record<Dialect, Tables> = {
  sqlite: tablesOf({ ...sqliteSchema, ...sqliteManual }),
  postgresql: tablesOf(pgSchema),
};

function tablesOf(module: Record<string, unknown>): Tables {
  const out: Tables = {};
  for (const value of Object.values(module))
    if (is(value, SQLiteTable) || is(value, PgTable)) out[getTableName(value)] = value;
  return out;
}

type Shape = { columns: Column[]; key: string[]; references: string[] };

function shape(table: Table): Shape {
  const config = is(table, PgTable) ? pgTableConfig(table) : sqliteTableConfig(table as SQLiteTable);
  const primary = config.columns.filter((c) => c.primary).map((c) => c.name);
  const composite = config.primaryKeys[0]?.columns.map((c) => c.name) ?? [];
  return {
    columns: config.columns,
    key: primary.length ? primary : composite,
    references: config.foreignKeys.map((fk) => getTableName(fk.reference().foreignTable)),
  };
}

/**
 * The tables a copy from `from` to `to` writes, parents before children, and what stands in the
 * way: tables or columns that are neither copied nor declared (`problems`, empty when all is well).
 */
export function copyPlan(
  from: Dialect,
  to: Dialect,
  schemas: Record<Dialect, Tables> = SCHEMAS,
): { tables: CopyTable[]; problems: string[] } {
  const problems: string[] = [];
  const source = schemas[from];
  const target = schemas[to];
  const names = [...new Set([...Object.keys(source), ...Object.keys(target)])].filter((n) => !(n in NOT_COPIED));
  const tables = new Map<string, CopyTable>();
  const references = new Map<string, string[]>();
  for (const name of names) {
    if (!source[name] || !target[name]) {
      problems.push(
        `table ${name} is in the ${source[name] ? from : to} schema only: add it to the other, or declare it in NOT_COPIED (store/copy/plan.ts) with why`,
      );
      continue;
    }
    const a = shape(source[name]);
    const b = shape(target[name]);
    const read = a.columns.filter((c) => !c.generated);
    const write: CopyColumn[] = [];
    for (const column of b.columns.filter((c) => !c.generated)) {
      const at = read.findIndex((c) => c.name === column.name);
      const declared = COLUMNS[`${name}.${column.name}`];
      if (at >= 0) write.push({ name: column.name, from: at, target: column });
      else if (declared?.fill) write.push({ name: column.name, from: declared.fill, target: column });
      else problems.push(`column ${name}.${column.name} is in the ${to} schema only and nothing fills it: see COLUMNS`);
    }
    for (const column of read)
      if (!b.columns.some((c) => c.name === column.name) && !COLUMNS[`${name}.${column.name}`])
        problems.push(`column ${name}.${column.name} is in the ${from} schema only and would be lost: see COLUMNS`);
    const key = a.key.length ? a.key : b.key;
    if (!key.length || String(a.key) !== String(b.key))
      problems.push(`table ${name} needs the same primary key in both schemas (its rows are read in its order)`);
    tables.set(name, {
      name,
      read,
      write,
      key,
      skip: name === "meta" ? { column: "key", values: Object.keys(OWN_META_KEYS) } : null,
      isData: name !== "meta",
      known: { source: new Set(a.columns.map((c) => c.name)), target: new Set(b.columns.map((c) => c.name)) },
    });
    references.set(
      name,
      [...new Set([...a.references, ...b.references])].filter((r) => r !== name),
    );
  }
  return { tables: parentsFirst(tables, references, problems), problems };
}

/** Tables ordered so that each comes after those it refers to (ties by name, so the order is stable). */
function parentsFirst(
  tables: Map<string, CopyTable>,
  references: Map<string, string[]>,
  problems: string[],
): CopyTable[] {
  const ordered: CopyTable[] = [];
  const placed = new Set<string>();
  let pending = [...tables.keys()].sort();
  while (pending.length) {
    const ready = pending.filter((n) => references.get(n)!.every((r) => placed.has(r) || !tables.has(r)));
    if (!ready.length) {
      problems.push(`the foreign keys of ${pending.join(", ")} go round in a circle: no table of them can come first`);
      break;
    }
    for (const n of ready) {
      ordered.push(tables.get(n)!);
      placed.add(n);
    }
    pending = pending.filter((n) => !placed.has(n));
  }
  return ordered;
}

/**
 * What a database holds beyond the plan (tables and columns, as the database lists them): each one
 * a table or column the copy would leave behind. A database migrated by a newer version can have
 * them; such a copy must be made by that version. `own`: tables of the database's engine itself.
 */
export function coverage(
  side: "source" | "target",
  actual: Map<string, Set<string>>,
  tables: CopyTable[],
  own: (table: string) => boolean,
): string[] {
  const problems: string[] = [];
  for (const [name, columns] of actual) {
    if (name in NOT_COPIED || own(name)) continue;
    const table = tables.find((t) => t.name === name);
    if (!table) {
      problems.push(`the ${side} has a table ${name} that this version does not know how to copy`);
      continue;
    }
    for (const column of columns)
      if (!table.known[side].has(column))
        problems.push(`the ${side}'s table ${name} has a column ${column} that this version does not know how to copy`);
  }
  for (const table of tables)
    if (!actual.has(table.name)) problems.push(`the ${side} has no table ${table.name}: is it migrated?`);
  return problems;
}
