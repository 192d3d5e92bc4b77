// The two ends of a copy, as each dialect implements them (copy/sqlite.ts, copy/pg.ts). Rows travel
// as arrays of values as the drivers give and take them; copy/index.ts converts between the two.
import type { CopyTable, Dialect } from "./plan.ts";

/** A database's tables and their columns, as it lists them. */
export type Catalog = Map<string, Set<string>>;

export interface CopySource {
  readonly dialect: Dialect;
  /** PostgreSQL: a lock the source holds for the copy, which only sessions of the same database contend for. */
  readonly mark?: { key: string };
  /** One moment of the database, read by every call below; taken when the source is opened. */
  catalog(): Promise<Catalog>;
  /** The table's rows in its key's order, a page at a time, each row its `read` columns. */
  pages(table: CopyTable, size: number): AsyncGenerator<unknown[][]>;
  count(table: CopyTable): Promise<number>;
  /** The highest id each table has handed out (deleted rows included), by table. */
  counters(): Promise<Map<string, number>>;
  close(): Promise<void>;
}

export interface CopyTarget {
  readonly dialect: Dialect;
  catalog(): Promise<Catalog>;
  /** The tables among `tables` that hold rows (of those a copy writes), with their rows counted up to `HELD_COUNTED`. */
  holding(tables: CopyTable[]): Promise<{ table: string; rows: number }[]>;
  /** Empties what the copy writes and rebuilds. */
  clear(tables: CopyTable[]): Promise<void>;
  /** Rows in the table's `write` order, as the target's driver takes them. */
  write(table: CopyTable, rows: unknown[][]): Promise<void>;
  /** After the rows: ids go on after the source's counters, and what is derived from the rows is rebuilt. */
  finish(tables: CopyTable[], counters: Map<string, number>): Promise<void>;
  count(table: CopyTable): Promise<number>;
  /** Makes the copy the target's: until then nothing of it is seen there. */
  commit(): Promise<void>;
  /** Leaves the target as it was before the copy. */
  abandon(): Promise<void>;
}

/** How far a target's rows are counted to say what it holds. */
export const HELD_COUNTED = 1000;

/** An identifier, quoted for SQL (both dialects quote alike). */
export const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** `WHERE` conditions of a page: the rows a table leaves out, and the rows after the previous page's last key. */
export function pageConditions(
  table: CopyTable,
  after: boolean,
  param: (i: number, column: string) => string,
): { text: string; skipped: string[] } {
  const conditions: string[] = [];
  const skipped = table.skip?.values ?? [];
  if (table.skip) {
    const list = skipped.map((_, i) => param(i, table.skip!.column)).join(", ");
    conditions.push(`${quote(table.skip.column)} NOT IN (${list})`);
  }
  if (after) {
    const columns = table.key.map(quote).join(", ");
    const values = table.key.map((k, i) => param(skipped.length + i, k)).join(", ");
    conditions.push(`(${columns}) > (${values})`);
  }
  return { text: conditions.length ? ` WHERE ${conditions.join(" AND ")}` : "", skipped };
}
