// The storage layer's front door: one connection and its writer, the queries per aggregate, and a
// second, read-only-in-practice connection for full-text search (see search.ts).
import type { Database } from "bun:sqlite";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { type Db, openDatabase, type SyncMode } from "./db.ts";
import * as schema from "./schema.ts";
import { eventStore } from "./events.ts";
import { idempotencyStore } from "./idempotency.ts";
import { metaStore } from "./meta.ts";
import { metricStore } from "./metrics.ts";
import { notificationStore } from "./notifications.ts";
import { profileStore } from "./profiles.ts";
import { projectStore } from "./projects.ts";
import { openSearchReader } from "./search.ts";
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
  // Bumped by this process's writes that can take access away: a token revoked, a project (and its
  // public tokens) deleted, a session ended, a member removed.
  const accessChanges = { count: 0 };
  // Another process's commits show in data_version. Reading it is a statement, and a statement
  // outside a transaction costs a lock round trip, far more than the request it would guard: so
  // it is read at most every few milliseconds.
  const seen = { version: 0, at: 0 };
  // Searches read through their own connection, with search.db attached (see search.ts); it is
  // opened at the first search, so commands that never search never touch search.db.
  let reader: { sqlite: Database; db: Db } | null = null;
  const searchReader = () => {
    if (!reader) {
      const connection = openSearchReader(path);
      reader = { sqlite: connection, db: drizzle(connection, { schema }) };
    }
    return reader;
  };
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
     * Changes whenever access may have been taken away: another process (a CLI command) committed
     * anything, or this one revoked a token, deleted a project, ended a session or removed a
     * member. Token caches and open streams (http/sse.ts) check again when it changes.
     */
    accessVersion: () => `${otherProcesses()}:${accessChanges.count}`,
    path,
    sqlite,
    db,
    writer: new Writer(sqlite),
    projects: projectStore(db, accessChanges),
    events: eventStore(db, () => searchReader().db),
    searchReader: () => searchReader().sqlite,
    closeSearchReader: () => {
      reader?.sqlite.close();
      reader = null;
    },
    idempotency: idempotencyStore(db),
    metrics: metricStore(db),
    profiles: profileStore(db),
    tokens: tokenStore(db, accessChanges),
    users: userStore(db, accessChanges),
    meta: metaStore(db),
    notifications: notificationStore(db),
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
  store.closeSearchReader();
  store.sqlite.close();
}
