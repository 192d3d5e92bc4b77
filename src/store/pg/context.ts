// What a repository works with: a connection (a write batch's transaction, or the pool for reads),
// and, inside a batch, what the batch keeps for all its writes.
import type { StoredEvent } from "../../model/event.ts";
import type { PgDb } from "./db.ts";
import type { Found, NameCache } from "./names.ts";

export type Batch = {
  /**
   * Queues an event of the batch. The batch writes its events together and numbers them then, in
   * commit order; with `now`, that happens at once (the batch holds the order from then on).
   */
  event(row: StoredEvent, now: boolean): Promise<void>;
  /** This batch takes access away (a token revoked, a session ended): every instance is told at commit. */
  accessChanged(): void;
  /** A project or channel this batch found or made: remembered once the batch commits. */
  found(f: Found): void;
};

export type Ctx = { db: PgDb; batch: Batch | null; names: NameCache };

/** The batch of a write; reads have none. */
export function batchOf(ctx: Ctx): Batch {
  if (!ctx.batch) throw new Error("a write outside a write transaction (store.tx)");
  return ctx.batch;
}
