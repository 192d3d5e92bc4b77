// The SQLite end of a copy. As a source: one read transaction on a connection of its own, which
// WAL keeps at one moment however long it lasts while the server writes on. As a target: a new
// database, migrated, written under a hidden temporary name in the data directory and renamed to
// signalboard.db only once complete and checked, so the directory never holds part of a copy.
import { Database } from "bun:sqlite";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { databaseFiles, fsyncPath } from "../sqlite/backup.ts";
import { openDatabase } from "../sqlite/db.ts";
import { databasePath } from "../sqlite/index.ts";
import type { CopyTable } from "./plan.ts";
import { type Catalog, type CopySource, type CopyTarget, HELD_COUNTED, pageConditions, quote } from "./sides.ts";

/** Tables of SQLite itself (sqlite_sequence, sqlite_stat1, ...): never copied as rows. */
export const sqliteOwn = (table: string) => table.startsWith("sqlite_");

export async function sqliteSource(path: string): Promise<CopySource> {
  openDatabase(path).sqlite.close(); // migrated, as every command does
  const db = new Database(path, { strict: true });
  try {
    db.exec("PRAGMA busy_timeout = 5000");
    db.exec("PRAGMA query_only = ON");
    db.exec("BEGIN");
    db.query("SELECT count(*) FROM sqlite_master").get(); // the first read takes the snapshot: now
  } catch (error) {
    db.close();
    throw error;
  }
  return {
    dialect: "sqlite",
    catalog: async () => catalog(db),
    pages: (table, size) => pages(db, table, size),
    count: async (table) => count(db, table),
    async counters() {
      const rows = db.query<{ name: string; seq: number }, []>("SELECT name, seq FROM sqlite_sequence").all();
      return new Map(rows.map((r) => [r.name, Number(r.seq)]));
    },
    async close() {
      if (db.inTransaction) db.exec("ROLLBACK");
      db.close();
    },
  };
}

export async function sqliteTarget(dataDir: string): Promise<CopyTarget> {
  mkdirSync(dataDir, { recursive: true });
  const path = databasePath(dataDir);
  const partial = join(dataDir, `.${basename(path)}.partial-${randomBytes(6).toString("hex")}`);
  const { sqlite: db } = openDatabase(partial);
  // A new file that becomes the database only once complete: a crash leaves nothing to keep safe.
  db.exec("PRAGMA synchronous = OFF");
  /** The target's prepared statements (a table's insert by its name), finalized on close. */
  const statements = new Map<string, ReturnType<Database["prepare"]>>();
  let open = true;
  const close = () => {
    if (!open) return;
    open = false;
    // Every statement finalized, so the file is closed now (not when they are collected).
    for (const statement of statements.values()) statement.finalize();
    db.close(true);
  };
  return {
    dialect: "sqlite",
    catalog: async () => catalog(db),
    async holding(tables) {
      if (!existsSync(path)) return [];
      const existing = new Database(path, { strict: true });
      try {
        existing.exec("PRAGMA busy_timeout = 5000");
        existing.exec("PRAGMA query_only = ON");
        const present = catalog(existing);
        return tables
          .filter((t) => t.isData && present.has(t.name))
          .map((t) => ({ table: t.name, rows: count(existing, t, HELD_COUNTED) }))
          .filter((t) => t.rows > 0);
      } finally {
        existing.close();
      }
    },
    async clear() {
      // A new database: nothing to clear.
    },
    async write(table, rows) {
      let insert = statements.get(table.name);
      if (!insert) {
        const columns = table.write.map((c) => quote(c.name)).join(", ");
        const values = table.write.map(() => "?").join(", ");
        insert = db.prepare(`INSERT INTO ${quote(table.name)} (${columns}) VALUES (${values})`);
        statements.set(table.name, insert);
      }
      const statement = insert;
      db.transaction(() => {
        for (const row of rows) statement.run(...(row as never[]));
      })();
    },
    async finish(tables, counters) {
      // AUTOINCREMENT never hands out an id again, even a deleted row's: go on from the source's highest.
      const raise = db.prepare(
        "INSERT INTO sqlite_sequence (name, seq) SELECT ?1, ?2 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = ?1)",
      );
      const update = db.prepare("UPDATE sqlite_sequence SET seq = max(seq, ?2) WHERE name = ?1");
      statements.set(" raise", raise).set(" update", update);
      db.transaction(() => {
        for (const table of tables) {
          const counter = counters.get(table.name);
          const autoincrement = table.write.some(
            (c) => c.target.primary && (c.target as { autoIncrement?: boolean }).autoIncrement,
          );
          if (!counter || !autoincrement) continue;
          raise.run(table.name, counter);
          update.run(table.name, counter);
        }
      })();
    },
    count: async (table) => count(db, table),
    async commit() {
      // Into the file itself, with no write-ahead log beside it (the server turns WAL on again as it opens it).
      db.exec("PRAGMA journal_mode = DELETE");
      close();
      fsyncPath(partial);
      // What belonged to a database replaced here (its write-ahead log, its search index) goes
      // first: a log left beside the new file would be applied to it.
      for (const file of databaseFiles(path).slice(1)) rmSync(file, { force: true });
      renameSync(partial, path);
      fsyncPath(dirname(path));
    },
    async abandon() {
      try {
        close();
      } catch {
        // the file goes anyway
      }
      for (const suffix of ["", "-wal", "-shm", "-journal"]) rmSync(partial + suffix, { force: true });
    },
  };
}

function catalog(db: Database): Catalog {
  const tables = db
    .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    .all();
  return new Map(
    tables.map(({ name }) => [
      name,
      new Set(
        db
          .query<{ name: string }, [string]>("SELECT name FROM pragma_table_info(?)")
          .all(name)
          .map((c) => c.name),
      ),
    ]),
  );
}

/** The table's rows (those not skipped); with `limit`, counted up to it. */
function count(db: Database, table: CopyTable, limit?: number): number {
  const { text, skipped } = pageConditions(table, false, () => "?");
  const from = `FROM ${quote(table.name)}${text}`;
  const query =
    limit === undefined
      ? `SELECT count(*) AS n ${from}`
      : `SELECT count(*) AS n FROM (SELECT 1 ${from} LIMIT ${limit})`;
  return db.query<{ n: number }, never[]>(query).get(...(skipped as never[]))!.n;
}

async function* pages(db: Database, table: CopyTable, size: number): AsyncGenerator<unknown[][]> {
  const columns = table.read.map((c) => quote(c.name)).join(", ");
  const order = table.key.map(quote).join(", ");
  const statement = (after: boolean) => {
    const { text } = pageConditions(table, after, () => "?");
    return db.prepare<unknown[], never[]>(
      `SELECT ${columns} FROM ${quote(table.name)}${text} ORDER BY ${order} LIMIT ${size}`,
    );
  };
  const first = statement(false);
  const next = statement(true);
  const keyAt = table.key.map((k) => table.read.findIndex((c) => c.name === k));
  const skipped = (table.skip?.values ?? []) as never[];
  let last: unknown[] | null = null;
  for (;;) {
    const rows = (
      last ? next.values(...skipped, ...(keyAt.map((i) => last![i]) as never[])) : first.values(...skipped)
    ) as unknown[][];
    if (rows.length) yield rows;
    if (rows.length < size) return;
    last = rows.at(-1)!;
  }
}
