// The read path. Reads whose cost depends on their parameters or the data (a search, a chart, the
// users list, a metric's history, a count) never run on the event loop that acknowledges writes,
// and none may hold anything for long: each goes through a gate that limits how many of each kind
// run at once, gives every read a time budget (waiting included), and stops it when the budget
// runs out or its client leaves. The gate is the same for both stores; what runs a read is each
// store's: a reader process on SQLite (store/sqlite/readers.ts), the read pool on PostgreSQL, where
// a stopped read is cancelled in the database.
import { ClientGone, QueryTimeout } from "../errors.ts";
import { clientSignal } from "../read-context.ts";
import { ACCESS, type GateStats, type ReadKind, type Repositories } from "./store.ts";

/** The repository methods that go through the gate, by kind (from ACCESS). Every other read is a point lookup. */
export const GATED_READS: { [R in keyof Repositories]?: { [M in keyof Repositories[R]]?: ReadKind } } =
  Object.fromEntries(
    Object.entries(ACCESS).map(([aggregate, methods]) => [
      aggregate,
      Object.fromEntries(Object.entries(methods).filter(([, access]) => access !== "read" && access !== "write")),
    ]),
  );

/** One read, as data: a repository method by name and its (structured-cloneable) arguments. */
export type Read = { aggregate: string; method: string; args: unknown[] };

/** Why a running read is being stopped. */
export type StopReason = "timeout" | "client";

/**
 * Runs a read. When `stop` aborts (its reason a StopReason) the runner ends the work (kills it,
 * cancels it) and settles: the slot stays taken until then, so stopped work still counts.
 */
export type Runner = (read: Read, stop: AbortSignal) => Promise<unknown>;

export type GateOptions = {
  /** Reads that run at once, of all kinds. */
  slots: number;
  /** Of one kind at once: one slow kind never takes every slot. */
  perKind: number;
  /** A read's budget, from the moment it is asked (ms). */
  budgetMs: number;
  /** Reads of one kind that may wait; more are refused at once. */
  maxWaiting?: number;
};

type Job = {
  read: Read;
  kind: ReadKind;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  stop: AbortController;
  timer: ReturnType<typeof setTimeout> | undefined;
  running: boolean;
  settled: boolean;
  signal: AbortSignal | undefined;
  onClientGone: () => void;
};

export class ReadGate {
  private readonly waiting: Job[] = [];
  private readonly runningOf = new Map<ReadKind, number>();
  private running = 0;
  private closed = false;
  readonly stats: GateStats = { running: 0, waiting: 0, timeouts: 0 };

  constructor(
    private readonly runner: Runner,
    private readonly options: GateOptions,
  ) {}

  read(kind: ReadKind, read: Read): Promise<unknown> {
    const signal = clientSignal();
    if (signal?.aborted) return Promise.reject(new ClientGone());
    if (this.closed) return Promise.reject(new ClientGone());
    const queued = this.waiting.reduce((n, job) => n + (job.kind === kind ? 1 : 0), 0);
    if (queued >= (this.options.maxWaiting ?? 256)) {
      this.stats.timeouts++;
      return Promise.reject(new QueryTimeout(this.options.budgetMs, true));
    }
    return new Promise((resolve, reject) => {
      const job: Job = {
        read,
        kind,
        resolve,
        reject,
        stop: new AbortController(),
        timer: undefined,
        running: false,
        settled: false,
        signal,
        onClientGone: () => this.leave(job, "client"),
      };
      job.timer = setTimeout(() => this.leave(job, "timeout"), this.options.budgetMs);
      signal?.addEventListener("abort", job.onClientGone, { once: true });
      this.waiting.push(job);
      this.dispatch();
    });
  }

  /** Stops everything waiting or running (the store is closing). */
  close(): void {
    this.closed = true;
    for (const job of [...this.waiting]) this.leave(job, "client");
  }

  /** The budget ran out, or the client left: the caller is answered now; running work is stopped. */
  private leave(job: Job, reason: StopReason): void {
    if (job.settled) return;
    if (reason === "timeout") this.stats.timeouts++;
    this.settle(job, reason === "timeout" ? new QueryTimeout(this.options.budgetMs, !job.running) : new ClientGone());
    if (job.running) job.stop.abort(reason);
    else this.waiting.splice(this.waiting.indexOf(job), 1);
    this.count();
  }

  private settle(job: Job, error: unknown, value?: unknown): void {
    if (job.settled) return;
    job.settled = true;
    clearTimeout(job.timer);
    job.signal?.removeEventListener("abort", job.onClientGone);
    if (error) job.reject(error);
    else job.resolve(value);
  }

  private dispatch(): void {
    for (let i = 0; i < this.waiting.length && this.running < this.options.slots; ) {
      const job = this.waiting[i]!;
      if ((this.runningOf.get(job.kind) ?? 0) >= this.options.perKind) {
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      this.start(job);
    }
    this.count();
  }

  private start(job: Job): void {
    job.running = true;
    this.running++;
    this.runningOf.set(job.kind, (this.runningOf.get(job.kind) ?? 0) + 1);
    const done = () => {
      this.running--;
      this.runningOf.set(job.kind, this.runningOf.get(job.kind)! - 1);
      this.dispatch();
    };
    this.runner(job.read, job.stop.signal).then(
      (value) => {
        this.settle(job, null, value);
        done();
      },
      (error) => {
        this.settle(job, error);
        done();
      },
    );
  }

  private count(): void {
    this.stats.running = this.running;
    this.stats.waiting = this.waiting.length;
  }
}

/** Each gated method of `read` replaced by one that asks the gate; the rest as they are. */
export function gated(read: Repositories, gate: ReadGate): Repositories {
  const out = { ...read } as unknown as Record<string, Record<string, unknown>>;
  for (const [aggregate, methods] of Object.entries(GATED_READS) as [string, Record<string, ReadKind>][]) {
    out[aggregate] = { ...(read as unknown as Record<string, Record<string, unknown>>)[aggregate] };
    for (const [method, kind] of Object.entries(methods)) {
      out[aggregate]![method] = (...args: unknown[]) => gate.read(kind, { aggregate, method, args });
    }
  }
  return out as unknown as Repositories;
}
