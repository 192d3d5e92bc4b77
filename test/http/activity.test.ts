// The activity chart's data, /p/PROJECT/activity.json: its range of days, the channels with the
// most events by name and the rest as "other", and the feed's filters (the chart counts what the
// feed shows). Runs on SQLite and, in npm test's second pass, on PostgreSQL.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Agent, post, searchIndexed, signedIn, startTestApp, type TestApp } from "../helpers.ts";

const OWNER = { username: "owner", password: "correct horse battery staple" };
const DAY = 86_400;

type Activity = {
  days: number[];
  channels: string[];
  series: number[][];
  totals: number[];
  colors: number[];
  other: { channels: number; counts: number[]; total: number } | null;
  filtered: boolean;
};

describe("activity.json", () => {
  let server: TestApp;
  let agent: Agent;
  const now = Math.floor(Date.now() / 1000);
  /** The chart's data for `params` (days and tz=0 unless given). */
  const activity = async (project: string, params: Record<string, string> = {}): Promise<Activity> => {
    const res = await agent.request(
      `/p/${project}/activity.json?${new URLSearchParams({ days: "7", tz: "0", ...params })}`,
    );
    expect(res.status).toBe(200);
    return (await res.json()) as Activity;
  };
  const log = async (body: Record<string, unknown>) => expect((await post(server, "/v1/log", body)).status).toBe(200);

  beforeAll(async () => {
    server = await startTestApp();
    await server.services.accounts.createUser(OWNER, "owner");
    agent = await signedIn(server, OWNER);

    // "busy": nine channels, c1 with 9 events today down to c9 with 1, and one 200 days ago.
    await server.services.projects.create("busy");
    for (let c = 1; c <= 9; c++)
      for (let i = 0; i < 10 - c; i++) await log({ project: "busy", channel: `c${c}`, event: "tick" });
    await log({ project: "busy", channel: "old", event: "long ago", timestamp: now - 200 * DAY });

    // "shop": events to filter: tags, users, words, days.
    await server.services.projects.create("shop");
    await log({ project: "shop", channel: "orders", event: "Order placed", tags: { plan: "pro" }, user_id: "alice" });
    await log({ project: "shop", channel: "orders", event: "Order placed", tags: { plan: "free" }, user_id: "bob" });
    await log({
      project: "shop",
      channel: "orders",
      event: "Refund issued",
      tags: { plan: "pro", region: "eu" },
      user_id: "alice",
      timestamp: now - 2 * DAY,
    });
    await log({ project: "shop", channel: "signups", event: "Signed up", tags: { plan: "pro" }, user_id: "carol" });
    await log({
      project: "shop",
      channel: "signups",
      event: "Signed up",
      tags: { plan: "free" },
      user_id: "dave",
      timestamp: now - 3 * DAY,
    });
  });
  afterAll(() => server.close());

  test("covers the chosen number of days up to today, in the viewer's time zone", async () => {
    for (const days of [7, 30, 90]) {
      const data = await activity("busy", { days: String(days) });
      expect(data.days).toHaveLength(days);
      expect(data.days.at(-1)).toBe(Math.floor(now / DAY) * DAY);
      expect(data.days[1]! - data.days[0]!).toBe(DAY);
      for (const counts of data.series) expect(counts).toHaveLength(days);
      expect(data.channels).not.toContain("old"); // its one event is 200 days ago
    }
    expect((await activity("busy", { days: "366" })).other).toMatchObject({ channels: 4, total: 7 }); // c7, c8, c9 and old
    expect((await activity("busy", { tz: "-300" })).days.at(-1)! % DAY).toBe(300 * 60);
  });

  test("bad numbers are clamped, as before: days to 1..366 (30 when missing), tz to ±14 h", async () => {
    const lengths: Record<string, number> = { abc: 30, "": 30, "0": 30, "-3": 1, "1000": 366, "2.6": 3 };
    for (const [days, length] of Object.entries(lengths))
      expect({ days, length: (await activity("busy", { days })).days.length }).toEqual({ days, length });
    const far = await activity("busy", { tz: "100000" });
    expect(far.days.at(-1)! % DAY).toBe(DAY - 14 * 3600);
  });

  test("the channels with the most events by name, most first, and the rest summed as other", async () => {
    const data = await activity("busy");
    expect(data.channels).toEqual(["c1", "c2", "c3", "c4", "c5", "c6"]);
    expect(data.totals).toEqual([9, 8, 7, 6, 5, 4]);
    expect(data.series.map((s) => s.at(-1))).toEqual([9, 8, 7, 6, 5, 4]);
    expect(data.other).toEqual({ channels: 3, counts: [0, 0, 0, 0, 0, 0, 6], total: 6 }); // c7 + c8 + c9; "old" had nothing in the range
    expect(data.filtered).toBe(false);

    // Few channels: no other.
    const shop = await activity("shop");
    expect(shop.channels).toEqual(["orders", "signups"]);
    expect(shop.other).toBeNull();

    // The channels shown never share a colour (a palette slot).
    expect(new Set(data.colors).size).toBe(6);
    expect(data.colors.every((c) => Number.isInteger(c) && c >= 0 && c < 9)).toBe(true);
  });

  test("one channel beyond the top 6 is shown under its name, not as other", async () => {
    await server.services.projects.create("seven");
    for (let c = 1; c <= 7; c++)
      for (let i = 0; i < 10 - c; i++)
        expect((await post(server, "/v1/log", { project: "seven", channel: `s${c}`, event: "e" })).status).toBe(200);
    const data = await activity("seven");
    expect(data.channels).toEqual(["s1", "s2", "s3", "s4", "s5", "s6", "s7"]);
    expect(data.other).toBeNull();
    expect(new Set(data.colors).size).toBe(7);
  });

  test("a channel keeps its colour when a newer channel with more events comes first", async () => {
    await server.services.projects.create("hues");
    for (let c = 1; c <= 6; c++)
      expect((await post(server, "/v1/log", { project: "hues", channel: `h${c}`, event: "e" })).status).toBe(200);
    const before = await activity("hues");
    const colorOf = (data: Activity) => Object.fromEntries(data.channels.map((c, i) => [c, data.colors[i]]));
    // Three newer channels take the first places; whatever slots their names want, h1-h3 keep theirs.
    for (let n = 0; n < 3; n++)
      for (let i = 0; i < 3; i++)
        expect((await post(server, "/v1/log", { project: "hues", channel: `new-${n}`, event: "e" })).status).toBe(200);
    const after = await activity("hues", { days: "7" });
    const kept = colorOf(after);
    expect(after.channels).toEqual(["new-0", "new-1", "new-2", "h1", "h2", "h3"]);
    for (const name of ["h1", "h2", "h3"]) expect(kept[name]).toBe(colorOf(before)[name]);
    expect(new Set(after.colors).size).toBe(after.channels.length);
  });

  test("counts only the events the feed's filters match: tags, user, channel, words, dates", async () => {
    const today = (data: Activity) => Object.fromEntries(data.channels.map((c, i) => [c, data.totals[i]]));
    expect(today(await activity("shop"))).toEqual({ orders: 3, signups: 2 });
    expect(today(await activity("shop", { q: "plan:pro" }))).toEqual({ orders: 2, signups: 1 });
    expect(today(await activity("shop", { q: "plan:pro region:eu" }))).toEqual({ orders: 1 });
    expect(today(await activity("shop", { user: "alice" }))).toEqual({ orders: 2 });
    expect(today(await activity("shop", { q: "plan:free", user: "dave" }))).toEqual({ signups: 1 });
    expect(today(await activity("shop", { channel: "signups" }))).toEqual({ signups: 2 });
    // The day filters are days where the viewer is; the chart keeps its own range around them.
    const day = (ago: number) => new Date((now - ago * DAY) * 1000).toISOString().slice(0, 10);
    const dated = await activity("shop", { from: day(3), to: day(2) });
    expect(today(dated)).toEqual({ orders: 1, signups: 1 });
    expect(dated.series[dated.channels.indexOf("orders")]!.at(-3)).toBe(1);
    // Words are matched as the search index reads them (it follows the writes a moment later).
    await searchIndexed(server);
    expect(today(await activity("shop", { q: "refund" }))).toEqual({ orders: 1 });
    expect(today(await activity("shop", { q: "sign plan:pro" }))).toEqual({ signups: 1 });
    for (const params of [{ q: "plan:pro" }, { user: "alice" }, { channel: "orders" }, { q: "refund" }] as Record<
      string,
      string
    >[])
      expect((await activity("shop", params)).filtered).toBe(true);
  });

  test("a filter nothing matches is an empty chart; an unknown channel or project is a 404", async () => {
    const none = await activity("shop", { q: "plan:enterprise" });
    expect(none).toMatchObject({ channels: [], series: [], totals: [], other: null, filtered: true });
    expect((await activity("shop", { user: "nobody\u0000" })).channels).toEqual([]);
    expect((await activity("shop", { from: "not a date" })).channels).toEqual(["orders", "signups"]); // an unreadable date is no filter, as in the feed
    expect((await agent.request("/p/shop/activity.json?channel=nope")).status).toBe(404);
    expect((await agent.request("/p/nope/activity.json")).status).toBe(404);
  });

  test("the project page asks for the chart with its filters, and says the chart counts matches", async () => {
    const plain = await (await agent.request("/p/shop")).text();
    expect(plain).toContain('data-url="/p/shop/activity.json"');
    expect(plain).not.toContain("match the search");
    const html = await (await agent.request("/p/shop?q=plan%3Apro&user=alice")).text();
    const url = /x-data="activityChart" data-url="([^"]+)"/.exec(html)![1]!.replace(/&amp;/g, "&");
    expect(url).toBe("/p/shop/activity.json?q=plan%3Apro&user=alice");
    expect(html).toContain("Counts only the events that match the search.");
  });
});
