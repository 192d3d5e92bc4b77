// Both schemas describe the same tables: the plain aggregates (src/store/aggregates) run one
// implementation over either, typed as PostgreSQL's, and store/rows.ts reads rows of both the same way.
import { describe, expect, test } from "bun:test";
import { getTableColumns, getTableName, is, Table } from "drizzle-orm";
import * as pg from "../../src/store/pg/schema.ts";
import * as sqlite from "../../src/store/sqlite/schema.ts";

type Shape = Record<string, { name: string; kind: string; notNull: boolean; primary: boolean }>;

function tables(schema: Record<string, unknown>): Map<string, { table: string; columns: Shape }> {
  const out = new Map<string, { table: string; columns: Shape }>();
  for (const [name, value] of Object.entries(schema)) {
    if (!is(value, Table)) continue;
    const columns: Shape = {};
    for (const [property, column] of Object.entries(getTableColumns(value))) {
      columns[property] = {
        name: column.name,
        kind: column.dataType,
        notNull: column.notNull,
        primary: column.primary,
      };
    }
    out.set(name, { table: getTableName(value), columns });
  }
  return out;
}

/**
 * What only one store has: the tuned paths' own tables, where the planners want different shapes
 * (each store's summaries, tag indexes and search), and PostgreSQL's shared rate-limit counters.
 */
const ONLY_SQLITE = ["profileChanges"];
const ONLY_PG = [
  "activity",
  "eventCounts",
  "eventIds",
  "eventTags",
  "rateLimits",
  "summaryBuilds",
  "summaryKeys",
  "summaryValues",
  "tagCounts",
  "userSearch",
];
/** Columns only PostgreSQL's events have: its full-text search lives in the row (SQLite's in search.db). */
const ONLY_PG_COLUMNS: Record<string, string[]> = { events: ["search", "searchText"] };

describe("the SQLite and PostgreSQL schemas", () => {
  const a = tables(sqlite);
  const b = tables(pg);

  test("name the same tables, but for the tuned paths' own", () => {
    expect([...a.keys()].filter((name) => !b.has(name)).sort()).toEqual(ONLY_SQLITE);
    expect([...b.keys()].filter((name) => !a.has(name)).sort()).toEqual(ONLY_PG);
    expect(a.size - ONLY_SQLITE.length).toBeGreaterThan(15);
  });

  test("give each table both have the same columns, of the same kind, nullable alike", () => {
    for (const [name, table] of a) {
      const other = b.get(name);
      if (!other) continue;
      const columns = { ...other.columns };
      for (const column of ONLY_PG_COLUMNS[name] ?? []) delete columns[column];
      expect({ name, table: other.table, columns }).toEqual({ name, ...table });
    }
  });
});
