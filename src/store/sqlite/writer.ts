// Group commit. Every write submitted within one tick of the event loop runs in one SQLite
// transaction; each caller's promise settles only after that transaction committed, so an
// acknowledged write is on disk, and one fsync is shared by the whole batch.
//
// A write that throws (an unknown project, a metric that cannot be incremented) is undone alone and
// rejects alone; the rest of the batch still commits. Batches first run without savepoints (they
// cost more than a small write); only when a write throws is the batch rolled back and run again
// with one SAVEPOINT per write. A write is an async function of the repositories, but SQLite
// answers them synchronously underneath: a write awaits only promises that are already settled, so
// a batch runs from BEGIN to COMMIT within one turn of the event loop, and nothing else writes on
// this connection meanwhile (reads go through another one). Running a write again after a rollback
// does the same thing.
//
// Another process (a management command: an import, a restore) may hold the database's write lock
// for a while. SQLite's own wait for it (busy_timeout) sleeps on the calling thread, which here is
// the event loop: everything else (/healthz, reads, live views) would stop until the lock came free.
// So this connection does not wait inside SQLite: a BEGIN that finds the lock taken is tried again
// after a pause that leaves the loop free, for as long as SQLite would have waited.
import type { Database } from "bun:sqlite";
import { AppError, Conflict, StorageUnavailable } from "../../errors.ts";
import { GroupCommit, type Outcome, type Pending } from "../group-commit.ts";
import type { TxHooks } from "./summaries.ts";

const NO_HOOKS: TxHooks = { begin() {}, mark: () => 0, undo() {}, beforeCommit() {}, committed() {} };

/** How long a batch waits for another process's write lock before it fails as busy (as long as busy_timeout waited). */
export const LOCK_WAIT_MS = 5000;
/** The longest pause between two tries of the lock: short, since the other process may hold it again at once. */
const MAX_PAUSE_MS = 4;
/**
 * How much CPU a batch's writes may take before it commits what it ran and leaves the rest to the
 * next batch, a turn of the event loop later: they run on the loop, which also answers requests.
 * Counted in CPU time, not on the clock, so a machine busy with other work makes no batch smaller.
 */
export const BATCH_BUDGET_MS = 20;

/** CPU time this process has used (ms). */
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

export class Writer<R> extends GroupCommit<R> {
  private readonly stmt;
  /** Batches that found the write lock taken, and the pauses they waited (for the tests). */
  readonly lockWaits = { batches: 0, tries: 0 };

  /** `hooks`: what else the transaction keeps (the summaries of the events it wrote: store/sqlite/summaries.ts). */
  constructor(
    private readonly sqlite: Database,
    private readonly repos: R,
    private readonly hooks: TxHooks = NO_HOOKS,
    private readonly budgetMs = BATCH_BUDGET_MS,
  ) {
    super();
    sqlite.exec("PRAGMA busy_timeout = 0"); // waiting for the lock is begin()'s, off the loop
    this.stmt = {
      begin: sqlite.prepare("BEGIN IMMEDIATE"),
      commit: sqlite.prepare("COMMIT"),
      rollback: sqlite.prepare("ROLLBACK"),
      savepoint: sqlite.prepare("SAVEPOINT w"),
      release: sqlite.prepare("RELEASE w"),
      rollbackTo: sqlite.prepare("ROLLBACK TO w"),
    };
  }

  protected async commit(batch: Pending<R>[]): Promise<Outcome[]> {
    try {
      if (!this.tryBegin()) await this.waitForLock();
      this.hooks.begin();
      // The clock first (cheap): the loop cannot have used more CPU than the time that passed.
      const [clockStart, cpuStart] = [performance.now(), cpuMs()];
      const spent = () => performance.now() - clockStart >= this.budgetMs && cpuMs() - cpuStart >= this.budgetMs;
      let outcomes = await this.runAll(batch, spent);
      if (!outcomes) {
        this.stmt.rollback.run();
        if (!this.tryBegin()) await this.waitForLock(); // another process may have taken the lock in between
        this.hooks.begin();
        outcomes = [];
        for (const pending of batch) {
          outcomes.push(await this.runOne(pending));
          if (spent()) break;
        }
      }
      this.hooks.beforeCommit();
      this.stmt.commit.run();
      this.hooks.committed();
      this.failing = false;
      return outcomes;
    } catch (error) {
      this.failing = true;
      if (this.sqlite.inTransaction) {
        try {
          this.sqlite.exec("ROLLBACK");
        } catch {
          // SQLite may already have rolled back on its own (SQLITE_FULL does); nothing to undo.
        }
      }
      const failure = toStorageError(error);
      return batch.map(() => ({ ok: false, error: failure }));
    }
  }

  /** BEGIN IMMEDIATE: false when another connection holds the write lock. */
  private tryBegin(): boolean {
    try {
      this.stmt.begin.run();
      return true;
    } catch (error) {
      if (isBusy(error)) return false;
      throw error;
    }
  }

  /** Tries the lock again after pauses that let the event loop run, until LOCK_WAIT_MS; then fails as busy. */
  private async waitForLock(): Promise<void> {
    this.lockWaits.batches++;
    const deadline = performance.now() + LOCK_WAIT_MS;
    for (let pause = 1; ; pause = Math.min(pause * 2, MAX_PAUSE_MS)) {
      this.lockWaits.tries++;
      await Bun.sleep(pause);
      if (this.tryBegin()) return;
      if (performance.now() >= deadline) throw new StorageUnavailable("the database is busy");
    }
  }

  /**
   * The fast path: the writes in one go, until the batch's budget is `spent` (the rest waits for the
   * next batch); null as soon as one throws (the caller rolls back).
   */
  private async runAll(batch: Pending<R>[], spent: () => boolean): Promise<Outcome[] | null> {
    const outcomes: Outcome[] = [];
    for (const pending of batch) {
      try {
        outcomes.push({ ok: true, value: await pending.run(this.repos) });
      } catch (error) {
        if (!(error instanceof AppError) && isStorageFailure(error)) throw error; // the whole batch fails
        return null;
      }
      if (spent()) break;
    }
    return outcomes;
  }

  private async runOne(pending: Pending<R>): Promise<Outcome> {
    this.stmt.savepoint.run();
    const mark = this.hooks.mark();
    try {
      const value = await pending.run(this.repos);
      this.stmt.release.run();
      return { ok: true, value };
    } catch (error) {
      if (!(error instanceof AppError) && isStorageFailure(error)) throw error; // the whole batch fails
      this.stmt.rollbackTo.run();
      this.stmt.release.run();
      this.hooks.undo(mark);
      return { ok: false, error: raced(error) };
    }
  }
}

/**
 * A write that refers to a row deleted while it was on its way (a project, a channel, a user
 * removed a moment before) is refused like any other conflict, not reported as a failure of ours.
 */
function raced(error: unknown): unknown {
  const code = (error as { code?: unknown })?.code;
  if (code === "SQLITE_CONSTRAINT_FOREIGNKEY")
    return new Conflict(
      "Something this refers to was deleted a moment ago (a project, a channel or a member). Reload and try again.",
    );
  return error;
}

const STORAGE_CODES = /^SQLITE_(FULL|IOERR|READONLY|BUSY|LOCKED|CANTOPEN|CORRUPT|NOTADB|PROTOCOL|NOMEM)/;

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return typeof code === "string" && code.startsWith("SQLITE_BUSY");
}

export function isStorageFailure(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return typeof code === "string" && STORAGE_CODES.test(code);
}

export function toStorageError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const code = (error as { code?: unknown })?.code;
  if (code === "SQLITE_FULL") return new StorageUnavailable("the disk or database is full");
  if (typeof code === "string" && /^SQLITE_(READONLY|CANTOPEN)/.test(code))
    return new StorageUnavailable("the database is not writable");
  if (typeof code === "string" && /^SQLITE_(BUSY|LOCKED)/.test(code))
    return new StorageUnavailable("the database is busy");
  return new StorageUnavailable("the database could not commit");
}
