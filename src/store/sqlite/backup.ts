// Backups as files: an online copy of the database that only ever appears complete under its name.
import type { Database } from "bun:sqlite";
import { randomBytes } from "node:crypto";
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { BadRequest } from "../../errors.ts";
import { searchPath } from "./search.ts";

/** What lives beside the database at `path` and belongs to it: writing over any of these loses data. */
export function databaseFiles(path: string): string[] {
  const search = searchPath(path);
  return [path, `${path}-wal`, `${path}-shm`, `${path}-journal`, search, `${search}-wal`, `${search}-shm`];
}

/** Writes a consistent copy of the database at `path` to `target`; `replace` lets it write over an older file. */
export function backupDatabase(
  sqlite: Database,
  path: string,
  target: string,
  { replace }: { replace: boolean },
): void {
  const file = resolve(target);
  refuseDatabaseFiles(
    path,
    file,
    `a backup written there would destroy what it copies. Choose a file elsewhere, such as ${join(dirname(path), "backups", "signalboard.db")}.`,
  );
  const existed = existsSync(file);
  // Checked before the copy is made: a rename over a directory fails only once the whole copy is written.
  if (existed && !statSync(file).isFile())
    throw new BadRequest(
      `${file} is not a file (a directory?); name a file to write, or a directory ending in / to write a dated file inside it`,
    );
  if (existed && !replace) throw new BadRequest(`${file} already exists; choose another name or add --force`);
  try {
    copyDatabase(sqlite, file);
  } catch (error) {
    throw new Error(
      `the backup could not be written (${(error as Error).message}); ${existed ? `${file} was left as it was` : "no file was written"}`,
    );
  }
}

/** Throws when `target` is the database at `path` or one of its files, however the path is written; `why` says what that would do. */
export function refuseDatabaseFiles(path: string, target: string, why: string): void {
  const file = resolve(target);
  // Real paths, so that data/../data/signalboard.db or a symlink to the data directory is recognised.
  const live = databaseFiles(path).map(realPath);
  const names = existsSync(file) ? [realPath(file), realpathSync(file)] : [realPath(file)];
  const clash = live.find((p) => names.includes(p));
  if (clash) {
    throw new BadRequest(
      `${file} is ${clash === live[0] ? "the live database" : `one of the live database's files (${basename(clash)})`}: ${why}`,
    );
  }
}

/** The real path of a file that may not exist yet: its directory's real path, and its name. */
function realPath(path: string): string {
  try {
    return join(realpathSync(dirname(path)), basename(path));
  } catch {
    return path; // no such directory: nothing of the live database can be there
  }
}

/**
 * Copies the database to `target` (VACUUM INTO: one read transaction, so the copy is one moment
 * even while the server writes). The copy is written under a temporary name beside `target` and
 * renamed over it only once it is complete and on disk: until then a file already at `target`
 * stays as it was, and a copy that fails, or is cut short, never shows under `target`.
 */
export function copyDatabase(sqlite: Database, target: string): void {
  const dir = dirname(target);
  mkdirSync(dir, { recursive: true });
  // Hidden, and beside the target: rename is atomic only within one file system.
  const partial = join(dir, `.${basename(target)}.partial-${randomBytes(6).toString("hex")}`);
  try {
    sqlite.query("VACUUM INTO ?").run(partial);
    // SQLite does not fsync what VACUUM INTO writes (https://sqlite.org/lang_vacuum.html#vacuuminto).
    fsyncPath(partial);
    renameSync(partial, target);
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  }
  fsyncPath(dir); // the rename is on disk only once its directory is
}

/** Waits until what is written to the file (or a directory's entries) at `path` is on disk. */
export function fsyncPath(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
