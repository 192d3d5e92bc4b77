// The SQLite server's reader processes: the runner of the read gate (store/reads.ts). Each is the
// server's own program (reader-process.ts) with a read-only connection to the database, running
// one read at a time; the gate never asks for more reads at once than there are readers. A read
// whose budget runs out is stopped by killing its process (SQLite offers no way to interrupt a
// query from another thread here), and a new reader takes its place. Readers run at a lower CPU
// priority than the server, so on a busy machine writes are acknowledged first.
import type { Subprocess } from "bun";
import { setPriority } from "node:os";
import { fromPlain, StorageUnavailable } from "../../errors.ts";
import { log } from "../../logger.ts";
import { readerCommand } from "../../workers.ts";
import type { Read, Runner, StopReason } from "../reads.ts";
import type { ReaderAnswer, ReaderRequest } from "./reader-process.ts";

/**
 * How long a reader may take to start before it is taken for hung and killed (the next read starts
 * another): a read waits for it only as long as its own budget, and a machine busy with other work
 * can take tens of seconds to start a process at the readers' lower priority.
 */
const START_TIMEOUT_MS = 60_000;

type Reader = {
  process: Subprocess;
  ready: Promise<void>;
  busy: boolean;
  dead: boolean;
  pending: { id: number; resolve: (v: unknown) => void; reject: (e: unknown) => void } | null;
};

export class ReaderPool {
  private readers: Reader[] = [];
  private nextId = 1;
  private closed = false;
  /** Readers started, and reads stopped by killing their reader. */
  started = 0;
  stopped = 0;
  /** How long a reader may take to start (START_TIMEOUT_MS, or the reads' budget when longer). */
  startTimeoutMs: number;

  constructor(
    private readonly databasePath: string,
    private readonly size: number,
    /** The reads' budget, waiting included (SIGNALBOARD_QUERY_TIMEOUT). */
    budgetMs = 0,
  ) {
    this.startTimeoutMs = Math.max(START_TIMEOUT_MS, budgetMs);
  }

  /**
   * Starts one reader ahead of the first read (the first search does not wait for a process to
   * start), once the server has had `afterMs` to start up without sharing the CPU with it.
   */
  warm(afterMs = 0): void {
    const timer = setTimeout(() => {
      if (!this.closed && !this.readers.length) this.spawn();
    }, afterMs);
    timer.unref();
  }

  readonly run: Runner = async (read: Read, stop: AbortSignal) => {
    if (this.closed) throw new StorageUnavailable("the server is stopping", { read: true });
    const reader = this.idle() ?? this.spawn();
    reader.busy = true;
    let abandon!: (error: unknown) => void;
    const abandoned = new Promise<never>((_, reject) => (abandon = reject));
    abandoned.catch(() => {});
    const onStop = () => {
      const why = (stop.reason as StopReason) === "timeout" ? "its time budget ran out" : "its client left";
      if (!reader.pending) {
        // Its reader is still starting: it is left to the next read. Killing it would start another
        // process for each read of a queue whose budgets run out one after another, only to kill it.
        abandon(new StorageUnavailable(`the read was stopped before it began: ${why}`));
        return;
      }
      this.stopped++;
      this.kill(reader, why);
    };
    stop.addEventListener("abort", onStop, { once: true });
    try {
      await Promise.race([reader.ready, abandoned]);
      if (reader.dead) throw new StorageUnavailable("a reader process ended", { read: true });
      if (stop.aborted) throw new StorageUnavailable("the read was stopped before it began");
      return await new Promise((resolve, reject) => {
        const id = this.nextId++;
        reader.pending = { id, resolve, reject };
        reader.process.send({ id, ...read } satisfies ReaderRequest);
      });
    } finally {
      stop.removeEventListener("abort", onStop);
      reader.pending = null;
      reader.busy = false;
    }
  };

  async close(): Promise<void> {
    this.closed = true;
    const exits = this.readers.map((r) => r.process.exited);
    for (const reader of this.readers) this.kill(reader, "the store is closing");
    await Promise.all(exits);
  }

  private idle(): Reader | undefined {
    return this.readers.find((r) => !r.busy && !r.dead);
  }

  private spawn(): Reader {
    this.readers = this.readers.filter((r) => !r.dead);
    if (this.readers.length >= this.size)
      throw new Error("every reader is busy: the gate asked for more reads than there are readers");
    let ready!: () => void;
    let failed!: (error: unknown) => void;
    const reader: Reader = {
      process: null as unknown as Subprocess,
      ready: new Promise((resolve, reject) => ((ready = resolve), (failed = reject))),
      busy: false,
      dead: false,
      pending: null,
    };
    reader.ready.catch(() => {}); // a reader that never starts fails the read that waits for it, not the process
    // A reader that never says it is ready is killed, not kept: its failed start would fail every
    // read given to it afterwards.
    const timer = setTimeout(() => {
      failed(new StorageUnavailable("a reader process did not start", { read: true }));
      log.warn("a reader process did not start in time; another starts at the next read", {
        ms: this.startTimeoutMs,
      });
      this.kill(reader, "it did not start");
    }, this.startTimeoutMs);
    reader.process = Bun.spawn(readerCommand(this.databasePath), {
      stdio: ["ignore", "inherit", "inherit"],
      serialization: "advanced",
      ipc: (message: ReaderAnswer) => {
        if ("ready" in message) {
          clearTimeout(timer);
          ready();
          return;
        }
        const pending = reader.pending;
        if (!pending || pending.id !== message.id) return;
        if (message.ok) pending.resolve(message.value);
        else pending.reject(fromPlain(message.error));
      },
      onExit: (_p, code, signal) => {
        clearTimeout(timer);
        reader.dead = true;
        const error = new StorageUnavailable("a reader process ended", { read: true });
        failed(error);
        reader.pending?.reject(error);
        if (!this.closed && signal !== "SIGKILL")
          log.warn("a reader process ended; another starts at the next read", { code, signal });
      },
    });
    try {
      setPriority(reader.process.pid, 10);
    } catch {
      // not allowed here (some containers): readers share the CPU evenly with the server
    }
    this.started++;
    this.readers.push(reader);
    return reader;
  }

  private kill(reader: Reader, why: string): void {
    if (reader.dead) return;
    reader.dead = true;
    reader.pending?.reject(new StorageUnavailable(`the read was stopped: ${why}`, { read: true }));
    reader.process.kill("SIGKILL");
  }
}
