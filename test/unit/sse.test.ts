// The SSE helper: framing, keep-alives, and dropping a client that stops reading.
import { describe, expect, test } from "bun:test";
import { frame, sseResponse, StreamRegistry } from "../../src/http/sse.ts";

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

  test("a client that does not read is dropped once its queue is full, and unsubscribed", async () => {
    const registry = new StreamRegistry();
    let unsubscribed = false;
    let send: ((chunk: string) => boolean) | null = null;
    sseResponse({
      registry,
      signal: new AbortController().signal,
      maxQueue: 10,
      start: (s) => {
        send = s;
        return () => {
          unsubscribed = true;
        };
      },
    });
    const results = Array.from({ length: 20 }, (_, i) => send!(`data: ${i}\n\n`));
    expect(results.filter(Boolean).length).toBeLessThan(20);
    expect(results.at(-1)).toBe(false);
    expect(unsubscribed).toBe(true);
    expect(registry.size).toBe(0);
  });

  test("closeAll ends every stream (what shutdown relies on)", async () => {
    const registry = new StreamRegistry();
    const responses = [1, 2, 3].map(() => sseResponse({ registry, signal: new AbortController().signal, start: () => () => {} }));
    expect(registry.size).toBe(3);
    registry.closeAll();
    expect(registry.size).toBe(0);
    for (const r of responses) {
      const reader = r.body!.getReader();
      let done = false;
      while (!done) done = (await reader.read()).done;
      expect(done).toBe(true);
    }
  });
});
