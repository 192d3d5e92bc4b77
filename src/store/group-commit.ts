// Group commit, the part both dialects share: the writes submitted within one tick of the event
// loop make one batch; a write whose client left before its batch began is not made (it could not
// be acknowledged, and the client's retry would store it a second time); each caller's promise
// settles with its own outcome once the batch has committed, or failed. How a batch commits, and
// how a write that throws is undone alone, is each dialect's (store/sqlite/writer.ts,
// store/pg/writer.ts).
import { ClientGone } from "../errors.ts";
import type { WriterStats } from "./store.ts";

export type Pending<R> = {
  run: (repos: R) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  signal?: AbortSignal;
};
export type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export abstract class GroupCommit<R> {
  private queue: Pending<R>[] = [];
  private scheduled = false;
  private flushing: Promise<void> | null = null;
  readonly stats: WriterStats = { batches: 0, writes: 0, lastBatchSize: 0, queueDepth: 0 };
  /** The last batch failed for the storage's sake (unreachable, a full disk): until one commits, not ready. */
  failing = false;

  /**
   * Commits `batch` in one transaction: an outcome per write, in order. A dialect may stop before the
   * end (SQLite: its writes run on the event loop, which a long batch would hold): the writes past
   * the outcomes were not run, and go first in the next batch.
   */
  protected abstract commit(batch: Pending<R>[]): Promise<Outcome[]>;

  /** Runs `write` in the next batch; settles after commit. With `signal` (the request's), a write whose client left before the batch began is not made. */
  submit<T>(write: (repos: R) => Promise<T>, signal?: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ run: write, resolve: resolve as (value: unknown) => void, reject, signal });
      this.stats.queueDepth = this.queue.length;
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  /** Commits whatever is queued now (after the batch under way, if any). Also called at shutdown. */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    this.scheduled = false;
    const batch: Pending<R>[] = [];
    for (const pending of this.queue) {
      if (pending.signal?.aborted) pending.reject(new ClientGone());
      else batch.push(pending);
    }
    this.queue = [];
    this.stats.queueDepth = 0;
    if (!batch.length) return;
    this.flushing = this.commit(batch).then((outcomes) => {
      const done = outcomes.length;
      this.stats.batches++;
      this.stats.writes += done;
      this.stats.lastBatchSize = done;
      batch.forEach((pending, i) => {
        const outcome = outcomes[i];
        if (!outcome) return;
        if (outcome.ok) pending.resolve(outcome.value);
        else pending.reject(outcome.error);
      });
      // Not unshift(...rest): spread as arguments, a million writes overflow the stack.
      if (done < batch.length) this.queue = batch.slice(done).concat(this.queue);
    });
    try {
      await this.flushing;
    } finally {
      this.flushing = null;
      // Writes submitted while this batch ran go next, without waiting for another tick.
      if (this.queue.length && !this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    }
  }
}
