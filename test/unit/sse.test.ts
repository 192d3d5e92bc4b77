// The SSE helper: framing, keep-alives, closing; and, over a real socket, dropping a client that
// stops reading.
import { describe, expect, test } from "bun:test";
import { frame, sseResponse, StreamRegistry } from "../../src/http/sse.ts";
import { Fanout, type View } from "../../src/live/fanout.ts";
import { Hub, type LiveMessage } from "../../src/live/hub.ts";
import { TestClock } from "../clock.ts";
import { eventually, startTestServer } from "../helpers.ts";
import { resume } from "../../src/http/resume.ts";
import type { FeedService } from "../../src/domain/feed.ts";
import type { EventFilter } from "../../src/model/filter.ts";

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** A view that sends each event as a frame with its id and name as data. */
const eventsView = (key: string): View<LiveMessage[]> => ({
  key,
  start: () => [],
  keep: (pending, m) => m.type === "event" && pending.push(m) > 0,
  frames: (pending) =>
    pending.flatMap((m) =>
      m.type === "event" ? [{ frame: frame({ id: m.event.id, data: m.event.name }), id: m.event.id }] : [],
    ),
});
/** Publishes event `id`, named e{id}, as a committed write would. */
const publisher = (hub: Hub) => (id: number) =>
  hub.publish({ type: "event", event: { id, name: `e${id}` } } as unknown as LiveMessage);

describe("sse", () => {
  test("a multi-line payload becomes one data: line per line", () => {
    expect(text(frame({ id: 7, event: "feed", data: "<li>\n  hi\r\n</li>" }))).toBe(
      "id: 7\nevent: feed\ndata: <li>\ndata:   hi\ndata: </li>\n\n",
    );
  });

  test("sends a retry hint at once and keep-alive comments while idle", async () => {
    const registry = new StreamRegistry();
    const abort = new AbortController();
    const fanout = new Fanout(new Hub(), 0);
    const response = sseResponse({ registry, fanout, signal: abort.signal, keepAliveMs: 30, start: () => {} });
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
    const fanout = new Fanout(new Hub(), 0);
    const readers = [1, 2, 3].map(() =>
      sseResponse({ registry, fanout, signal: new AbortController().signal, start: () => {} }).body!.getReader(),
    );
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
      sseResponse({
        registry,
        fanout: new Fanout(new Hub(), 0),
        signal: new AbortController().signal,
        start: () => {},
      });
    } catch (error) {
      refused = error;
    }
    expect(refused).toMatchObject({ kind: "unavailable", code: "shutting_down", details: { retryAfter: 2 } });
  });

  test("streams showing the same view share one group, each gets every frame once, in order, rendered once per event", async () => {
    const hub = new Hub();
    const fanout = new Fanout(hub, 0);
    const registry = new StreamRegistry();
    let renders = 0;
    const view: View<LiveMessage[]> = {
      key: "feed 1",
      start: () => [],
      keep: (pending, m) => m.type === "event" && pending.push(m) > 0,
      frames: (pending, render) =>
        pending.flatMap((m) =>
          m.type === "event"
            ? [
                {
                  frame: render(m, "feed", () => (renders++, frame({ id: m.event.id, data: m.event.name }))),
                  id: m.event.id,
                },
              ]
            : [],
        ),
    };
    const publish = (id: number) =>
      hub.publish({ type: "event", event: { id, name: `e${id}` } } as unknown as LiveMessage);
    const open = (start: Parameters<typeof sseResponse>[0]["start"]) => {
      const abort = new AbortController();
      return {
        abort,
        received: "",
        reader: sseResponse({ registry, fanout, signal: abort.signal, start }).body!.getReader(),
      };
    };
    const ids = async (s: ReturnType<typeof open>, until: number) => {
      while (!s.received.includes(`id: ${until}\n`)) s.received += text((await s.reader.read()).value!);
      return [...s.received.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    };

    const a = open(({ follow }) => follow(view)(0));
    const b = open(({ follow }) => follow(view)(0));
    // A resumed stream: its backlog already sent events 1 and 2, so live copies of them are skipped.
    const c = open(({ send, follow }) => {
      send(frame({ id: 1, data: "e1" }));
      send(frame({ id: 2, data: "e2" }));
      follow(view)(2);
    });
    for (const s of [a, b, c]) s.received += text((await s.reader.read()).value!); // started
    expect(fanout.groupCount).toBe(1);
    expect(fanout.size).toBe(3);
    for (const id of [1, 2, 3]) publish(id);
    publish(4);
    expect(await ids(a, 4)).toEqual([1, 2, 3, 4]);
    expect(await ids(b, 4)).toEqual([1, 2, 3, 4]);
    expect(await ids(c, 4)).toEqual([1, 2, 3, 4]);
    expect(renders).toBe(4); // once per event, not once per stream

    a.abort.abort();
    b.abort.abort();
    expect(fanout.groupCount).toBe(1);
    c.abort.abort();
    expect(fanout.groupCount).toBe(0); // the last stream out ends the group
    expect(registry.size).toBe(0);
  });

  test("a stream joins its view before reading its backlog: what commits meanwhile is kept, then sent once, in order, after the backlog", async () => {
    const hub = new Hub();
    const fanout = new Fanout(hub, 0);
    const registry = new StreamRegistry();
    const view = eventsView("held");
    const publish = publisher(hub);
    const reader = sseResponse({
      registry,
      fanout,
      signal: new AbortController().signal,
      async start({ send, follow }) {
        const live = follow(view);
        // While the backlog (events up to 3) is read, 3 and 4 commit and are published.
        publish(3);
        publish(4);
        await Bun.sleep(20);
        for (const id of [1, 2, 3]) send(frame({ id, data: `e${id}` }));
        live(3);
        publish(5);
      },
    }).body!.getReader();
    let received = "";
    while (!received.includes("id: 5\n")) received += new TextDecoder().decode((await reader.read()).value!);
    expect([...received.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))).toEqual([1, 2, 3, 4, 5]);
    await reader.cancel();
  });

  test("a fresh stream (no Last-Event-ID) sends every event that commits after it joined, however late the store answers", async () => {
    const hub = new Hub();
    const fanout = new Fanout(hub, 0);
    const view = eventsView("fresh");
    const publish = publisher(hub);
    // Event 8 commits once the stream has joined: while a busy store is still answering for the newest id, if it is asked.
    let committed = false;
    const commit = () => {
      if (!committed) publish(8);
      committed = true;
    };
    const feed = {
      async newestId() {
        commit();
        await Bun.sleep(20);
        return 8;
      },
    } as unknown as FeedService;
    const reader = sseResponse({
      registry: new StreamRegistry(),
      fanout,
      signal: new AbortController().signal,
      start: (stream) =>
        resume(stream, {
          feed,
          view,
          filter: {} as EventFilter,
          lastSeen: null,
          limit: 100,
          encode: (e) => frame({ id: e.id, data: e.name }),
          reset: (id) => frame({ id, event: "reload", data: "" }),
        }),
    }).body!.getReader();
    let received = text((await reader.read()).value!); // started
    while (fanout.size === 0) await Bun.sleep(1);
    commit();
    setTimeout(() => publish(9), 50);
    while (!received.includes("id: 9\n")) received += text((await reader.read()).value!);
    expect([...received.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))).toEqual([8, 9]);
    await reader.cancel();
  });

  test("a flush at most once per interval: a burst is written to a stream in one chunk; a message after a quiet moment goes out at once", async () => {
    const hub = new Hub();
    const clock = new TestClock(0, { stopped: true });
    const fanout = new Fanout(hub, 200, clock);
    const registry = new StreamRegistry();
    const view: View<LiveMessage[]> = {
      key: "all",
      start: () => [],
      keep: (pending, m) => pending.push(m) > 0,
      frames: (pending) =>
        pending.map((m) => ({ frame: frame({ data: (m as { event: { name: string } }).event.name }), id: 0 })),
    };
    const reader = sseResponse({
      registry,
      fanout,
      signal: new AbortController().signal,
      start: ({ follow }) => follow(view)(0),
    }).body!.getReader();
    await reader.read(); // started
    const publish = (name: string) => hub.publish({ type: "event", event: { id: 0, name } } as unknown as LiveMessage);
    publish("first");
    await clock.advance(0); // not held for the interval: due at once
    expect(text((await reader.read()).value!)).toBe("data: first\n\n");
    for (let i = 0; i < 50; i++) publish(`burst ${i}`);
    await clock.advance(199);
    expect(fanout.flushes).toBe(1); // held until the interval is over...
    await clock.advance(1);
    const burst = text((await reader.read()).value!); // ...then one write with all of them
    expect(burst.match(/^data: /gm)!.length).toBe(50);
    expect(fanout.flushes).toBe(2);
    fanout.close();
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
      socket.write(
        `GET /v1/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.token}\r\nAccept: text/event-stream\r\n\r\n`,
      );
      const before = server.services.fanout.size;
      await eventually(() => expect(server.services.fanout.size).toBe(before + 1));
      const description = "x".repeat(8000);
      // Fifty at a time, as many clients would send them: a commit each would take minutes on a busy machine.
      for (let i = 0; i < 4000 && server.services.fanout.size > before; i += 50) {
        await Promise.all(
          Array.from({ length: 50 }, (_, n) =>
            server.services.ingest.logEvent(
              { kind: "full", tokenId: null },
              { project: "default", channel: "flood", event: `e${i + n}`, description },
            ),
          ),
        );
      }
      expect(server.services.fanout.size).toBe(before);
      expect(server.edge.streams.size).toBe(0);
      socket.end();
    } finally {
      await server.close();
    }
  });
});
