// Composition: the store the configuration names, and the services over it. The server and every
// command build their services here, so a command does exactly what the dashboard does. Routes
// and commands receive services; only this file sees the store.
import pkg from "../package.json";
import type { Config } from "./config.ts";
import { accountService } from "./domain/accounts.ts";
import { deviceAdmin } from "./domain/device-admin.ts";
import { feedService } from "./domain/feed.ts";
import { healthService } from "./domain/health.ts";
import { ingestService, type RunWrite } from "./domain/ingest.ts";
import { type IngestWrite, ingestWrites } from "./domain/ingest-writes.ts";
import { deviceService, integrationService } from "./domain/notifications.ts";
import { projectService } from "./domain/projects.ts";
import { tokenService } from "./domain/tokens.ts";
import { transferService } from "./domain/transfer.ts";
import { Fanout } from "./live/fanout.ts";
import { Hub } from "./live/hub.ts";
import { createMetrics } from "./metrics.ts";
import { Notifier } from "./notify/queue.ts";
import { vapidKeys } from "./notify/vapid.ts";
import { databasePath, openSqliteStore, type SqliteStore } from "./store/sqlite/index.ts";
import { WriterThread } from "./store/sqlite/writer-thread.ts";
import type { Repositories } from "./store/store.ts";

export const VERSION: string = pkg.version;

const DELIVERIES_KEPT_MS = 7 * 86_400_000;

/** The configuration's store. `serving`: the server's (it keeps the search index up to date). */
export function openStore(config: Config, { serving = false } = {}): SqliteStore {
  return openSqliteStore(databasePath(config.dataDir), { sync: config.sqliteSync, background: serving });
}

export type ServiceOptions = {
  /** An open store (the server's); by default the configuration's is opened. close() closes it either way. */
  store?: SqliteStore;
  /** For the server: ingest writes may run on the writer thread (SIGNALBOARD_WRITER). */
  serving?: boolean;
};

export function createServices(config: Config, { store = openStore(config), serving = false }: ServiceOptions = {}) {
  const hub = new Hub();
  const metrics = createMetrics();
  // Ingest's writes run in this thread's group commit, or on a writer thread (SIGNALBOARD_WRITER).
  const writerThread = serving && config.writer === "thread" ? new WriterThread(store.path, config.sqliteSync) : null;
  const run = (writerThread
    ? (name: IngestWrite, args: unknown, signal?: AbortSignal) => writerThread.run(name, args, signal)
    : (name: IngestWrite, args: unknown, signal?: AbortSignal) => store.tx((tx) => (ingestWrites[name] as (tx: Repositories, args: unknown) => Promise<unknown>)(tx, args), signal)) as RunWrite;
  const vapid = once(() => vapidKeys(store, config.vapidSubject));
  const tokens = tokenService(store);
  const accounts = accountService(store, { sessionTtlMs: config.sessionTtl });
  const projects = projectService(store, { hub, defaultProject: config.defaultProject });

  return {
    config,
    version: VERSION,
    hub,
    fanout: new Fanout(hub, config.liveInterval),
    metrics,
    tokens,
    accounts,
    projects,
    ingest: ingestService({ run, hub, defaultProject: config.defaultProject, baseUrl: config.baseUrl }),
    feed: feedService(store),
    transfer: transferService(store),
    devices: deviceService(store),
    deviceAdmin: deviceAdmin(store),
    integrations: integrationService(store),
    health: healthService(store, writerThread ? [store.writer, writerThread] : [store.writer]),
    /** The server's VAPID key pair, made and stored at first use. */
    vapid,
    notifier: new Notifier(store, vapid, { concurrency: 64, retryBaseMs: config.notifyRetryBase, maxAttempts: config.notifyAttempts, pollMs: 1000, graceMs: 3000 }, metrics),

    /** A copy of the database (see Store.backup). */
    backup: (target: string, options: { replace: boolean }) => store.backup(target, options),

    /** Changes whenever access may have been taken away (open streams are checked again then). */
    accessVersion: () => store.accessVersion(),

    /** Forgets what has served its time: ended sessions, events past retention, old deliveries. */
    async housekeep(now = Date.now()): Promise<{ expiredEvents: number }> {
      await accounts.pruneSessions(now);
      const expiredEvents = await projects.pruneExpired(now);
      await store.prune(now, { deliveriesBefore: now - DELIVERIES_KEPT_MS, subscriptionsBefore: now - config.pushMaxAge });
      return { expiredEvents };
    },

    /** Lets the writes under way commit, then closes the store. */
    async close(): Promise<void> {
      await writerThread?.stop(); // its last writes commit before the store closes
      await tokens.flushLastUsed().catch(() => {});
      await store.close();
    },
  };
}

export type Services = ReturnType<typeof createServices>;

function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | null = null;
  return () => {
    made ??= make().catch((error) => {
      made = null; // failed: the next caller tries again
      throw error;
    });
    return made;
  };
}
