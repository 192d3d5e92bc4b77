// Group commit on PostgreSQL, with event ids in commit order across every instance.
//
// The writes submitted within one tick of this instance make one batch. Its events are queued and
// written together by one call (events.ts, writeEvents: the procedure write_events) that also
// moves the event id counter: that row's lock is the cluster-wide order, held from the counter's
// update until the batch commits, so ids are handed out in commit order (a reader of `id > last`
// never skips an event that commits late). A batch of events alone (ingest, once project and
// channel names are cached) is that one call, which commits by itself without waiting for the
// disk: instances wait for each other only while a batch's rows are written, never for each
// other's round trips or disk flushes. Its writes are acknowledged once the WAL is on disk past
// its commit (wal.ts); the next batch begins meanwhile.
//
// A write that sends a statement of its own (a new channel, an idempotency key, a notification, a
// metric: anything but queued events) makes the batch a transaction that takes the order first,
// as every batch did before, and commits waiting for the disk: such batches run one at a time
// across the cluster, so a read-then-write (the first owner, the VAPID keys) is as safe as on
// SQLite, and no two batches can deadlock (every one that locks anything took the order first).
// Queued events are written before such a statement runs, so it sees them.
//
// As on SQLite, a write that throws is undone alone: one that sent nothing drops what it queued;
// otherwise the batch goes back to its start and runs again with a savepoint per write. At commit
// the batch tells every instance about its events (NOTIFY with the last id) and, when it took
// access away, bumps the access version (NOTIFY too).
import type { ReservedSQL, SQL } from "bun";
import { drizzle } from "drizzle-orm/bun-sql";
import type { StoredEvent } from "../../model/event.ts";
import { GroupCommit, type Outcome, type Pending as GroupPending } from "../group-commit.ts";
import type { Repositories } from "../store.ts";
import type { Batch } from "./context.ts";
import { isStorageFailure, type PgDb, raced, toStorageError } from "./db.ts";
import { writeEvents } from "./events.ts";
import type { Found, NameCache } from "./names.ts";
import * as schema from "./schema.ts";
import { WalOnDisk } from "./wal.ts";

export const EVENTS_CHANNEL = "signalboard_events";
export const ACCESS_CHANNEL = "signalboard_access";

type Pending = GroupPending<Repositories>;

/** What a committed batch changed, for this instance to know at once. */
export type Committed = { lastEventId: number | null; accessVersion: string | null };

export class PgWriter extends GroupCommit<Repositories> {
  /** The batch being committed (one at a time: group-commit.ts). */
  private run: BatchRun | null = null;
  /** The writes' repositories, made once: what they send and queue goes to the batch being committed. */
  private readonly repos: Repositories;
  private readonly wal: WalOnDisk;

  constructor(
    private readonly sql: SQL,
    repositories: (db: PgDb, batch: Batch) => Repositories,
    private readonly onCommit: (committed: Committed) => void,
    private readonly names: NameCache,
  ) {
    super();
    this.stats.orderHeldSeconds = 0;
    this.wal = new WalOnDisk(sql);
    const current = () => {
      if (!this.run) throw new Error("a write outside a write transaction (store.tx)");
      return this.run;
    };
    // Every statement a write sends goes through its batch (BatchRun.statement): the order first.
    const client = { unsafe: (query: string, params?: unknown[]) => current().statement(query, params) };
    const batch: Batch = {
      event: (row, now) => current().event(row, now),
      accessChanged: () => current().accessChanged(),
      found: (f) => current().found(f),
    };
    this.repos = repositories(drizzle({ client: client as unknown as SQL, schema }) as unknown as PgDb, batch);
  }

  protected async commit(batch: Pending[]): Promise<Outcome[]> {
    const stamp = this.names.stamp;
    const run = (this.run = new BatchRun(this.sql, this.repos));
    try {
      let outcomes = await run.all(batch);
      let committed = outcomes && (await run.finish().catch(unlessStorageFailure));
      if (!outcomes || !committed) {
        // One write threw, or the batch's events could not be written: back to the start, then each write on its own.
        await run.restart();
        outcomes = await run.each(batch);
        committed = await run.finish();
      }
      this.failing = false;
      this.stats.orderHeldSeconds! += run.heldSeconds;
      this.onCommit(committed);
      // Names found or made by a batch that renamed nothing are good for every instance from now on.
      if (committed.accessVersion === null) this.names.remember(run.discovered, stamp);
      if (run.wal === null) return outcomes;
      // Committed without waiting for the disk: acknowledged once it is there. The next batch
      // begins meanwhile (its own commit comes after this one's in the WAL, so it cannot outlive it).
      const stored = this.wal.wait(run.wal).catch((error) => {
        this.failing = isStorageFailure(error);
        throw toStorageError(error);
      });
      stored.catch(() => {}); // answered through the outcomes below, if any succeeded
      return outcomes.map((o) => (o.ok ? { ok: true, value: stored.then(() => o.value) } : o));
    } catch (error) {
      await run.abandon();
      this.failing = isStorageFailure(error);
      const failure = toStorageError(error);
      return batch.map(() => ({ ok: false, error: failure }));
    } finally {
      this.run = null;
    }
  }
}

/** A failure of the database goes on; any other (a write's own) answers null: start over, write by write. */
function unlessStorageFailure(error: unknown): null {
  if (isStorageFailure(error)) throw error;
  return null;
}

/** One batch: its queued events, and its transaction once a write sends a statement of its own. */
class BatchRun implements Batch {
  /** Projects and channels the batch found or made, remembered once it commits. */
  readonly discovered: Found[] = [];
  private conn: ReservedSQL | null = null;
  private queued: StoredEvent[] = [];
  private lastId: number | null = null;
  /** Where the WAL must be on disk before the batch is acknowledged, when it committed without waiting. */
  wal: string | null = null;
  /** For how long the batch held the cluster-wide order. */
  heldSeconds = 0;
  private orderedAt = 0;
  private accessWasChanged = false;
  /** Statements sent so far for the batch's writes (a write that sent none can be undone in memory). */
  private sent = 0;
  /** The statements of the writes, one after another on the batch's connection. */
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly sql: SQL,
    private readonly repos: Repositories,
  ) {}

  // --- what the repositories call (context.ts, Batch) -------------------------------------------

  async event(row: StoredEvent, now: boolean): Promise<void> {
    this.queued.push(row);
    if (now) await this.ordered(async () => {});
  }

  accessChanged(): void {
    this.accessWasChanged = true;
  }

  found(f: Found): void {
    this.discovered.push(f);
  }

  // --- running the batch -------------------------------------------------------------------------

  /** Every write in one go; null as soon as one that sent a statement throws for its own reasons. */
  async all(batch: Pending[]): Promise<Outcome[] | null> {
    const outcomes: Outcome[] = [];
    for (const pending of batch) {
      const mark = { queued: this.queued.length, found: this.discovered.length, sent: this.sent };
      try {
        outcomes.push({ ok: true, value: await pending.run(this.repos) });
      } catch (error) {
        if (isStorageFailure(error)) throw error; // the whole batch fails
        if (this.sent !== mark.sent) return null;
        // It changed nothing in the database: forgetting what it queued undoes it.
        this.queued.length = mark.queued;
        this.discovered.length = mark.found;
        outcomes.push({ ok: false, error: raced(error) });
      }
    }
    return outcomes;
  }

  /** Each write on its own, in a savepoint, its events written before its savepoint is released. */
  async each(batch: Pending[]): Promise<Outcome[]> {
    const conn = await this.hold();
    const outcomes: Outcome[] = [];
    for (const pending of batch) {
      const mark = { found: this.discovered.length, lastId: this.lastId };
      await conn`SAVEPOINT w`;
      try {
        const value = await pending.run(this.repos);
        await this.ordered(async () => {});
        await conn`RELEASE SAVEPOINT w`;
        outcomes.push({ ok: true, value });
      } catch (error) {
        if (isStorageFailure(error)) throw error;
        await conn`ROLLBACK TO SAVEPOINT w`;
        await conn`RELEASE SAVEPOINT w`;
        // What it made is undone.
        this.queued = [];
        this.discovered.length = mark.found;
        this.lastId = mark.lastId;
        outcomes.push({ ok: false, error: raced(error) });
      }
    }
    return outcomes;
  }

  /** Writes what is queued and commits: one statement when no write sent any, else the transaction's end. */
  async finish(): Promise<Committed> {
    await this.chain;
    const conn = this.conn;
    if (!conn) {
      if (this.queued.length) {
        const { wal, heldUs } = await this.writeQueued(this.sql, EVENTS_CHANNEL, true);
        this.wal = wal;
        this.heldSeconds = heldUs / 1e6;
      }
      return { lastEventId: this.lastId, accessVersion: null };
    }
    if (this.queued.length) await this.writeQueued(conn, EVENTS_CHANNEL, false);
    else if (this.lastId !== null) await conn`SELECT pg_notify(${EVENTS_CHANNEL}, ${String(this.lastId)})`;
    let accessVersion: string | null = null;
    if (this.accessWasChanged) {
      const [{ value }] =
        (await conn`UPDATE meta SET value = (value::bigint + 1)::text WHERE key = 'access_version' RETURNING value`) as [
          { value: string },
        ];
      await conn`SELECT pg_notify(${ACCESS_CHANNEL}, ${value})`;
      accessVersion = value;
    }
    await conn`COMMIT`;
    this.heldSeconds = (performance.now() - this.orderedAt) / 1000;
    this.conn = null;
    conn.release();
    return { lastEventId: this.lastId, accessVersion };
  }

  /** Back to the batch's start: nothing it wrote or queued is kept. */
  async restart(): Promise<void> {
    await this.chain;
    if (this.conn) await this.conn`ROLLBACK TO SAVEPOINT batch`;
    this.queued = [];
    this.discovered.length = 0;
    this.lastId = null;
    this.accessWasChanged = false;
  }

  /** After a failure: the transaction, if any, is rolled back and its connection let go. */
  async abandon(): Promise<void> {
    const conn = this.conn;
    this.conn = null;
    if (!conn) return;
    await conn`ROLLBACK`.catch(() => {});
    conn.release(); // closed instead, if it is still inside the transaction
  }

  // --- the order ---------------------------------------------------------------------------------

  /** A statement of a write, as Bun's client answers it to Drizzle (awaited, or `.values()`). */
  statement(query: string, params?: unknown[]) {
    const run = (values: boolean) =>
      this.ordered((conn) => (values ? conn.unsafe(query, params).values() : conn.unsafe(query, params)));
    let rows: Promise<unknown> | undefined;
    return {
      values: () => run(true),
      then: (ok?: (value: unknown) => unknown, fail?: (error: unknown) => unknown) =>
        (rows ??= run(false)).then(ok, fail),
    };
  }

  /** Runs `work` in the batch's transaction, holding the order, after writing the events queued so far. */
  private ordered<T>(work: (conn: ReservedSQL) => Promise<T> | T): Promise<T> {
    const next = this.chain.then(async () => {
      this.sent++;
      const conn = await this.hold();
      if (this.queued.length) await this.writeQueued(conn, null, false);
      return work(conn);
    });
    this.chain = next.catch(() => {});
    return next;
  }

  /** The batch's transaction, begun holding the order (the event_ids row) on first use. */
  private async hold(): Promise<ReservedSQL> {
    if (this.conn) return this.conn;
    this.conn = await this.sql.reserve();
    // One round trip (several statements, no parameters), with a savepoint to come back to.
    await this.conn.unsafe("BEGIN; SELECT 1 FROM event_ids FOR UPDATE; SAVEPOINT batch");
    this.orderedAt = performance.now();
    return this.conn;
  }

  private async writeQueued(client: Pick<SQL, "unsafe">, notify: string | null, commitNow: boolean) {
    const list = this.queued;
    this.queued = [];
    const written = await writeEvents(client, list, notify, commitNow);
    this.lastId = written.last;
    return written;
  }
}
