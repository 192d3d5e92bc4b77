// Reading an OTLP export happens off the thread that serves requests: unzipping, decoding
// protobuf (or parsing JSON) and making each record's input take time in proportion to the
// body, and a body of a few megabytes can hold a quarter of a million attributes (seconds of
// work). Worker threads (otlp-worker.ts) do it: two at most, and one fewer than the cores, so a core
// is left to the thread that serves requests. That thread only reads the body and hands its bytes
// over (transferred, not copied), then gets back what is to be written: the inputs of plan.ts, as
// small as what will be stored.
import { availableParallelism } from "node:os";
import {
  assertExportSize,
  type Planned,
  type PlannedLogs,
  type PlannedMetrics,
  planLogs,
  planMetrics,
} from "../domain/otlp/plan.ts";
import { AppError, ClientGone, fromPlain, type PlainError } from "../errors.ts";
import { gunzipBody } from "../http/body.ts";
import { startWorker } from "../workers.ts";
import { readLogs, readMetrics } from "./otlp-read.ts";
import { decodeExport, type Encoding, jsonCount, protobufCount, type Signal } from "./otlp-wire.ts";

/** An export as received: its bytes as sent, and what reading them needs. */
export type ExportJob = {
  signal: Signal;
  encoding: Encoding;
  bytes: Uint8Array;
  /** Content-Encoding: gzip. */
  gzip: boolean;
  /** The body's limit, which the unzipped bytes are held to, and its setting's name. */
  limit: number;
  setting: string;
  /** A public token sends smaller exports (plan.ts, PUBLIC_EXPORT_LIMIT). */
  publicToken: boolean;
  /** When it was received: what makes a record historical. */
  now: number;
};

export type Plan<S extends Signal> = S extends "logs" ? PlannedLogs : PlannedMetrics;

/**
 * What an export will write, or the error that refuses it (a body that cannot be read, 400; one
 * that holds too many records, counted before they are decoded, 413). Runs in a worker.
 */
export function planExport(job: ExportJob): PlannedLogs | PlannedMetrics {
  const bytes = job.gzip ? gunzipBody(job.bytes, job.limit, job.setting) : job.bytes;
  if (job.encoding === "protobuf") assertExportSize(protobufCount(job.signal, bytes) ?? 0, job.signal, job.publicToken);
  const decoded = decodeExport(job.signal, job.encoding, bytes);
  if (job.encoding === "json") assertExportSize(jsonCount(job.signal, decoded), job.signal, job.publicToken);
  return job.signal === "logs" ? planLogs(readLogs(decoded), job.now) : planMetrics(readMetrics(decoded));
}

/** What the thread that serves requests sends a worker, and what it answers: the plan in parts, or an error. */
export type ToDecoder = Omit<ExportJob, "bytes"> & { bytes: ArrayBuffer };
export type FromDecoder =
  | { ok: true; part: PlannedLogs | PlannedMetrics; last: boolean }
  | { ok: false; error: PlainError };

/**
 * How many records' inputs one part of a plan holds. A plan comes back in parts, each a message
 * of its own, so the thread that serves requests copies in a few milliseconds at a time what can
 * be tens of megabytes (ten thousand events with their tags), with other requests between.
 */
const PART_SIZE = 500;

/** A plan cut into parts of at most PART_SIZE records; a resource may be cut across parts (each part names its project). */
export function partsOf<T>(plan: Planned<T>): Planned<T>[] {
  const parts: Planned<T>[] = [];
  let part: Planned<T> = [];
  let size = 0;
  for (const { projectAttribute, made } of plan) {
    let i = 0;
    do {
      const taken = made.slice(i, i + PART_SIZE - size);
      part.push({ projectAttribute, made: taken });
      size += taken.length;
      i += taken.length;
      if (size === PART_SIZE) {
        parts.push(part);
        part = [];
        size = 0;
      }
    } while (i < made.length);
  }
  if (part.length || !parts.length) parts.push(part);
  return parts;
}

/** How long a worker may read one export: far longer than the largest body takes on a slow machine. */
export const DECODE_LIMIT_MS = 30_000;
/** Exports waiting for a worker beyond this are told to retry: each holds its body in memory meanwhile. */
const QUEUE_LIMIT = 64;
/** A worker with nothing to read for this long is stopped; the next export starts one. */
const IDLE_MS = 15_000;

type Waiting = {
  job: ExportJob;
  signal?: AbortSignal;
  resolve: (plan: PlannedLogs | PlannedMetrics) => void;
  reject: (error: unknown) => void;
};

export class OtlpDecoder {
  private readonly idle: { worker: Worker; timer: ReturnType<typeof setTimeout> }[] = [];
  private readonly queue: Waiting[] = [];
  private busy = 0;

  private readonly size: number;
  private readonly queueLimit: number;
  private readonly limitMs: number;

  constructor({
    size = Math.min(2, Math.max(1, availableParallelism() - 1)),
    queueLimit = QUEUE_LIMIT,
    limitMs = DECODE_LIMIT_MS,
  } = {}) {
    [this.size, this.queueLimit, this.limitMs] = [size, queueLimit, limitMs];
  }

  /** The export's plan, read by a worker; `signal`: the request's, so an export whose client left is not read. */
  plan<S extends Signal>(job: ExportJob & { signal: S }, signal?: AbortSignal): Promise<Plan<S>> {
    if (this.queue.length >= this.queueLimit)
      throw new AppError(
        "unavailable",
        "busy",
        "Too many exports are being read at once; nothing of this one was stored. Retry in a second.",
        { retryAfter: 1 },
      );
    return new Promise((resolve, reject) => {
      this.queue.push({ job, signal, resolve: resolve as Waiting["resolve"], reject });
      this.next();
    });
  }

  private next(): void {
    while (this.queue.length && (this.idle.length || this.busy + this.idle.length < this.size)) {
      const waiting = this.queue.shift()!;
      if (waiting.signal?.aborted) {
        waiting.reject(new ClientGone());
        continue;
      }
      const spare = this.idle.pop();
      if (spare) clearTimeout(spare.timer);
      const worker = spare?.worker ?? startWorker("api/otlp-worker.ts");
      (worker as Worker & { unref(): void }).unref(); // Bun's: a worker does not keep the program running
      this.busy++;
      this.run(worker, waiting);
    }
  }

  private run(worker: Worker, { job, resolve, reject }: Waiting): void {
    const done = (kept: boolean) => {
      clearTimeout(timer);
      worker.onmessage = worker.onerror = null;
      this.busy--;
      if (kept) this.keep(worker);
      else worker.terminate();
      this.next();
    };
    const timer = setTimeout(() => {
      done(false);
      reject(
        new AppError(
          "unavailable",
          "export_timeout",
          `This export could not be read within ${this.limitMs / 1000} s; nothing of it was stored. Export smaller batches.`,
          { retryAfter: 5 },
        ),
      );
    }, this.limitMs);
    const plan: (PlannedLogs | PlannedMetrics)[number][] = [];
    worker.onmessage = ({ data }: MessageEvent<FromDecoder>) => {
      if (data.ok) for (const resource of data.part) plan.push(resource);
      if (data.ok && !data.last) return;
      done(true);
      if (data.ok) resolve(plan as PlannedLogs | PlannedMetrics);
      else reject(fromPlain(data.error));
    };
    worker.onerror = (event) => {
      done(false);
      reject(new Error(`the OTLP decoder failed: ${event.message}`));
    };
    // The bytes are handed over, not copied: a view of part of a larger buffer is copied first.
    const { bytes } = job;
    const buffer =
      bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
        ? (bytes.buffer as ArrayBuffer)
        : (bytes.slice().buffer as ArrayBuffer);
    worker.postMessage({ ...job, bytes: buffer } satisfies ToDecoder, [buffer]);
  }

  private keep(worker: Worker): void {
    const spare = {
      worker,
      timer: setTimeout(() => {
        this.idle.splice(this.idle.indexOf(spare), 1);
        worker.terminate();
      }, IDLE_MS),
    };
    spare.timer.unref();
    this.idle.push(spare);
  }
}
