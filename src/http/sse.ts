// Server-Sent Events. A stream answers with its headers at once, sends a keep-alive comment every
// 15 s (proxies and Bun close idle connections), and has a bounded queue: a client that stops
// reading is dropped and reconnects with Last-Event-ID instead of growing our memory.
// Every open stream is in a registry, so shutdown can close them (server.stop() waits for them).

import { ShuttingDown } from "./errors.ts";

export type SseMessage = { id?: number | string; event?: string; data: string };
export type Send = (chunk: Uint8Array | string) => boolean;

const encoder = new TextEncoder();
const HEADERS = {
  "Content-Type": "text/event-stream; charset=utf-8",
  "Cache-Control": "no-store",
  Connection: "keep-alive",
  "X-Accel-Buffering": "no",
};

/** One SSE frame. A multi-line payload becomes several `data:` lines, as the format requires. */
export function frame(message: SseMessage): Uint8Array {
  let text = "";
  if (message.id !== undefined) text += `id: ${message.id}\n`;
  if (message.event) text += `event: ${message.event}\n`;
  for (const line of message.data.split(/\r\n|\r|\n/)) text += `data: ${line}\n`;
  return encoder.encode(text + "\n");
}

export class StreamRegistry {
  private readonly open = new Set<() => void>();
  opened = 0;
  /** Set by closeAll: a stream asked for on a connection that was already open is refused. */
  closing = false;

  add(close: () => void): void {
    this.open.add(close);
    this.opened++;
  }

  delete(close: () => void): void {
    this.open.delete(close);
  }

  closeAll(): void {
    this.closing = true;
    for (const close of [...this.open]) close();
  }

  get size(): number {
    return this.open.size;
  }
}

export type SseOptions = {
  registry: StreamRegistry;
  signal: AbortSignal;
  /** Writes any backlog and subscribes; returns what undoes the subscription. */
  start: (send: Send) => () => void;
  maxQueue?: number;
  keepAliveMs?: number;
  retryMs?: number;
  headers?: Record<string, string>;
};

// Frames sent to a stream within one tick are written together, once, at the end of it: a burst of
// events (a group commit publishes a whole batch at once) costs each stream one socket write, not
// one per event. With a thousand dashboards open, that is the difference that matters.
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

export function sseResponse({ registry, signal, start, maxQueue = 1000, keepAliveMs = 15_000, retryMs = 2000, headers = {} }: SseOptions): Response {
  if (registry.closing) throw new ShuttingDown();
  let close = () => {};
  // A "direct" stream writes straight to the socket's buffer, which Bun sends at the end of the
  // tick: no per-chunk queue and promise. One event to 10,000 streams costs 27 ms of JavaScript
  // this way (150 ms with flush() after each write).
  const body = new ReadableStream<Uint8Array>({
    type: "direct",
    async pull(controller: ReadableStreamDirectController) {
      let closed = false;
      let backlog = 0; // writes accepted while the client was not reading
      let unsubscribe: (() => void) | null = null;
      let finished: () => void = () => {};
      const done = new Promise<void>((resolve) => (finished = resolve));
      const timer = setInterval(() => send(": keep-alive\n\n"), keepAliveMs);
      close = () => {
        if (closed) return;
        closed = true;
        clearInterval(timer);
        unsubscribe?.();
        registry.delete(close);
        dirty.delete(flush);
        signal.removeEventListener("abort", close);
        finished();
      };
      let pending: Uint8Array[] = [];
      const flush = () => {
        if (closed || !pending.length) return;
        const chunk = pending.length === 1 ? pending[0]! : Buffer.concat(pending);
        pending = [];
        const written = controller.write(chunk);
        if (written === 0) {
          close(); // the client is gone
          return;
        }
        if (typeof written !== "number") {
          backlog++;
          written.then(
            () => backlog--,
            () => close(),
          );
        }
      };
      const send: Send = (chunk) => {
        if (closed) return false;
        if (backlog > maxQueue) {
          close(); // the client fell too far behind: it reconnects and resumes from its last id
          return false;
        }
        pending.push(typeof chunk === "string" ? encoder.encode(chunk) : chunk);
        flushLater(flush);
        return true;
      };
      registry.add(close);
      signal.addEventListener("abort", close);
      send(`retry: ${retryMs}\n: connected\n\n`);
      try {
        unsubscribe = start(send);
      } catch (error) {
        close();
        throw error;
      }
      if (closed) unsubscribe();
      await done;
      controller.close();
    },
    cancel() {
      close();
    },
  } as unknown as UnderlyingDefaultSource<Uint8Array>);
  return new Response(body, { headers: { ...HEADERS, ...headers } });
}
