// Server-Sent Events. A stream answers with its headers at once, sends a keep-alive comment every
// 15 s (proxies and Bun close idle connections), and holds at most a few MiB for a client that
// does not read: past that it is dropped, and reconnects with Last-Event-ID instead of growing our
// memory. Every open stream is in a registry, so shutdown can close them (server.stop() waits for
// them), and so can losing the right to read: a revoked token, a removed member, a signed-out or
// expired session (see StreamRegistry.sweep). Live frames come from the fan-out (live/fanout.ts),
// which writes one chunk per view per flush to each stream following it.

import { type Clock, systemClock } from "../clock.ts";
import type { Fanout, Framed, Member, View } from "../live/fanout.ts";
import type { Credential } from "../model/credential.ts";
import { ShuttingDown } from "../errors.ts";

export type SseMessage = { id?: number | string; event?: string; data: string };
export type Send = (chunk: Uint8Array | string) => boolean;

/** What a stream's start() gets: its own sends (backlog, snapshots) and the views it follows. */
export type Stream = {
  send: Send;
  /** Resolves once what was sent has reached the socket; false if the stream closed meanwhile. */
  drained(): Promise<boolean>;
  /**
   * Joins `view` now and keeps its live frames until the returned function is called with the id
   * of the last event the stream was sent: then frames of events up to it are dropped (the backlog
   * had them) and the rest go out, in order, followed by whatever comes next. Joined before the
   * backlog is read, the stream cannot miss an event that commits while it reads.
   */
  follow(view: View): (after: number) => void;
};

const encoder = new TextEncoder();
const HEADERS = {
  "Content-Type": "text/event-stream; charset=utf-8",
  "Cache-Control": "no-store",
  Connection: "keep-alive",
  "X-Accel-Buffering": "no",
};

/** A client may fall this far behind (bytes accepted but not yet taken by its socket) before it is dropped. */
export const MAX_UNSENT_BYTES = 4 * 1024 * 1024;
/**
 * All streams together may hold this much that their sockets have not taken. Bun keeps what a
 * client has not read in memory, and a connection whose client stops reading cannot be cut from
 * here (its bytes stay until the client reads or goes away): so the total is capped where it
 * grows, at the write. A stream that is behind and would pass it is dropped instead of written to.
 */
export const MAX_HELD_BYTES = 64 * 1024 * 1024;
let held = 0;

/** Bytes written to streams that their sockets have not taken yet, all streams together. */
export const heldBytes = () => held;
/** A client that takes nothing of a replay page for this long is dropped (it resumes when it reconnects). */
export const DRAIN_TIMEOUT_MS = 10_000;

/** One SSE frame. A multi-line payload becomes several `data:` lines, as the format requires. */
export function frame(message: SseMessage): Uint8Array {
  let text = "";
  if (message.id !== undefined) text += `id: ${message.id}\n`;
  if (message.event) text += `event: ${message.event}\n`;
  for (const line of message.data.split(/\r\n|\r|\n/)) text += `data: ${line}\n`;
  return encoder.encode(text + "\n");
}

type Entry = { close: () => void; credential: Credential | undefined };

export class StreamRegistry {
  private readonly open = new Map<() => void, Entry>();
  private watching: ReturnType<typeof setInterval> | null = null;
  private seen = "";
  opened = 0;
  /** Set by closeAll: a stream asked for on a connection that was already open is refused. */
  closing = false;

  /** `clock`: when a credential has expired (the system's unless given). */
  constructor(private readonly clock: Clock = systemClock) {}

  add(close: () => void, credential?: Credential): void {
    this.open.set(close, { close, credential });
    this.opened++;
  }

  delete(close: () => void): void {
    this.open.delete(close);
  }

  closeAll(): void {
    this.closing = true;
    this.unwatch();
    for (const { close } of [...this.open.values()]) close();
  }

  /**
   * Ends streams whose credential expired, and, when `version` changed (a token or session may
   * have been revoked, here or by another process), those whose credential no longer holds. Each
   * distinct credential is checked once, however many streams it holds open.
   */
  async sweep(version: string, now = this.clock.now()): Promise<void> {
    const changed = version !== this.seen;
    this.seen = version;
    const verdicts = new Map<string, Promise<boolean>>();
    // A check that could not be made (the database did not answer) keeps the stream, and is made again next sweep.
    const unsure = () => {
      this.seen = "";
      return true;
    };
    await Promise.all(
      [...this.open.values()].map(async ({ close, credential }) => {
        if (!credential) return;
        if (credential.expiresAt !== undefined && credential.expiresAt <= now) return close();
        if (!changed) return;
        let ok = verdicts.get(credential.key);
        if (ok === undefined) verdicts.set(credential.key, (ok = credential.valid().catch(unsure)));
        if (!(await ok)) close();
      }),
    );
  }

  /** Sweeps every `everyMs` (access ends within that time of being revoked); one sweep at a time. */
  watch(version: () => string, everyMs = 250): void {
    this.unwatch();
    this.seen = version();
    let sweeping = false;
    this.watching = setInterval(() => {
      if (sweeping) return;
      sweeping = true;
      this.sweep(version()).finally(() => (sweeping = false));
    }, everyMs);
  }

  unwatch(): void {
    if (this.watching) clearInterval(this.watching);
    this.watching = null;
  }

  get size(): number {
    return this.open.size;
  }
}

export type SseOptions = {
  registry: StreamRegistry;
  fanout: Fanout;
  signal: AbortSignal;
  /** Writes any backlog and follows its views (left when the stream closes). */
  start: (stream: Stream) => void | Promise<void>;
  credential?: Credential;
  maxUnsentBytes?: number;
  maxHeldBytes?: number;
  drainTimeoutMs?: number;
  keepAliveMs?: number;
  retryMs?: number;
  headers?: Record<string, string>;
};

// Frames sent within one tick are written together, once, at the end of it: a burst of events (a
// group commit publishes a whole batch at once) costs each stream one socket write, not one per event.
const dirty = new Set<() => void>();
let flushScheduled = false;

function flushLater(flush: () => void): void {
  dirty.add(flush);
  if (flushScheduled) return;
  flushScheduled = true;
  setImmediate(() => {
    flushScheduled = false;
    const all = [...dirty];
    dirty.clear();
    for (const f of all) f();
  });
}

export function sseResponse({
  registry,
  fanout,
  signal,
  start,
  credential,
  maxUnsentBytes = MAX_UNSENT_BYTES,
  maxHeldBytes = MAX_HELD_BYTES,
  drainTimeoutMs = DRAIN_TIMEOUT_MS,
  keepAliveMs = 15_000,
  retryMs = 2000,
  headers = {},
}: SseOptions): Response {
  if (registry.closing) throw new ShuttingDown();
  let close = () => {};
  // A "direct" stream writes straight to the socket's buffer, which Bun sends at the end of the
  // tick: no per-chunk queue and promise. One event to 10,000 streams costs 27 ms of JavaScript
  // this way (150 ms with flush() after each write). What the socket cannot take yet, Bun keeps
  // in memory, without limit: `unsent` counts it, and a stream that is behind is dropped rather
  // than written to past maxUnsentBytes, or past maxHeldBytes for all streams together.
  const body = new ReadableStream<Uint8Array>({
    type: "direct",
    async pull(controller: ReadableStreamDirectController) {
      let closed = false;
      let unsent = 0;
      let waiting: Promise<unknown> | null = null; // the latest write the socket has not taken yet
      const follows: (() => void)[] = [];
      let finished: () => void = () => {};
      const done = new Promise<void>((resolve) => (finished = resolve));
      const timer = setInterval(() => send(": keep-alive\n\n"), keepAliveMs);
      close = () => {
        if (closed) return;
        closed = true;
        clearInterval(timer);
        for (const leave of follows) leave();
        registry.delete(close);
        dirty.delete(flush);
        signal.removeEventListener("abort", close);
        finished();
      };
      let pending: Uint8Array[] = [];
      /** Writes what this stream was sent, then `shared` (a view's chunk), in one write. */
      const flush = (shared?: Uint8Array) => {
        if (closed) return;
        if (shared) pending.push(shared);
        if (!pending.length) return;
        const chunk = pending.length === 1 ? pending[0]! : Buffer.concat(pending);
        pending = [];
        const size = chunk.byteLength;
        if (unsent > 0 && (unsent + size > maxUnsentBytes || held + size > maxHeldBytes)) {
          close(); // behind already, and this would hold too much: dropped (it reconnects and resumes)
          return;
        }
        const written = controller.write(chunk);
        if (written === 0) {
          close(); // the client is gone
          return;
        }
        if (typeof written !== "number") {
          unsent += size;
          held += size;
          // Counted until the socket takes it (or the client goes away), even after the stream closed.
          const release = () => {
            unsent -= size;
            held -= size;
          };
          waiting = written.then(release, () => {
            release();
            close();
          });
        }
      };
      const send: Send = (chunk) => {
        if (closed) return false;
        pending.push(typeof chunk === "string" ? encoder.encode(chunk) : chunk);
        flushLater(flush);
        return true;
      };
      const drained = async (): Promise<boolean> => {
        flush();
        const deadline = performance.now() + drainTimeoutMs;
        while (!closed && waiting) {
          const current = waiting;
          const left = deadline - performance.now();
          let timer: ReturnType<typeof setTimeout> | undefined;
          const timedOut = await Promise.race([
            current.then(() => false),
            done.then(() => false),
            new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), Math.max(0, left)))),
          ]);
          clearTimeout(timer);
          if (timedOut) close();
          else if (waiting === current) waiting = null;
        }
        return !closed;
      };
      const follow = (view: View) => {
        let after = 0;
        let held: [Uint8Array, Framed[]][] | null = [];
        let heldBytes = 0;
        const deliver = (chunk: Uint8Array, frames: Framed[]) => {
          if (after > 0) {
            // Right after a resume, a frame may carry an event the backlog already sent.
            const fresh = frames.filter((f) => f.id === 0 || f.id > after);
            if (frames.some((f) => f.id > after)) after = 0; // ids only grow from here
            if (!fresh.length) return;
            if (fresh.length < frames.length) chunk = Buffer.concat(fresh.map((f) => f.frame));
          }
          flush(chunk);
        };
        const member: Member = {
          deliver(chunk: Uint8Array, frames: Framed[]) {
            if (closed) return;
            if (!held) return deliver(chunk, frames);
            // Kept while the backlog is read; a backlog that takes so long that this grows past what a stream may hold ends the stream (it reconnects and resumes).
            heldBytes += chunk.byteLength;
            if (heldBytes > maxUnsentBytes) return close();
            held.push([chunk, frames]);
          },
        };
        if (!closed) follows.push(fanout.join(view, member));
        return (sent: number) => {
          after = sent;
          const kept = held ?? [];
          held = null;
          if (!closed) for (const [chunk, frames] of kept) deliver(chunk, frames);
        };
      };
      registry.add(close, credential);
      signal.addEventListener("abort", close);
      send(`retry: ${retryMs}\n: connected\n\n`);
      try {
        await start({ send, drained, follow });
      } catch (error) {
        close();
        throw error;
      }
      await done;
      controller.close();
    },
    cancel() {
      close();
    },
  } as unknown as UnderlyingDefaultSource<Uint8Array>);
  return new Response(body, { headers: { ...HEADERS, ...headers } });
}
