// Opening the database: pragmas first, then the embedded migrations.
import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { migrate } from "./migrate.ts";
import * as schema from "./schema.ts";

export type Db = ReturnType<typeof drizzle<typeof schema>>;
export type SyncMode = "full" | "normal";

export function openDatabase(path: string, sync: SyncMode = "full"): { sqlite: Database; db: Db } {
  if (path !== ":memory:") {
    try {
      mkdirSync(dirname(path), { recursive: true });
    } catch (error) {
      throw new Error(`the data directory ${dirname(path)} (--data-dir / DATA_DIR) cannot be used: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  }
  const sqlite = new Database(path, { create: true, strict: true });
  sqlite.exec("PRAGMA journal_mode = WAL");
  sqlite.exec(`PRAGMA synchronous = ${sync === "full" ? "FULL" : "NORMAL"}`);
  // Management commands (another process) may hold the write lock for a moment.
  sqlite.exec("PRAGMA busy_timeout = 5000");
  sqlite.exec("PRAGMA foreign_keys = ON");
  sqlite.exec("PRAGMA temp_store = MEMORY");
  sqlite.exec("PRAGMA cache_size = -32000");
  migrate(sqlite);
  return { sqlite, db: drizzle(sqlite, { schema }) };
}


/**
 * A connection for reads only: it sees what is committed (WAL lets it read while the writer
 * writes). The full-text index (search.db) is attached at the first search, so what never searches
 * never touches it.
 */
export function openReader(path: string, searchFile: string): { reader: Database; db: Db; searching: () => Db; searched: () => boolean } {
  const reader = new Database(path, { strict: true });
  reader.exec("PRAGMA busy_timeout = 5000");
  reader.exec("PRAGMA query_only = ON");
  const db = drizzle(reader, { schema });
  let attached = false;
  const searching = () => {
    if (!attached) {
      reader.query("ATTACH DATABASE ? AS search").run(searchFile);
      attached = true;
    }
    return db;
  };
  return { reader, db, searching, searched: () => attached };
}
