// The PostgreSQL store: the storage seam (store/store.ts) over a database that several instances
// share. Reads go to a pool of their own (the expensive ones through the gate of store/reads.ts);
// every write goes through this instance's group commit (writer.ts), which orders its batches'
// events with every instance's as they commit. What the others commit reaches this one through
// LISTEN/NOTIFY, with a poll behind it (a lost notification, or a lost LISTEN connection, delays a
// change by at most a poll, never loses it).
import type { SQL } from "bun";
import { eq, inArray, sql as sqlText } from "drizzle-orm";
import { AsyncLocalStorage } from "node:async_hooks";
import { log } from "../../logger.ts";
import type { StoredEvent } from "../../model/event.ts";
import { BadRequest } from "../../errors.ts";
import type { Repositories, SharedStore, Store } from "../store.ts";
import { type Methods, storeFront } from "../front.ts";
import { gated, ReadGate, type Runner } from "../reads.ts";
import { alertRules } from "../aggregates/alerts.ts";
import { plainRepositories } from "../aggregates/index.ts";
import { metricStore } from "../aggregates/metrics.ts";
import { profileReads, profileStore } from "../aggregates/profiles.ts";
import { projectStore } from "../aggregates/projects.ts";
import { metaStore } from "../aggregates/meta.ts";
import type { Sql } from "../aggregates/sql.ts";
import { type Batch, batchOf, type Ctx } from "./context.ts";
import * as schema from "./schema.ts";
import { asRead, connectionProblem, openPg, type PgDb } from "./db.ts";
import { alertReads } from "./alerts.ts";
import { analyticsStore } from "./analytics.ts";
import { eventStore } from "./events.ts";
import { NameCache } from "./names.ts";
import { tunedMetrics } from "./metrics.ts";
import { migrate } from "./migrate.ts";
import { identify, mergeJson } from "./profiles.ts";
import { userListSource } from "./users-list.ts";
import { projectLookups } from "./projects.ts";
import { snapshotEvents } from "./snapshot.ts";
import { ACCESS_CHANNEL, EVENTS_CHANNEL, PgWriter } from "./writer.ts";

const LIVE_CHANNEL = "signalboard_live";
/** How often changes are looked for without being told (a lost NOTIFY): well within a second. */
const POLL_MS = 500;
const FOLLOW_PAGE = 1000;
/** Reads of new events at most this often: under load, one read takes the events of many commits. */
const FOLLOW_GAP_MS = 10;

export type PgStore = Store & { url: string; sql: SQL };

type Cancellable = { cancel(): unknown };

type Lockable<Q> = { for(strength: "update", options?: { skipLocked?: boolean }): Q };

/** What the plain aggregates (store/aggregates) work with, over this connection. */
function sqlOf(ctx: Ctx): Sql {
  return {
    db: ctx.db,
    t: schema,
    dialect: "postgresql",
    forUpdate: (query) => (query as unknown as Lockable<typeof query>).for("update"),
    skipLocked: (query) => (query as unknown as Lockable<typeof query>).for("update", { skipLocked: true }),
    accessChanged: () => batchOf(ctx).accessChanged(),
    async lockName(key) {
      if (ctx.batch) await ctx.db.execute(sqlText`SELECT pg_advisory_xact_lock(hashtext(${key}))`);
    },
    // Remembered projects and channels are forgotten whenever the access version moves.
    namesChanged: () => batchOf(ctx).accessChanged(),
    async projectGone(projectId) {
      await ctx.db.delete(schema.eventTags).where(eq(schema.eventTags.projectId, projectId));
    },
    mergeJson,
    idIn: inArray,
  };
}

function repositories(ctx: Ctx): Repositories {
  const sql = sqlOf(ctx);
  return {
    ...plainRepositories(sql),
    projects: { ...projectStore(sql), ...projectLookups(ctx) },
    events: eventStore(ctx),
    metrics: { ...metricStore(sql), ...tunedMetrics(ctx) },
    profiles: { ...profileStore(sql), ...profileReads(userListSource(ctx.db)), ...identify(ctx) },
    analytics: analyticsStore(ctx),
    alerts: { ...alertRules(sql), ...alertReads(ctx) },
  };
}

/** Connections for writes, LISTEN, leader locks and shared counters: never taken by a read. */
const WRITE_CONNECTIONS = 5;

export type PgStoreOptions = {
  /** Connections in the read pool. */
  max?: number;
  /** A gated read's budget (ms): SIGNALBOARD_QUERY_TIMEOUT. */
  queryTimeoutMs?: number;
};

export async function openPgStore(
  url: string,
  { max = 10, queryTimeoutMs = 10_000 }: PgStoreOptions = {},
): Promise<PgStore> {
  // Two pools: writes never wait for a connection a read holds. Every statement of the read pool
  // ends at the server shortly after a read's budget, whatever happens here; a read the gate stops
  // (out of budget, or its client left) has its queries cancelled in the database at once.
  const { sql, db } = openPg(url, { max: WRITE_CONNECTIONS });
  const inFlight = new AsyncLocalStorage<{ queries: Set<Cancellable>; stopped: boolean }>();
  const reading = openPg(url, {
    max,
    statementTimeoutMs: queryTimeoutMs + 1000,
    noJit: true,
    customPlans: true,
    onQuery: (query) => {
      const current = inFlight.getStore();
      if (!current) return;
      current.queries.add(query);
      if (current.stopped) query.cancel();
    },
  });
  try {
    await migrate(sql);
  } catch (error) {
    await Promise.all([sql.close().catch(() => {}), reading.sql.close().catch(() => {})]);
    if (error instanceof Error && error.name === "MigrationError") throw error;
    throw new Error(connectionProblem(error, url));
  }

  // The access version: bumped by every batch that takes access away, on any instance.
  const meta = metaStore(sqlOf({ db, batch: null, names: new NameCache(() => "") }));
  let accessVersion = (await meta.get("access_version")) ?? "0";
  const listeners = new Set<(payload: string) => void>();
  const wakers = new Set<() => void>();
  const subscriptions = await Promise.all([
    sql.listen(
      ACCESS_CHANNEL,
      (value) => (accessVersion = value),
      () => void refreshAccess(),
    ),
    sql.listen(
      EVENTS_CHANNEL,
      () => wakers.forEach((wake) => wake()),
      () => wakers.forEach((wake) => wake()),
    ),
    sql.listen(LIVE_CHANNEL, (payload) => listeners.forEach((listener) => listener(payload))),
  ]);
  async function refreshAccess(): Promise<void> {
    try {
      accessVersion = (await meta.get("access_version")) ?? accessVersion;
    } catch {
      // unreachable for now: the next poll tries again
    }
  }
  const accessPoll = setInterval(() => void refreshAccess(), POLL_MS);

  const names = new NameCache(() => accessVersion);
  const inline = repositories({ db: reading.db, batch: null, names });
  const runner: Runner = (read, stop) => {
    const current = { queries: new Set<Cancellable>(), stopped: false };
    stop.addEventListener(
      "abort",
      () => {
        current.stopped = true;
        for (const query of current.queries) query.cancel();
      },
      { once: true },
    );
    const repo = inline[read.aggregate as keyof Repositories] as unknown as Methods;
    return inFlight.run(current, () => asRead(repo[read.method]!)(...read.args));
  };
  const gate = new ReadGate(runner, {
    slots: Math.max(1, max - 2),
    perKind: Math.max(1, Math.floor(max / 2) - 1),
    budgetMs: queryTimeoutMs,
  });
  const read = gated(inline, gate);
  const writer = new PgWriter(
    sql,
    (tx: PgDb, batch: Batch) => repositories({ db: tx, batch, names }),
    (committed) => {
      if (committed.accessVersion !== null) accessVersion = committed.accessVersion; // this instance knows at once
      if (committed.lastEventId !== null) wakers.forEach((wake) => wake());
    },
    names,
  );
  const tx: Store["tx"] = (work, signal) => writer.submit(work, signal);

  const front = storeFront(read, tx, asRead);

  const followers = new Set<{ stop(): Promise<void> }>();
  const shared: SharedStore = {
    follow(afterId, onEvents) {
      let cursor = afterId;
      let running: Promise<void> | null = null;
      let again = false;
      let stopped = false;
      let lastRead = 0;
      const pull = async () => {
        do {
          again = false;
          const wait = lastRead + FOLLOW_GAP_MS - performance.now();
          if (wait > 0) await Bun.sleep(wait);
          lastRead = performance.now();
          for (;;) {
            // Not through the gate: live delivery must not wait behind searches (a page of ids is bounded work).
            const rows: StoredEvent[] = await inline.events.range(
              undefined,
              cursor,
              Number.MAX_SAFE_INTEGER,
              FOLLOW_PAGE,
            );
            if (stopped || !rows.length) break;
            cursor = rows.at(-1)!.id;
            onEvents(rows);
            if (rows.length < FOLLOW_PAGE) break;
          }
        } while (again && !stopped);
      };
      const wake = () => {
        if (stopped) return;
        if (running) {
          again = true;
          return;
        }
        running = pull()
          .catch((error) => log.warn("could not read new events; will retry", { error: (error as Error).message }))
          .finally(() => (running = null));
      };
      wakers.add(wake);
      const poll = setInterval(wake, POLL_MS);
      wake();
      const follower = {
        async stop() {
          stopped = true;
          clearInterval(poll);
          wakers.delete(wake);
          await running;
          followers.delete(follower);
        },
      };
      followers.add(follower);
      return follower;
    },

    async broadcast(payload) {
      await sql`SELECT pg_notify(${LIVE_CHANNEL}, ${payload})`;
    },

    onBroadcast(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    async asLeader(name, work) {
      const conn = await sql.reserve();
      try {
        const [{ locked }] = (await conn`SELECT pg_try_advisory_lock(hashtext(${name})) AS locked`) as [
          { locked: boolean },
        ];
        if (!locked) return false;
        try {
          await work();
        } finally {
          await conn`SELECT pg_advisory_unlock(hashtext(${name}))`;
        }
        return true;
      } finally {
        conn.release();
      }
    },

    async hit(key, windowMs, now) {
      const [row] = (await sql`
        INSERT INTO rate_limits (key, window_start, count) VALUES (${key}, ${now}, 1)
        ON CONFLICT (key) DO UPDATE SET
          count = CASE WHEN rate_limits.window_start <= ${now - windowMs} THEN 1 ELSE rate_limits.count + 1 END,
          window_start = CASE WHEN rate_limits.window_start <= ${now - windowMs} THEN ${now} ELSE rate_limits.window_start END
        RETURNING count, window_start`) as [{ count: number; window_start: string | number }];
      return { count: Number(row.count), windowEndsAt: Number(row.window_start) + windowMs };
    },

    async unhit(key) {
      await sql`UPDATE rate_limits SET count = greatest(count - 1, 0) WHERE key = ${key}`;
    },
  };

  return {
    ...front,
    url,
    sql,
    tx,
    writer,
    reads: gate.stats,
    shared,
    dialect: "postgresql",
    accessVersion: () => accessVersion,
    async ping() {
      await sql`SELECT 1`;
    },
    async prune(now, limits) {
      await tx(async (r) => {
        await r.notifications.pruneDeliveries(limits.deliveriesBefore);
        await r.notifications.pruneSubscriptions(limits.subscriptionsBefore);
        await r.idempotency.prune(now);
      });
      await sql`DELETE FROM rate_limits WHERE window_start < ${now - 86_400_000}`;
    },
    async backup() {
      throw new BadRequest(
        "backup copies a SQLite database; on PostgreSQL use its own tools (pg_dump to back up, pg_restore to restore, or your provider's snapshots)",
        "unsupported",
      );
    },
    snapshotEvents(where, pageSize) {
      return snapshotEvents(sql, names, where, pageSize);
    },
    refuseOwnFile() {
      // its files are the database server's, not on this path
    },
    async close() {
      await writer.flush();
      clearInterval(accessPoll);
      await Promise.all([...followers].map((f) => f.stop()));
      await Promise.all(subscriptions.map((s) => s.unlisten().catch(() => {})));
      gate.close();
      await Promise.all([sql.close({ timeout: 5 }), reading.sql.close({ timeout: 5 })]);
    },
  };
}
