// The SSE helper: framing, keep-alives, closing; and, over a real socket, dropping a client that
// stops reading.
import { describe, expect, test } from "bun:test";
import { frame, sseResponse, StreamRegistry } from "../../src/http/sse.ts";
import { startTestServer } from "../helpers.ts";

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

describe("sse", () => {
  test("a multi-line payload becomes one data: line per line", () => {
    expect(text(frame({ id: 7, event: "feed", data: "<li>\n  hi\r\n</li>" }))).toBe("id: 7\nevent: feed\ndata: <li>\ndata:   hi\ndata: </li>\n\n");
  });

  test("sends a retry hint at once and keep-alive comments while idle", async () => {
    const registry = new StreamRegistry();
    const abort = new AbortController();
    const response = sseResponse({ registry, signal: abort.signal, keepAliveMs: 30, start: () => () => {} });
    const reader = response.body!.getReader();
    let received = "";
    const deadline = Date.now() + 2000;
    while (!received.includes(": keep-alive") && Date.now() < deadline) received += text((await reader.read()).value!);
    expect(received).toStartWith("retry: ");
    expect(received).toContain(": keep-alive");
    expect(registry.size).toBe(1);
    abort.abort();
    expect(registry.size).toBe(0);
  });

  test("closeAll ends every stream (what shutdown relies on)", async () => {
    const registry = new StreamRegistry();
    const readers = [1, 2, 3].map(() => sseResponse({ registry, signal: new AbortController().signal, start: () => () => {} }).body!.getReader());
    for (const r of readers) await r.read(); // the stream starts when it is read, as a server's response is
    expect(registry.size).toBe(3);
    registry.closeAll();
    expect(registry.size).toBe(0);
    for (const r of readers) {
      let done = false;
      while (!done) done = (await r.read()).done;
      expect(done).toBe(true);
    }
  });

  test("once closeAll ran, a new stream is refused with 503 shutting_down (a connection kept alive during shutdown)", () => {
    const registry = new StreamRegistry();
    registry.closeAll();
    let refused: unknown;
    try {
      sseResponse({ registry, signal: new AbortController().signal, start: () => () => {} });
    } catch (error) {
      refused = error;
    }
    expect(refused).toMatchObject({ status: 503, code: "shutting_down", headers: { "Retry-After": "2" } });
  });

  test("a client that stops reading is dropped once its backlog is full, and unsubscribed", async () => {
    const server = await startTestServer();
    try {
      const port = Number(new URL(server.url).port);
      let received = 0;
      const socket = await Bun.connect({
        hostname: "127.0.0.1",
        port,
        socket: {
          data(s) {
            received++;
            if (received === 1) s.pause(); // read the headers, then stop reading
          },
        },
      });
      socket.write(`GET /v1/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.token}\r\nAccept: text/event-stream\r\n\r\n`);
      const before = server.deps.hub.size;
      for (let i = 0; i < 100 && server.deps.hub.size === before; i++) await Bun.sleep(20);
      expect(server.deps.hub.size).toBe(before + 1);
      const description = "x".repeat(8000);
      for (let i = 0; i < 4000 && server.deps.hub.size > before; i++) {
        await server.deps.ingest.logEvent({ kind: "full", tokenId: null }, { project: "default", channel: "flood", event: `e${i}`, description });
      }
      expect(server.deps.hub.size).toBe(before);
      expect(server.deps.streams.size).toBe(0);
      socket.end();
    } finally {
      await server.close();
    }
  }, 60_000);
});
