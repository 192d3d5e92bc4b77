// Backups as files: an online copy of the database that only ever appears complete under its name.
import type { Database } from "bun:sqlite";
import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { searchPath } from "./search.ts";

/** What lives beside the database at `path` and belongs to it: writing over any of these loses data. */
export function databaseFiles(path: string): string[] {
  const search = searchPath(path);
  return [path, `${path}-wal`, `${path}-shm`, `${path}-journal`, search, `${search}-wal`, `${search}-shm`];
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

function fsyncPath(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
