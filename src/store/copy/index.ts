// `signalboard copy`: a whole instance from one database to another, SQLite or PostgreSQL either way.
// The source is read as one moment while its server runs on; every table of the plan (plan.ts) is
// copied a page at a time, parents first, with its ids; then the target's id counters go on after
// the source's, what is derived from the rows is rebuilt, and each table's rows are counted on
// both sides. The target takes the copy only if every count matches: until then it is a
// transaction (PostgreSQL) or a file under a temporary name (SQLite), and it stays as it was when
// the copy fails or does not match.
import { BadRequest } from "../../errors.ts";
import { refuseDatabaseFiles } from "../sqlite/backup.ts";
import { pgSource, pgTarget } from "./pg.ts";
import { copyPlan, coverage, type CopyTable, type Dialect } from "./plan.ts";
import { type CopySource, type CopyTarget, HELD_COUNTED } from "./sides.ts";
import { sqliteOwn, sqliteSource, sqliteTarget } from "./sqlite.ts";

/** A database: SQLite's file (in its data directory), or PostgreSQL's URL. */
export type Place = { dialect: "sqlite"; dataDir: string; path: string } | { dialect: "postgresql"; url: string };

export type CopyProgress =
  | { kind: "rows"; table: string; rows: number; done: boolean; elapsedMs: number }
  | { kind: "step"; what: string };

export type TableCount = { table: string; source: number; target: number };

export type CopyResult = { counts: TableCount[]; rows: number; elapsedMs: number; matched: boolean };

export type CopyOptions = {
  /** Replace what the target holds (otherwise a target that holds data is refused). */
  force: boolean;
  onProgress?: (progress: CopyProgress) => void;
  /** Rows per page read and written: what memory holds at a time, whatever the size of a table. */
  pageRows?: number;
};

const PAGE_ROWS = 2000;

export async function copyInstance(from: Place, to: Place, options: CopyOptions): Promise<CopyResult> {
  const started = performance.now();
  const say = options.onProgress ?? (() => {});
  const { tables, problems } = copyPlan(from.dialect, to.dialect);
  if (problems.length) throw new Error(`this version cannot copy every table:\n  ${problems.join("\n  ")}`);
  if (from.dialect === "sqlite" && to.dialect === "sqlite")
    refuseDatabaseFiles(from.path, to.path, "a copy there would destroy what it copies. Choose another directory.");

  const source = from.dialect === "sqlite" ? await sqliteSource(from.path) : await pgSource(from.url);
  let target: CopyTarget | null = null;
  try {
    target = to.dialect === "sqlite" ? await sqliteTarget(to.dataDir) : await pgTarget(to.url, source.mark);
    const missed = [
      ...coverage("source", await source.catalog(), tables, ownTables(from.dialect)),
      ...coverage("target", await target.catalog(), tables, ownTables(to.dialect)),
    ];
    if (missed.length) throw new Error(`this copy would leave data behind:\n  ${missed.join("\n  ")}`);
    const held = await target.holding(tables);
    if (held.length && !options.force) {
      const what = held.map(({ table, rows }) =>
        rows >= HELD_COUNTED
          ? `${table}: ${HELD_COUNTED} rows or more`
          : `${table}: ${rows} row${rows === 1 ? "" : "s"}`,
      );
      throw new BadRequest(
        `the target already holds data (${what.join(", ")}); add --force to replace everything it holds with the copy`,
      );
    }
    await target.clear(tables);

    let rows = 0;
    for (const table of tables) rows += await copyTable(source, target, table, options.pageRows ?? PAGE_ROWS, say);
    say({ kind: "step", what: "setting the id counters and rebuilding what is derived from the rows" });
    await target.finish(tables, await source.counters());

    say({ kind: "step", what: "counting each table's rows on both sides" });
    const counts: TableCount[] = [];
    for (const table of tables)
      counts.push({ table: table.name, source: await source.count(table), target: await target.count(table) });
    const matched = counts.every((c) => c.source === c.target);
    if (matched) await target.commit();
    else await target.abandon();
    return { counts, rows, elapsedMs: performance.now() - started, matched };
  } catch (error) {
    await target?.abandon();
    throw error;
  } finally {
    await source.close();
  }
}

function ownTables(dialect: Dialect): (table: string) => boolean {
  return dialect === "sqlite" ? sqliteOwn : () => false;
}

async function copyTable(
  source: CopySource,
  target: CopyTarget,
  table: CopyTable,
  pageRows: number,
  say: (progress: CopyProgress) => void,
): Promise<number> {
  const started = performance.now();
  const convert = converter(table);
  let rows = 0;
  try {
    for await (const page of source.pages(table, pageRows)) {
      await target.write(table, page.map(convert));
      rows += page.length;
      say({ kind: "rows", table: table.name, rows, done: false, elapsedMs: performance.now() - started });
    }
  } catch (error) {
    throw new Error(`copying ${table.name} failed after ${rows} rows: ${(error as Error).message}`);
  }
  say({ kind: "rows", table: table.name, rows, done: true, elapsedMs: performance.now() - started });
  return rows;
}

/**
 * A source row (as its driver gives it) to a target row (as the target's driver takes it): each
 * value through the source column's and the target column's own mapping (0/1 and booleans, bigint
 * as text and numbers), and the target's columns the source lacks made from the row.
 */
function converter(table: CopyTable): (row: unknown[]) => unknown[] {
  const at = new Map(table.read.map((c, i) => [c.name, i]));
  const fromSource = (row: unknown[], i: number) => {
    const raw = row[i];
    return raw === null || raw === undefined ? null : table.read[i]!.mapFromDriverValue(raw);
  };
  const steps = table.write.map(({ from, target }) => {
    const made =
      typeof from === "number"
        ? (row: unknown[]) => fromSource(row, from)
        : (row: unknown[]) => from((name) => fromSource(row, at.get(name)!));
    return (row: unknown[]) => {
      const value = made(row);
      return value === null || value === undefined ? null : target.mapToDriverValue(value);
    };
  });
  return (row) => steps.map((step) => step(row));
}
