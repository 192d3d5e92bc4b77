// Live views at a fixed cost: a burst reaches an open dashboard as the newest few events and a
// count of the rest (its pill offers them), in one flush per interval; a script's /v1/stream gets
// every event. Every event is either sent or counted, never lost without a word.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { FEED_CAP } from "../../src/web/live.ts";
import { eventually, openSse, post, signedIn, startTestServer, type TestServer } from "../helpers.ts";

let server: TestServer;
let cookie = "";
beforeAll(async () => {
  server = await startTestServer({ "live-interval": "400ms" });
  await server.services.projects.create("busy");
  await server.services.accounts.createUser({ username: "owner", password: "correct horse battery" }, "owner");
  cookie = (await signedIn(server, { username: "owner", password: "correct horse battery" })).cookieHeader();
  await post(server, "/v1/log", { project: "busy", channel: "burst", event: "warm-up" }); // the channel exists
});
afterAll(() => server.close());

const burst = (n: number, prefix: string) =>
  Promise.all(
    Array.from({ length: n }, (_, i) =>
      post(server, "/v1/log", { project: "busy", channel: "burst", event: `${prefix} ${i}` }),
    ),
  );

describe("a burst of events", () => {
  test(`reaches a dashboard as at most ${FEED_CAP} events per flush and a count of the rest`, async () => {
    const page = await openSse(`${server.url}/p/busy/live`, { Cookie: cookie });
    await eventually(() => expect(page.comments).toContain("connected"));
    const feed = () => page.frames.filter((f) => f.event === "feed");
    const skipped = () =>
      page.frames.filter((f) => f.event === "skipped").reduce((n, f) => n + JSON.parse(f.data).count, 0);
    // A marker first: once it is on the page, whatever came before it (the warm-up, committed as the
    // page joined, may come too) is counted apart from the burst.
    const marker = await post(server, "/v1/log", { project: "busy", channel: "burst", event: "marker" });
    await eventually(() => expect(feed().some((f) => Number(f.id) === marker.json.id)).toBe(true));
    const [feedBefore, before] = [feed().length, feed().length + skipped()];
    const flushes = server.services.fanout.flushes;
    const sent = await burst(150, "dash");
    expect(sent.every((r) => r.status === 200)).toBe(true);
    await eventually(() => expect(feed().length + skipped() - before).toBe(150));
    expect(skipped()).toBeGreaterThan(0);
    // However many flushes the burst took on this machine, none sent the page more than its cap.
    expect(feed().length - feedBefore).toBeLessThanOrEqual(FEED_CAP * (server.services.fanout.flushes - flushes));
    // What is sent is the newest: the last event of the burst is on the page.
    const newest = Math.max(...sent.map((r) => r.json.id));
    expect(feed().some((f) => Number(f.id) === newest)).toBe(true);
    page.close();
  });

  test("reaches a /v1/stream whole: every event, in order", async () => {
    const stream = await openSse(`${server.url}/v1/stream?project=busy`, { Authorization: `Bearer ${server.token}` });
    const sent = await burst(150, "api");
    const frames = await stream.waitFor(150);
    expect(frames.map((f) => Number(f.id))).toEqual(sent.map((r) => r.json.id).sort((a, b) => a - b));
    stream.close();
  });

  test("many open dashboards of one page share one view (one group, rendered once per flush)", async () => {
    const pages = await Promise.all(
      Array.from({ length: 20 }, () => openSse(`${server.url}/p/busy/live?q=solo`, { Cookie: cookie })),
    );
    const before = server.services.fanout.groupCount;
    expect(server.services.fanout.size).toBeGreaterThanOrEqual(20);
    await post(server, "/v1/log", { project: "busy", channel: "burst", event: "solo" });
    for (const p of pages) await eventually(() => expect(p.frames.some((f) => f.event === "feed")).toBe(true));
    expect(server.services.fanout.groupCount).toBe(before);
    for (const p of pages) p.close();
  });
});

describe("a page without a stream of its own", () => {
  test("follows new channels alone (feed=0&toasts=0): a channel made by a notify event reaches it, the toast does not", async () => {
    const sidebar = await openSse(`${server.url}/p/busy/live?feed=0&toasts=0`, { Cookie: cookie });
    const metricPage = await openSse(`${server.url}/p/busy/live?feed=0`, { Cookie: cookie });
    for (const stream of [sidebar, metricPage]) {
      expect(stream.response.status).toBe(200);
      await eventually(() => expect(stream.comments).toContain("connected"));
    }
    await post(server, "/v1/log", { project: "busy", channel: "fresh", event: "Hello", notify: true });
    await eventually(() => expect(metricPage.frames.map((f) => f.event).sort()).toEqual(["channel", "toast"]));
    // One flush carries both: by now the sidebar's stream has what it will get.
    await eventually(() => expect(sidebar.frames.map((f) => f.event)).toEqual(["channel"]));
    expect(sidebar.frames[0]!.data).toContain('href="/p/busy/c/fresh"');
    expect(sidebar.frames.map((f) => f.event)).toEqual(["channel"]);
    sidebar.close();
    metricPage.close();
  });
});
