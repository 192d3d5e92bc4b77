// The writer on a thread of its own (SIGNALBOARD_WRITER=thread): the writes of ingest, sent by name
// with plain data, run by a worker (src/writer-worker.ts) that owns a connection and group-commits
// them as the inline writer does; everything else is written on this thread as before. It frees
// this thread of SQLite's share of each event, at the cost of passing each write and its answer
// between threads: worth it where the load has cores to spare (on 2 cores it is not; see docs/operations.md, Performance).
import { ClientGone, fromPlain, type PlainError, StorageUnavailable } from "../../errors.ts";
import { log } from "../../logger.ts";
import { startWorker } from "../../workers.ts";

export type WriteRequest = { id: number; name: string; args: unknown };
export type WriteAnswer = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: PlainError };
export type ToWriter =
  | { type: "open"; path: string; sync: "full" | "normal" }
  | { type: "writes"; writes: WriteRequest[] }
  | { type: "stop" };
export type FromWriter =
  | { type: "answers"; answers: WriteAnswer[] }
  | { type: "stopped" }
  | { type: "failed"; message: string };

type Waiting = { resolve: (value: unknown) => void; reject: (error: unknown) => void };

export class WriterThread {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, Waiting>();
  private outbox: { write: WriteRequest; signal?: AbortSignal; waiting: Waiting }[] = [];
  private scheduled = false;
  private next = 1;
  private stopped: (() => void) | null = null;
  /** Its last batch could not be committed for want of storage (as Writer.failing). */
  failing = false;

  constructor(path: string, sync: "full" | "normal") {
    this.worker = startWorker("writer-worker.ts");
    this.worker.onmessage = ({ data }: MessageEvent<FromWriter>) => this.receive(data);
    this.worker.onerror = (event) => this.fail(event.message);
    this.worker.postMessage({ type: "open", path, sync } satisfies ToWriter);
  }

  /** Sends `name` with `args` to the writer thread in this tick's batch; settles once it committed. */
  run<T>(name: string, args: unknown, signal?: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.outbox.push({
        write: { id: this.next++, name, args },
        signal,
        waiting: { resolve: resolve as (value: unknown) => void, reject },
      });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => this.send());
    });
  }

  /** Lets the writes already sent commit, then stops the thread. */
  async stop(): Promise<void> {
    this.send();
    const done = new Promise<void>((resolve) => (this.stopped = resolve));
    this.worker.postMessage({ type: "stop" } satisfies ToWriter);
    await Promise.race([done, Bun.sleep(5000)]);
    this.worker.terminate();
  }

  private send(): void {
    this.scheduled = false;
    const writes: WriteRequest[] = [];
    for (const { write, signal, waiting } of this.outbox) {
      // As the inline writer: a write whose client left before it was sent is not made.
      if (signal?.aborted) {
        waiting.reject(new ClientGone());
        continue;
      }
      this.waiting.set(write.id, waiting);
      writes.push(write);
    }
    this.outbox = [];
    if (writes.length) this.worker.postMessage({ type: "writes", writes } satisfies ToWriter);
  }

  /** The thread broke: what waits for it fails (503, nothing was stored by it) and is logged. */
  private fail(message: string): void {
    log.error("the writer thread failed", { error: message });
    this.failing = true;
    for (const waiting of this.waiting.values()) waiting.reject(new StorageUnavailable("the writer thread failed"));
    this.waiting.clear();
  }

  private receive(message: FromWriter): void {
    if (message.type === "stopped") {
      this.stopped?.();
      return;
    }
    if (message.type === "failed") {
      this.fail(message.message);
      return;
    }
    for (const answer of message.answers) {
      const waiting = this.waiting.get(answer.id);
      this.waiting.delete(answer.id);
      if (!waiting) continue;
      this.failing = !answer.ok && answer.error.kind === "unavailable";
      if (answer.ok) waiting.resolve(answer.value);
      else waiting.reject(fromPlain(answer.error));
    }
  }
}
