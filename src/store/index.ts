// The storage layer's front door: one connection, one writer, and the queries per aggregate.
import type { Database } from "bun:sqlite";
import { join } from "node:path";
import { type Db, openDatabase, type SyncMode } from "./db.ts";
import { eventStore } from "./events.ts";
import { idempotencyStore } from "./idempotency.ts";
import { metaStore } from "./meta.ts";
import { metricStore } from "./metrics.ts";
import { notificationStore } from "./notifications.ts";
import { profileStore } from "./profiles.ts";
import { projectStore } from "./projects.ts";
import { searchIndexer } from "./search.ts";
import { tokenStore } from "./tokens.ts";
import { userStore } from "./users.ts";
import { Writer } from "./writer.ts";

export const DATABASE_FILE = "signalboard.db";
const OTHER_PROCESS_CHECK_MS = 5;

export function databasePath(dataDir: string): string {
  return join(dataDir, DATABASE_FILE);
}

export function openStore(path: string, sync: SyncMode = "full") {
  const { sqlite, db } = openDatabase(path, sync);
  const dataVersion = sqlite.prepare<{ data_version: number }, []>("PRAGMA data_version");
  // Bumped by this process's writes that can change what a token grants (revoke, project delete).
  const tokenChanges = { count: 0 };
  // Another process's commits show in data_version. Reading it is a statement, and a statement
  // outside a transaction costs a lock round trip, far more than the request it would guard: so
  // it is read at most every few milliseconds.
  const seen = { version: 0, at: 0 };
  const otherProcesses = () => {
    const now = performance.now();
    if (now - seen.at > OTHER_PROCESS_CHECK_MS) {
      seen.version = dataVersion.get()!.data_version;
      seen.at = now;
    }
    return seen.version;
  };
  return {
    /**
     * Changes whenever a token may have changed: another process (a CLI command) committed
     * anything, or this one revoked a token or deleted a project. Token caches key on it.
     */
    tokenVersion: () => `${otherProcesses()}:${tokenChanges.count}`,
    path,
    sqlite,
    db,
    writer: new Writer(sqlite),
    projects: projectStore(db, tokenChanges),
    events: eventStore(db),
    idempotency: idempotencyStore(db),
    metrics: metricStore(db),
    profiles: profileStore(db),
    tokens: tokenStore(db, tokenChanges),
    users: userStore(db),
    meta: metaStore(db),
    notifications: notificationStore(db),
    search: searchIndexer(sqlite),
  };
}

export type Store = ReturnType<typeof openStore>;
export type { Db, Database };

export function closeStore(store: Store): void {
  store.writer.flush();
  try {
    store.sqlite.exec("PRAGMA optimize");
  } catch {
    // optimize is advisory; a busy database must not block closing.
  }
  store.sqlite.close();
}
