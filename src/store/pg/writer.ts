// Group commit on PostgreSQL. The writes submitted within one tick of this instance run in one
// transaction, and every write transaction, from every instance, first locks the event_ids row:
// write batches run one at a time across the whole cluster, in the order they take that lock. So
// event ids are handed out in commit order (a stream resuming after id N never misses one that
// committed late), two batches can never deadlock, and a read-then-write inside a batch (the first
// owner, the VAPID keys) is as safe as on SQLite. Reads do not wait for it.
//
// As on SQLite, a write that throws is undone alone: the batch goes back to its start (a savepoint
// taken right after the lock) and runs again with a savepoint per write. At commit the batch
// moves the counter, tells every instance about its events (NOTIFY with the last id) and, when it
// took access away, bumps the access version (NOTIFY too).
import type { SQL, TransactionSQL } from "bun";
import { drizzle } from "drizzle-orm/bun-sql";
import { GroupCommit, type Outcome, type Pending as GroupPending } from "../group-commit.ts";
import type { Repositories } from "../store.ts";
import type { Batch } from "./context.ts";
import { isStorageFailure, type PgDb, raced, toStorageError } from "./db.ts";
import type { Found, NameCache } from "./names.ts";
import * as schema from "./schema.ts";

export const EVENTS_CHANNEL = "signalboard_events";
export const ACCESS_CHANNEL = "signalboard_access";

type Pending = GroupPending<Repositories>;
type Tx = TransactionSQL;

/** What a committed batch changed, for this instance to know at once. */
export type Committed = { lastEventId: number | null; accessVersion: string | null };

export class PgWriter extends GroupCommit<Repositories> {
  constructor(
    private readonly sql: SQL,
    private readonly repositories: (db: PgDb, batch: Batch) => Repositories,
    private readonly onCommit: (committed: Committed) => void,
    private readonly names: NameCache,
  ) {
    super();
  }

  protected async commit(batch: Pending[]): Promise<Outcome[]> {
    let committed: Committed = { lastEventId: null, accessVersion: null };
    const stamp = this.names.stamp;
    const found: Found[] = [];
    try {
      const outcomes = await this.sql.begin(async (tx) => {
        const [{ last_id }] = (await tx`SELECT last_id FROM event_ids FOR UPDATE`) as [{ last_id: string | number }];
        const first = Number(last_id);
        const state = { next: first, accessChanged: false };
        const repos = this.repositories(drizzle({ client: tx, schema }) as unknown as PgDb, {
          nextEventId: () => ++state.next,
          accessChanged: () => void (state.accessChanged = true),
          found: (f) => void found.push(f),
        });
        await tx`SAVEPOINT batch`;
        let outcomes = await runAll(batch, repos);
        if (!outcomes) {
          // One write threw: back to the start, then each write on its own.
          await tx`ROLLBACK TO SAVEPOINT batch`;
          state.next = first;
          state.accessChanged = false;
          found.length = 0;
          outcomes = [];
          for (const pending of batch) outcomes.push(await runOne(tx, pending, repos, found));
        }
        if (state.next > first) {
          await tx`UPDATE event_ids SET last_id = ${state.next}`;
          await tx`SELECT pg_notify(${EVENTS_CHANNEL}, ${String(state.next)})`;
          committed.lastEventId = state.next;
        }
        if (state.accessChanged) {
          const [{ value }] = (await tx`UPDATE meta SET value = (value::bigint + 1)::text WHERE key = 'access_version' RETURNING value`) as [{ value: string }];
          await tx`SELECT pg_notify(${ACCESS_CHANNEL}, ${value})`;
          committed.accessVersion = value;
        }
        return outcomes;
      });
      this.failing = false;
      this.onCommit(committed);
      // Names found or made by a batch that renamed nothing are good for every instance from now on.
      if (committed.accessVersion === null) this.names.remember(found, stamp);
      return outcomes;
    } catch (error) {
      committed = { lastEventId: null, accessVersion: null };
      this.failing = isStorageFailure(error);
      const failure = toStorageError(error);
      return batch.map(() => ({ ok: false, error: failure }));
    }
  }
}

/** Every write in one go; null as soon as one throws for its own reasons (the caller starts over). */
async function runAll(batch: Pending[], repos: Repositories): Promise<Outcome[] | null> {
  const outcomes: Outcome[] = [];
  for (const pending of batch) {
    try {
      outcomes.push({ ok: true, value: await pending.run(repos) });
    } catch (error) {
      if (isStorageFailure(error)) throw error; // the whole batch fails
      return null;
    }
  }
  return outcomes;
}

async function runOne(tx: Tx, pending: Pending, repos: Repositories, found: Found[]): Promise<Outcome> {
  const mark = found.length;
  await tx`SAVEPOINT w`;
  try {
    const value = await pending.run(repos);
    await tx`RELEASE SAVEPOINT w`;
    return { ok: true, value };
  } catch (error) {
    if (isStorageFailure(error)) throw error;
    await tx`ROLLBACK TO SAVEPOINT w`;
    await tx`RELEASE SAVEPOINT w`;
    found.length = mark; // what it made is undone
    return { ok: false, error: raced(error) };
  }
}
