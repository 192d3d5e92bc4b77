// The SQLite store: the storage seam (store/store.ts) over one database file in DATA_DIR. Two
// connections: the writer's, which every write goes through in group commits (writer.ts), and a
// reader's, for everything else, which sees only what is committed (and, attached at the first
// search, the full-text index in search.db: see search.ts). Each aggregate's queries are plain
// synchronous functions of a connection; the seam's promises wrap them.
import type { Database } from "bun:sqlite";
import { Database as SqliteDatabase } from "bun:sqlite";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/bun-sqlite";
import type { Repositories, Store } from "../store.ts";
import { WRITES } from "../store.ts";
import { backupDatabase, refuseDatabaseFiles } from "./backup.ts";
import { type Db, openDatabase, type SyncMode } from "./db.ts";
import { eventStore } from "./events.ts";
import { idempotencyStore } from "./idempotency.ts";
import { metaStore } from "./meta.ts";
import { metricStore } from "./metrics.ts";
import { notificationStore } from "./notifications.ts";
import { profileStore } from "./profiles.ts";
import { projectStore } from "./projects.ts";
import * as schema from "./schema.ts";
import { deletedThrough, prepareSearch, searchPath } from "./search.ts";
import { usersThrough } from "./users-index.ts";
import { startIndexer } from "./indexer.ts";
import { tokenStore } from "./tokens.ts";
import { userStore } from "./users.ts";
import { Writer } from "./writer.ts";

export const DATABASE_FILE = "signalboard.db";
const OTHER_PROCESS_CHECK_MS = 5;

export function databasePath(dataDir: string): string {
  return join(dataDir, DATABASE_FILE);
}

/** The SQLite store, with what only SQLite has: its file, and its writer connection (tests, backup). */
export type SqliteStore = Store & { path: string; sqlite: Database };

export type SqliteOptions = {
  sync?: SyncMode;
  /** The server's store keeps the full-text index up to date, on a thread of its own; commands do not. */
  background?: boolean;
};

type SyncRepositories = ReturnType<typeof syncRepositories>;
type AccessChanges = { count: number };

function syncRepositories(db: Db, searching: () => Db, accessChanges: AccessChanges) {
  return {
    projects: projectStore(db, accessChanges),
    events: eventStore(db, searching),
    metrics: metricStore(db),
    profiles: profileStore(db, searching),
    tokens: tokenStore(db, accessChanges),
    users: userStore(db, accessChanges),
    notifications: notificationStore(db),
    idempotency: idempotencyStore(db),
    meta: metaStore(db),
  };
}

/** An aggregate's synchronous queries as the seam's promises (already settled: SQLite answered). */
function promised<T extends object>(sync: T): { [K in keyof T]: T[K] extends (...a: infer A) => infer R ? (...a: A) => Promise<Awaited<R>> : never } {
  const out: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(sync) as [string, (...a: unknown[]) => unknown][]) {
    out[name] = (...args: unknown[]) => {
      try {
        return Promise.resolve(fn(...args));
      } catch (error) {
        return Promise.reject(error);
      }
    };
  }
  return out as never;
}

function repositories(sync: SyncRepositories): Repositories {
  return {
    projects: promised(sync.projects),
    events: promised(sync.events),
    metrics: promised(sync.metrics),
    profiles: promised(sync.profiles),
    tokens: promised(sync.tokens),
    users: promised(sync.users),
    notifications: promised(sync.notifications),
    idempotency: promised(sync.idempotency),
    meta: promised(sync.meta),
  };
}

export function openSqliteStore(path: string, { sync = "full", background = false }: SqliteOptions = {}): SqliteStore {
  const { sqlite, db } = openDatabase(path, sync);
  if (background) prepareSearch(sqlite, path);
  const reader = new SqliteDatabase(path, { strict: true });
  reader.exec("PRAGMA busy_timeout = 5000");
  reader.exec("PRAGMA query_only = ON");
  const readerDb = drizzle(reader, { schema });
  // The full-text index is attached to the reader at the first search: commands that never search
  // never touch search.db.
  let attached = false;
  const searching = () => {
    if (!attached) {
      reader.query("ATTACH DATABASE ? AS search").run(searchPath(path));
      attached = true;
    }
    return readerDb;
  };
  // Bumped by this process's writes that can take access away: a token revoked, a project (and its
  // public tokens) deleted, a session ended, a member removed.
  const accessChanges: AccessChanges = { count: 0 };
  const written = repositories(syncRepositories(db, searching, accessChanges));
  const read = repositories(syncRepositories(readerDb, searching, accessChanges));
  const writer = new Writer<Repositories>(sqlite, written);
  const tx: Store["tx"] = (work, signal) => writer.submit(work, signal);

  // The store's own methods: reads on the reader; each write a transaction of its own in the group commit.
  const front = {} as Repositories;
  for (const aggregate of Object.keys(read) as (keyof Repositories)[]) {
    const writes = new Set<string>(WRITES[aggregate] as string[]);
    const methods: Record<string, unknown> = {};
    for (const [name, fn] of Object.entries(read[aggregate]) as [string, (...a: unknown[]) => unknown][]) {
      methods[name] = writes.has(name) ? (...args: unknown[]) => tx((r) => (r[aggregate] as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[name]!(...args)) : fn;
    }
    (front as Record<string, unknown>)[aggregate] = methods;
  }

  // Another process's commits show in data_version (of the writer's connection: our own commits do
  // not change it there). Reading it costs a lock round trip: at most every few milliseconds.
  const dataVersion = sqlite.prepare<{ data_version: number }, []>("PRAGMA data_version");
  const seen = { version: 0, at: 0 };
  const otherProcesses = () => {
    const now = performance.now();
    if (now - seen.at > OTHER_PROCESS_CHECK_MS) {
      seen.version = dataVersion.get()!.data_version;
      seen.at = now;
    }
    return seen.version;
  };
  const indexer = background ? startIndexer(path) : null;

  return {
    ...front,
    path,
    sqlite,
    tx,
    writer,
    shared: null,
    dialect: "sqlite",
    accessVersion: () => `${otherProcesses()}:${accessChanges.count}`,
    async ping() {
      reader.query("SELECT 1").get();
    },
    async prune(now, limits) {
      const unindexed = attached || background ? deletedThrough(searching().$client) : 0;
      const followed = attached || background ? usersThrough(searching().$client) : 0;
      await tx(async (r) => {
        await r.notifications.pruneDeliveries(limits.deliveriesBefore);
        await r.notifications.pruneSubscriptions(limits.subscriptionsBefore);
        await r.idempotency.prune(now);
      });
      // Deleted events the index has dropped no longer need their record.
      if (unindexed) await writer.submit(async () => void sqlite.query("DELETE FROM deleted_events WHERE seq <= ?").run(unindexed));
      // So do the changed profiles the users index has followed.
      if (followed) await writer.submit(async () => void sqlite.query("DELETE FROM profile_changes WHERE seq <= ?").run(followed));
    },
    async backup(target, options) {
      backupDatabase(sqlite, path, target, options);
    },
    refuseOwnFile(target) {
      refuseDatabaseFiles(path, target, "writing there would destroy it. Choose a file elsewhere.");
    },
    async close() {
      await writer.flush();
      await indexer?.stop();
      try {
        sqlite.exec("PRAGMA optimize");
      } catch {
        // optimize is advisory; a busy database must not block closing.
      }
      reader.close();
      sqlite.close();
    },
  };
}
