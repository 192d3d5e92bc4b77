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

export function databasePath(dataDir: string): string {
  return join(dataDir, DATABASE_FILE);
}

export function openStore(path: string, sync: SyncMode = "full") {
  const { sqlite, db } = openDatabase(path, sync);
  return {
    path,
    sqlite,
    db,
    writer: new Writer(sqlite),
    projects: projectStore(db),
    events: eventStore(db),
    idempotency: idempotencyStore(db),
    metrics: metricStore(db),
    profiles: profileStore(db),
    tokens: tokenStore(db),
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
