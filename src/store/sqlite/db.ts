// Opening the database: pragmas first, then the embedded migrations.
import { Database } from "bun:sqlite";
import { accessSync, constants, mkdirSync } from "node:fs";
import { userInfo } from "node:os";
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
      throw new Error(dataDirProblem(dirname(path), error as NodeJS.ErrnoException));
    }
  }
  let sqlite: Database;
  try {
    sqlite = new Database(path, { create: true, strict: true });
    sqlite.exec("PRAGMA journal_mode = WAL");
  } catch (error) {
    if (path === ":memory:" || writable(dirname(path))) throw error;
    throw new Error(dataDirProblem(dirname(path), { code: "EACCES" } as NodeJS.ErrnoException));
  }
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
export function openReader(
  path: string,
  searchFile: string,
): { reader: Database; db: Db; searching: () => Db; searched: () => boolean } {
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

/** Why the data directory cannot hold the database, as a sentence that says what to do. */
function dataDirProblem(dir: string, error: NodeJS.ErrnoException): string {
  const it = `the data directory ${dir} (--data-dir / DATA_DIR)`;
  const elsewhere = "Choose a directory this user may write to (it is made if it does not exist).";
  switch (error.code) {
    case "EEXIST":
      return `${it} is a file, not a directory. ${elsewhere}`;
    case "ENOTDIR":
      return `${it} cannot be made: a part of its path is a file, not a directory. ${elsewhere}`;
    case "ENOENT":
      return `${it} does not exist and cannot be made there. ${elsewhere}`;
    case "EACCES":
    case "EPERM":
      return `${it} cannot be written by the user ${userName()}: run Signalboard as the user that owns it (on an installed server: sudo -u signalboard signalboard ...), or ${elsewhere.toLowerCase()}`;
    case "EROFS":
      return `${it} is on a read-only file system. ${elsewhere}`;
    case "ENOSPC":
      return `${it} cannot be made: the disk is full.`;
    default:
      return `${it} cannot be used: ${error.message}`;
  }
}

function writable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

function userName(): string {
  try {
    return userInfo().username;
  } catch {
    return String(process.getuid?.() ?? "running Signalboard");
  }
}
