// Backups: which files a backup may be written to, and what a failed one leaves (nothing new).
import { existsSync, realpathSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { BadRequest } from "../errors.ts";
import { copyDatabase, databaseFiles } from "../store/backup.ts";
import type { Store } from "../store/index.ts";

/** Writes a consistent copy of the store's database to `target`; `replace` lets it write over an older file. */
export function backupDatabase(store: Store, target: string, { replace }: { replace: boolean }): void {
  const file = resolve(target);
  // Real paths, so that data/../data/signalboard.db or a symlink to the data directory is recognised.
  const live = databaseFiles(store.path).map(realPath);
  const names = existsSync(file) ? [realPath(file), realpathSync(file)] : [realPath(file)];
  const clash = live.find((path) => names.includes(path));
  if (clash) {
    throw new BadRequest(
      `${file} is ${clash === live[0] ? "the live database" : `one of the live database's files (${basename(clash)})`}: a backup written there would destroy what it copies. Choose a file elsewhere, such as ${join(dirname(store.path), "backups", "signalboard.db")}.`,
    );
  }
  const existed = existsSync(file);
  if (existed && !replace) throw new BadRequest(`${file} already exists; choose another name or add --force`);
  try {
    copyDatabase(store.sqlite, file);
  } catch (error) {
    throw new Error(`the backup could not be written (${(error as Error).message}); ${existed ? `${file} was left as it was` : "no file was written"}`);
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
