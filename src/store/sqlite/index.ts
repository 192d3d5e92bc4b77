// The SQLite store: the storage seam (store/store.ts) over one database file in DATA_DIR. The
// writer's connection, which every write goes through in group commits (writer.ts); a reader's,
// for point lookups, which sees only what is committed (and, attached at the first search, the
// full-text index in search.db: see search.ts); and, in the server, reader processes for the reads
// whose cost depends on their parameters or the data (readers.ts, through the gate of
// store/reads.ts), so none of them runs on the thread that acknowledges writes. The plain
// aggregates are one implementation for both stores (store/aggregates); the tuned ones' queries
// here are plain synchronous functions of a connection, which the seam's promises wrap.
import type { Database } from "bun:sqlite";
import { join } from "node:path";
import type { Repositories, Store } from "../store.ts";
import { storeFront } from "../front.ts";
import { backupDatabase, refuseDatabaseFiles } from "./backup.ts";
import { openDatabase, openReader, type SyncMode } from "./db.ts";
import { indexedThrough, prepareSearch, searchPath } from "./search.ts";
import { snapshotEvents } from "./snapshot.ts";
import { startIndexer } from "./indexer.ts";
import { Writer } from "./writer.ts";
import { summaryKeeper } from "./summaries.ts";
import { type AccessChanges, repositories } from "./repositories.ts";
import { ReaderPool } from "./readers.ts";
import { gated, ReadGate } from "../reads.ts";

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
  /** The server's store runs its expensive reads in this many reader processes (readers.ts); commands read inline. */
  readers?: number;
  /** A gated read's budget (ms): SIGNALBOARD_QUERY_TIMEOUT. */
  queryTimeoutMs?: number;
};

export function openSqliteStore(
  path: string,
  { sync = "full", background = false, readers = 2, queryTimeoutMs = 10_000 }: SqliteOptions = {},
): SqliteStore {
  const { sqlite, db } = openDatabase(path, sync);
  if (background) prepareSearch(sqlite, path);
  const { reader, db: readerDb, searching, searched } = openReader(path, searchPath(path));
  // Bumped by this process's writes that can take access away: a token revoked, a project (and its
  // public tokens) deleted, a session ended, a member removed.
  const accessChanges: AccessChanges = { count: 0 };
  // Another process's commits (their deletions) may clear what the summaries' writer remembers as written.
  const summaries = summaryKeeper(sqlite, () => otherProcesses());
  const written = repositories(db, searching, accessChanges, summaries);
  const inline = repositories(readerDb, searching, accessChanges);
  // The server's expensive reads run in reader processes, through the gate (store/reads.ts).
  const pool = background ? new ReaderPool(path, readers, queryTimeoutMs) : null;
  const gate = pool
    ? new ReadGate(pool.run, { slots: readers, perKind: Math.max(1, readers - 1), budgetMs: queryTimeoutMs })
    : null;
  const read = gate ? gated(inline, gate) : inline;
  pool?.warm(500);
  const writer = new Writer<Repositories>(sqlite, written, summaries.hooks);
  const tx: Store["tx"] = (work, signal) => writer.submit(work, signal);

  const front = storeFront(read, tx);

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
    reads: gate?.stats ?? null,
    shared: null,
    dialect: "sqlite",
    accessVersion: () => `${otherProcesses()}:${accessChanges.count}`,
    async ping() {
      reader.query("SELECT 1").get();
    },
    async prune(now, limits) {
      const unindexed = searched() || background ? indexedThrough(searching().$client, "deleted_through") : 0;
      const followed = searched() || background ? indexedThrough(searching().$client, "users_through") : 0;
      await tx(async (r) => {
        await r.notifications.pruneDeliveries(limits.deliveriesBefore);
        await r.notifications.pruneSubscriptions(limits.subscriptionsBefore);
        await r.idempotency.prune(now);
      });
      // Deleted events the index has dropped no longer need their record.
      if (unindexed)
        await writer.submit(async () => void sqlite.query("DELETE FROM deleted_events WHERE seq <= ?").run(unindexed));
      // So do the changed profiles the users index has followed.
      if (followed)
        await writer.submit(async () => void sqlite.query("DELETE FROM profile_changes WHERE seq <= ?").run(followed));
    },
    async backup(target, options) {
      backupDatabase(sqlite, path, target, options);
    },
    snapshotEvents(where, pageSize) {
      return snapshotEvents(path, where, pageSize);
    },
    refuseOwnFile(target) {
      refuseDatabaseFiles(path, target, "writing there would destroy it. Choose a file elsewhere.");
    },
    async close() {
      await writer.flush();
      gate?.close();
      await Promise.all([indexer?.stop(), pool?.close()]);
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
