// A reconnecting stream asks for what it missed with Last-Event-ID. However far back it asks, the
// work and memory it costs are bounded: it is replayed in pages, only so much, and otherwise told
// with `event: reset` to re-read what it missed; an id from the future counts as "from now".
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { newEvent } from "../../src/domain/ingest.ts";
import { RESUME_WINDOW } from "../../src/http/resume.ts";
import { REPLAY_LIMIT } from "../../src/api/stream.ts";
import { heldBytes, MAX_HELD_BYTES } from "../../src/http/sse.ts";
import { call, eventually, openSse, post, signedIn, startTestServer, type TestServer } from "../helpers.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
  await server.services.projects.create("busy");
  await server.services.projects.create("quiet");
});
afterAll(() => server.close());

const auth = () => ({ Authorization: `Bearer ${server.token}` });

/** Stores `count` events straight through the writer, a batch per transaction (fast enough for 100k). */
async function bulk(project: string, count: number, description = "") {
  const store = server.store;
  const p = (await store.projects.findByName(project))!;
  if ("sql" in store) {
    // PostgreSQL: one statement per batch (a round trip per event would take half a minute), with
    // ids from the counter as the writer hands them out.
    const channel = await store.tx((tx) => tx.projects.ensureChannel(p.id, "bulk", Date.now()));
    await store.sql.begin(async (tx) => {
      const [{ last_id }] = (await tx`SELECT last_id FROM event_ids FOR UPDATE`) as [{ last_id: string }];
      const first = Number(last_id);
      await tx`INSERT INTO events (id, project_id, channel_id, event, description, ts, received_at, search_text)
               SELECT ${first} + g, ${p.id}, ${channel.id}, 'bulk ' || g, ${description}, ${Date.now()}, ${Date.now()}, 'bulk ' || g FROM generate_series(1, ${count}) g`;
      await tx`UPDATE event_ids SET last_id = ${first + count}`;
    });
    return;
  }
  for (let done = 0; done < count; done += 20_000) {
    await store.tx(async (tx) => {
      const channel = await tx.projects.ensureChannel(p.id, "bulk", Date.now());
      for (let i = done; i < Math.min(count, done + 20_000); i++)
        await tx.events.insert(
          newEvent(p, channel.id, { project, channel: "bulk", event: `bulk ${i}`, description }, Date.now()),
        );
    });
  }
}

describe("GET /v1/stream resume", () => {
  test("a Last-Event-ID newer than any event (a restored older backup) is a reset to now, then live events flow", async () => {
    const newest = await server.services.feed.newestId();
    const stream = await openSse(`${server.url}/v1/stream`, { ...auth(), "Last-Event-ID": String(newest + 1000) });
    const [reset] = await stream.waitFor(1);
    expect(reset!.event).toBe("reset");
    expect(reset!.id).toBe(String(newest));
    expect(JSON.parse(reset!.data)).toMatchObject({ reason: "unknown_id", last_event_id: newest });
    const sent = await post(server, "/v1/log", { project: "quiet", channel: "x", event: "after the reset" });
    const frames = await stream.waitFor(2);
    expect(JSON.parse(frames[1]!.data).id).toBe(sent.json.id);
    stream.close();
  });

  test(`a client more than ${RESUME_WINDOW} events behind gets a reset at once (re-read with /v1/events), then live events`, async () => {
    const before = await server.services.feed.newestId();
    await bulk("busy", RESUME_WINDOW + 10);
    const newest = await server.services.feed.newestId();
    const stream = await openSse(`${server.url}/v1/stream?project=busy`, {
      ...auth(),
      "Last-Event-ID": String(before),
    });
    const [reset] = await stream.waitFor(1); // the first frame: none of the events it missed came before it
    expect(reset!.event).toBe("reset");
    expect(reset!.id).toBe(String(newest));
    expect(JSON.parse(reset!.data)).toMatchObject({ reason: "too_far_behind", last_event_id: newest });
    expect(JSON.parse(reset!.data).message).toContain("/v1/events");
    const sent = await post(server, "/v1/log", { project: "busy", channel: "live", event: "live one" });
    const frames = await stream.waitFor(2);
    expect(JSON.parse(frames[1]!.data).id).toBe(sent.json.id);
    stream.close();
  });

  test(`a client that missed more than ${REPLAY_LIMIT} matching events gets at most that many, then a reset`, async () => {
    const before = await server.services.feed.newestId();
    await bulk("quiet", REPLAY_LIMIT + 500);
    const newest = await server.services.feed.newestId();
    const stream = await openSse(`${server.url}/v1/stream?project=quiet`, {
      ...auth(),
      "Last-Event-ID": String(before),
    });
    await eventually(() => expect(stream.frames.some((f) => f.event === "reset")).toBe(true), 20_000);
    const replayed = stream.frames.filter((f) => f.event !== "reset");
    expect(replayed.length).toBeLessThanOrEqual(REPLAY_LIMIT);
    const ids = replayed.map((f) => Number(f.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b)); // in order, no repeats
    expect(new Set(ids).size).toBe(ids.length);
    const reset = stream.frames.at(-1)!;
    expect(reset.event).toBe("reset");
    expect(reset.id).toBe(String(newest));
    expect(JSON.parse(reset.data).reason).toBe("too_many");
    stream.close();
  });

  test("a resume that fits is replayed whole, in order, once, then live events follow without a gap", async () => {
    const before = await server.services.feed.newestId();
    await bulk("quiet", 1200);
    const stream = await openSse(`${server.url}/v1/stream?project=quiet`, {
      ...auth(),
      "Last-Event-ID": String(before),
    });
    // Written while the replay runs: each must come exactly once, either replayed or live.
    const during = [];
    for (let i = 0; i < 20; i++)
      during.push((await post(server, "/v1/log", { project: "quiet", channel: "bulk", event: `during ${i}` })).json.id);
    const frames = await stream.waitFor(1220);
    const ids = frames.map((f) => Number(f.id));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(ids.slice(-20)).toEqual(during);
    stream.close();
  });

  test("replays that find little in a wide window take turns with other requests: the server keeps answering", async () => {
    await bulk("busy", 96_000);
    const from = (await server.services.feed.newestId()) - 95_000;
    const streams = await Promise.all(
      Array.from({ length: 3 }, (_, i) =>
        openSse(`${server.url}/v1/stream?project=busy&channel=nothing-${i}`, {
          ...auth(),
          "Last-Event-ID": String(from),
        }),
      ),
    );
    try {
      // The replays read 95,000 events each, finding nothing but a marker written after them all:
      // a stream has its marker once its replay is through.
      for (let i = 0; i < streams.length; i++)
        await post(server, "/v1/log", { project: "busy", channel: `nothing-${i}`, event: "marker" });
      // Meanwhile other requests are answered: between the replays' pages, while every replay is
      // still reading. A replay that held the server for its whole length let an answer through
      // only once it was done. (How long the loop is held is measured by npm run bench: resume.)
      for (let i = 0; i < 10; i++) expect((await call(server, { path: "/healthz" })).status).toBe(200);
      expect(streams.filter((s) => s.frames.length > 0)).toHaveLength(0);
      // Three replays of 95,000 events each, read at a lower priority than the server's: on a machine
      // busy with other work they take minutes (six took more than four beside two busy loops). The
      // limit is a hang's.
      for (const s of streams) expect(JSON.parse((await s.waitFor(1, 240_000))[0]!.data).event).toBe("marker");
    } finally {
      for (const s of streams) s.close();
    }
  }, 300_000);

  test("three clients that ask for the whole history and never read are dropped; the server keeps answering", async () => {
    await bulk("busy", 20_000, "x".repeat(4000)); // ~80 MB of JSON if it were all queued
    const port = Number(new URL(server.url).port);
    const before = process.memoryUsage.rss();
    const sockets = await Promise.all(
      [0, 1, 2].map(async () => {
        const socket = await Bun.connect({
          hostname: "127.0.0.1",
          port,
          socket: {
            data(s) {
              s.pause();
            },
          },
        });
        const last = (await server.services.feed.newestId()) - 20_000;
        socket.write(
          `GET /v1/stream?project=busy HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.token}\r\nLast-Event-ID: ${last}\r\n\r\n`,
        );
        return socket;
      }),
    );
    for (let i = 0; i < 10; i++) expect((await call(server, { path: "/healthz" })).status).toBe(200);
    await eventually(() => expect(server.edge.streams.size).toBe(0), 60_000);
    expect(process.memoryUsage.rss() - before).toBeLessThan(300 * 1024 * 1024);
    expect(heldBytes()).toBeLessThanOrEqual(MAX_HELD_BYTES);
    for (const s of sockets) s.end();
    // What their sockets never took is let go once they are gone.
    await eventually(() => expect(heldBytes()).toBe(0));
  });
});

describe("a dashboard's live resume", () => {
  test("with a filter that matches nothing, over a large history, it answers at once (a reload) and the server stays responsive", async () => {
    const owner = { username: "owner", password: "correct horse battery" };
    await server.services.accounts.createUser(owner, "owner");
    const cookie = (await signedIn(server, owner)).cookieHeader();
    const stream = await openSse(`${server.url}/p/busy/live?q=zzznothingmatches&last_event_id=1`, { Cookie: cookie });
    const healthy = await call(server, { path: "/healthz" });
    expect(healthy.status).toBe(200);
    await eventually(() => expect(stream.frames.some((f) => f.event === "reload")).toBe(true));
    stream.close();
  });
});
