// GET /v1/analytics/series and /funnel, held to counts the test works out itself from the events it
// posted: a fixed seed of events over ten days around the night Paris moves its clocks forward
// (2026-03-29), with users, channels, tags and some events without a user. Buckets are checked
// through Intl (each starts at the zone's midnight, Monday or first of the month, with no day left
// out), funnels by trying every chain of events. GET /v1/analytics/retention is held to cohorts
// worked out by hand from a few users' days (with filters, in a zone, by week, and periods not
// begun yet). Every refusal is a 400 naming its parameter, and a question past its budget is the
// 503 query_timeout of the read path.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { call, eventually, post, searchIndexed, type TestApp, startTestApp } from "../helpers.ts";

const TZ = "Europe/Paris";
const FROM = Date.UTC(2026, 2, 25, 6) / 1000; // a morning in Paris: the first day is a part of one
const TO = Date.UTC(2026, 3, 3, 18) / 1000;
const CHANNELS = ["web", "app", "api"];
const NAMES = ["Page viewed", "Signed up", "Checkout started", "Paid"];
const PLANS = ["free", "pro", "team", "enterprise", "edu", "trial"];

type Posted = {
  channel: string;
  event: string;
  user_id?: string;
  tags: Record<string, string | number>;
  description: string;
  timestamp: number;
};

/** A small PRNG, so the data is the same on every run. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function makeEvents(): Posted[] {
  const r = random(19);
  const pick = <T>(list: T[]) => list[Math.floor(r() * list.length)]!;
  const events: Posted[] = [];
  for (let i = 0; i < 500; i++) {
    const user = r() < 0.12 ? undefined : `u${Math.floor(r() * 24)}`;
    const tags: Record<string, string | number> = {};
    if (r() < 0.85) tags.plan = PLANS[Math.min(PLANS.length - 1, Math.floor(r() * r() * PLANS.length))]!;
    if (r() < 0.5) tags.seats = Math.floor(r() * 3);
    // Two days before FROM to two after TO, so the edges are crossed; whole seconds, so some times repeat.
    const timestamp = FROM - 2 * 86_400 + Math.floor(r() * (TO - FROM + 4 * 86_400));
    events.push({
      channel: pick(CHANNELS),
      event: NAMES[Math.min(3, Math.floor(r() * r() * 5))]!,
      user_id: user,
      tags,
      description: r() < 0.3 ? "paid with kettle points" : "plain",
      timestamp,
    });
  }
  // At the edges: one at from (counted), one at to (not).
  events.push({ channel: "web", event: "Page viewed", user_id: "u1", tags: {}, description: "edge", timestamp: FROM });
  events.push({ channel: "web", event: "Page viewed", user_id: "u1", tags: {}, description: "edge", timestamp: TO });
  return events;
}

const EVENTS = makeEvents();
const inRange = (e: Posted) => e.timestamp >= FROM && e.timestamp < TO;
const dateIn = (tz: string, seconds: number) =>
  new Intl.DateTimeFormat("en-CA", { timeZone: tz, year: "numeric", month: "2-digit", day: "2-digit" }).format(
    seconds * 1000,
  );
const clockIn = (tz: string, seconds: number) =>
  new Intl.DateTimeFormat("en-GB", {
    timeZone: tz,
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hourCycle: "h23",
  }).format(seconds * 1000);
const weekdayIn = (tz: string, seconds: number) =>
  new Intl.DateTimeFormat("en-US", { timeZone: tz, weekday: "short" }).format(seconds * 1000);

/** The local days from FROM's to the last second's, in order. */
function localDays(tz: string): string[] {
  const days: string[] = [];
  for (let t = FROM; t < TO + 86_400; t += 3600) {
    const d = dateIn(tz, Math.min(t, TO - 1));
    if (days.at(-1) !== d) days.push(d);
  }
  return days;
}

type Line = { group: string | null; other: boolean; total: number; points: { t: number; value: number }[] };

/** Day points checked against the local calendar: one per day, each at its midnight; values by local day. */
function byLocalDay(line: Line, tz: string): Map<string, number> {
  expect(line.points.map((p) => dateIn(tz, p.t))).toEqual(localDays(tz));
  for (const p of line.points) expect(clockIn(tz, p.t)).toBe("00:00:00");
  return new Map(line.points.map((p) => [dateIn(tz, p.t), p.value]));
}

function countByDay(events: Posted[], tz: string, users = false): Map<string, number> {
  const sets = new Map<string, Set<string>>();
  for (const d of localDays(tz)) sets.set(d, new Set());
  events.filter(inRange).forEach((e, i) => {
    if (users && !e.user_id) return;
    sets.get(dateIn(tz, e.timestamp))!.add(users ? e.user_id! : String(i));
  });
  return new Map([...sets].map(([d, s]) => [d, s.size]));
}

let server: TestApp;
const series = async (query: string) => {
  const res = await call(server, { path: `/v1/analytics/series?project=shop&from=${FROM}&to=${TO}&${query}` });
  expect({ status: res.status, body: res.status === 200 ? null : res.json }).toEqual({ status: 200, body: null });
  return res.json as { interval: string; from: number; to: number; series: Line[] };
};

beforeAll(async () => {
  server = await startTestApp();
  await server.services.projects.create("shop");
  for (let i = 0; i < EVENTS.length; i += 25) {
    await Promise.all(
      EVENTS.slice(i, i + 25).map(async (e) =>
        expect((await post(server, "/v1/log", { project: "shop", ...e })).status).toBe(200),
      ),
    );
  }
  // SQLite's search index is written a moment after the commit.
  const kettles = EVENTS.filter((e) => e.description.includes("kettle")).length;
  await eventually(async () =>
    expect(
      (
        await call(server, {
          path: `/v1/analytics/series?project=shop&q=kettle&from=${FROM - 3 * 86_400}&to=${TO + 3 * 86_400}&interval=month`,
        })
      ).json.series[0].total,
    ).toBe(kettles),
  );
});
afterAll(() => server.close());

describe("a series", () => {
  test("by day in a time zone: a point for every local day, zeros too, the day the clocks change 23 hours long", async () => {
    const answer = await series(`tz=${TZ}`);
    expect(answer).toMatchObject({ interval: "day", from: FROM, to: TO });
    expect(answer.series).toHaveLength(1);
    const [line] = answer.series;
    expect(byLocalDay(line!, TZ)).toEqual(countByDay(EVENTS, TZ));
    expect(line!.total).toBe(EVENTS.filter(inRange).length);
    const starts = line!.points.map((p) => p.t);
    const lengths = starts.slice(1).map((t, i) => t - starts[i]!);
    expect(lengths.filter((l) => l !== 86_400)).toEqual([23 * 3600]); // 2026-03-29
    // In UTC the same events fall into other days.
    expect(byLocalDay((await series("")).series[0]!, "UTC")).toEqual(countByDay(EVENTS, "UTC"));
  });

  test("with the search's filters: channel, event, tag, user, words", async () => {
    const cases: [string, (e: Posted) => boolean][] = [
      ["channel=app", (e) => e.channel === "app"],
      ["event=Signed%20up", (e) => e.event === "Signed up"],
      ["tag=plan:pro", (e) => e.tags.plan === "pro"],
      [
        "tag=plan:pro&tag=seats:1&channel=web",
        (e) => e.tags.plan === "pro" && e.tags.seats === 1 && e.channel === "web",
      ],
      ["user_id=u3", (e) => e.user_id === "u3"],
      ["q=kettle", (e) => e.description.includes("kettle")],
      ["q=kettle&event=Paid", (e) => e.description.includes("kettle") && e.event === "Paid"],
    ];
    for (const [query, match] of cases) {
      const [line] = (await series(`tz=${TZ}&${query}`)).series;
      expect({ query, days: byLocalDay(line!, TZ) }).toEqual({ query, days: countByDay(EVENTS.filter(match), TZ) });
    }
  });

  test("of distinct users: events without a user do not count, a user counts once a day and once in the total", async () => {
    const [line] = (await series(`tz=${TZ}&measure=users`)).series;
    expect(byLocalDay(line!, TZ)).toEqual(countByDay(EVENTS, TZ, true));
    expect(line!.total).toBe(new Set(EVENTS.filter((e) => inRange(e) && e.user_id).map((e) => e.user_id)).size);
    // More buckets than a bigint has bits: counted another way, to the same answers.
    const [hourly] = (await series(`tz=${TZ}&measure=users&interval=hour`)).series;
    expect(hourly!.points.length).toBeGreaterThan(64);
    const usersIn = (from: number, to: number) =>
      new Set(
        EVENTS.filter((e) => inRange(e) && e.user_id && e.timestamp >= from && e.timestamp < to).map((e) => e.user_id),
      ).size;
    expect(hourly!.points.map((p) => p.value)).toEqual(hourly!.points.map((p) => usersIn(p.t, p.t + 3600)));
    expect(hourly!.total).toBe(line!.total);
  });

  test("split by a tag: the groups with the most, most first, then the rest as other (events without the tag are a group, null)", async () => {
    for (const [measure, limit] of [
      ["events", 3],
      ["users", 2],
      ["events", 20],
    ] as const) {
      const answer = await series(`tz=${TZ}&group_by=tag:plan&limit=${limit}&measure=${measure}`);
      expect({
        measure,
        limit,
        lines: answer.series.map((l) => ({ group: l.group, other: l.other, total: l.total, days: byLocalDay(l, TZ) })),
      }).toEqual({
        measure,
        limit,
        lines: expectedGroups(
          (e) => (e.tags.plan === undefined ? null : String(e.tags.plan)),
          limit,
          measure === "users",
        ),
      });
    }
  });

  test("split by channel and by event name", async () => {
    for (const [groupBy, of] of [
      ["channel", (e: Posted) => e.channel],
      ["event", (e: Posted) => e.event],
    ] as const) {
      for (const limit of [2, 10]) {
        const answer = await series(`tz=${TZ}&group_by=${groupBy}&limit=${limit}`);
        expect(
          answer.series.map((l) => ({ group: l.group, other: l.other, total: l.total, days: byLocalDay(l, TZ) })),
        ).toEqual(expectedGroups(of, limit, false));
      }
    }
    // Under a filter the events are read and grouped another way: the same answers.
    const filtered = await series(`tz=${TZ}&group_by=channel&tag=plan:pro`);
    expect(
      filtered.series.map((l) => ({ group: l.group, other: l.other, total: l.total, days: byLocalDay(l, TZ) })),
    ).toEqual(
      expectedGroups(
        (e) => e.channel,
        10,
        false,
        (e) => e.tags.plan === "pro",
      ),
    );
  });

  test("by hour across the change: real hours, each starting on the hour; by week from Mondays; by month from the first", async () => {
    const day = Date.UTC(2026, 2, 28, 23) / 1000; // 2026-03-29 00:00 in Paris
    const hours = await call(server, {
      path: `/v1/analytics/series?project=shop&from=${day}&to=${day + 23 * 3600}&interval=hour&tz=${TZ}`,
    });
    const points = hours.json.series[0].points as { t: number; value: number }[];
    expect(points.map((p) => p.t)).toEqual(Array.from({ length: 23 }, (_, h) => day + h * 3600));
    expect(points.map((p) => clockIn(TZ, p.t).slice(3))).toEqual(Array(23).fill("00:00"));
    expect(points.map((p) => p.value)).toEqual(
      points.map((p) => EVENTS.filter((e) => e.timestamp >= p.t && e.timestamp < p.t + 3600).length),
    );

    const weeks = (await series(`tz=${TZ}&interval=week`)).series[0]!.points;
    for (const p of weeks) expect([weekdayIn(TZ, p.t), clockIn(TZ, p.t)]).toEqual(["Mon", "00:00:00"]);
    const weekOf = (s: number) => weeks.findLast((p) => p.t <= s)!.t;
    expect(weeks.map((p) => p.value)).toEqual(
      weeks.map((p) => EVENTS.filter((e) => inRange(e) && weekOf(e.timestamp) === p.t).length),
    );

    const months = (await series(`tz=America/New_York&interval=month`)).series[0]!.points;
    expect(months.map((p) => [dateIn("America/New_York", p.t), clockIn("America/New_York", p.t)])).toEqual([
      ["2026-03-01", "00:00:00"],
      ["2026-04-01", "00:00:00"],
    ]);
    expect(months.map((p) => p.value)).toEqual(
      ["2026-03", "2026-04"].map(
        (m) => EVENTS.filter((e) => inRange(e) && dateIn("America/New_York", e.timestamp).startsWith(m)).length,
      ),
    );
  });
});

/** Groups by `of` (null: no value), most first, ties with no value first then by name; past `limit`, one line "other". */
function expectedGroups(
  of: (e: Posted) => string | null,
  limit: number,
  users: boolean,
  only: (e: Posted) => boolean = () => true,
) {
  const events = EVENTS.filter((e) => inRange(e) && only(e) && (!users || e.user_id));
  const groups = new Map<string | null, Posted[]>();
  for (const e of events) groups.set(of(e), [...(groups.get(of(e)) ?? []), e]);
  const total = (list: Posted[]) => (users ? new Set(list.map((e) => e.user_id)).size : list.length);
  const sorted = [...groups].sort(
    ([ga, a], [gb, b]) => total(b) - total(a) || (ga === null ? -1 : gb === null ? 1 : ga < gb ? -1 : 1),
  );
  const lines = sorted
    .slice(0, limit)
    .map(([group, list]) => ({ group, other: false, total: total(list), days: countByDay(list, TZ, users) }));
  const rest = sorted.slice(limit).flatMap(([, list]) => list);
  if (rest.length) lines.push({ group: "other", other: true, total: total(rest), days: countByDay(rest, TZ, users) });
  return lines;
}

type Chain = Map<Posted, number>;

/**
 * Every chain of events by the rule, tried one by one: for each step, each event that can be there
 * and the latest start of a chain that gets there through it.
 */
function bruteFunnel(events: Posted[], steps: string[], window: number, from = FROM, to = TO): Map<string, Chain[]> {
  const users = new Map<string, Chain[]>();
  for (const user of new Set(events.map((e) => e.user_id).filter((u): u is string => u !== undefined))) {
    const mine = events.filter((e) => e.user_id === user);
    const levels: Chain[] = steps.map(() => new Map());
    const extend = (i: number, after: number, start: number, used: Set<Posted>) => {
      if (i === steps.length) return;
      for (const e of mine) {
        if (e.event !== steps[i] || used.has(e) || e.timestamp < after) continue;
        if (i === 0 ? e.timestamp < from || e.timestamp >= to : e.timestamp - start > window) continue;
        const s = i === 0 ? e.timestamp : start;
        levels[i]!.set(e, Math.max(levels[i]!.get(e) ?? -Infinity, s));
        extend(i + 1, e.timestamp, s, new Set([...used, e]));
      }
    };
    extend(0, -Infinity, 0, new Set());
    users.set(
      user,
      levels.filter((l) => l.size > 0),
    );
  }
  return users;
}

function median(values: number[]): number | null {
  if (!values.length) return null;
  const v = [...values].sort((a, b) => a - b);
  return v.length % 2 ? v[v.length >> 1]! : (v[v.length / 2 - 1]! + v[v.length / 2]!) / 2;
}

/** The API's answer, worked out from the chains. */
function expectedFunnel(chains: Map<string, Chain[]>, steps: string[]) {
  const reached = steps.map((_, i) => [...chains.values()].filter((levels) => levels.length > i).length);
  return steps.map((event, i) => {
    // The chain that reached the step with the latest start, at its earliest event there, and its step before.
    const deltas = [...chains.values()]
      .filter((levels) => i > 0 && levels.length > i)
      .map((levels) => {
        const s = Math.max(...levels[i]!.values());
        const at = (level: Chain) =>
          Math.min(...[...level].filter(([, start]) => start === s).map(([e]) => e.timestamp));
        return at(levels[i]!) - at(levels[i - 1]!);
      });
    const before = i ? reached[i - 1]! : reached[0]!;
    return {
      event,
      users: reached[i]!,
      conversion: reached[0] ? reached[i]! / reached[0] : 0,
      conversion_from_previous: before ? reached[i]! / before : 0,
      dropped: i ? before - reached[i]! : 0,
      median_seconds: median(deltas),
    };
  });
}

describe("a funnel", () => {
  const funnel = async (steps: string[], extra = "", project = "shop") => {
    const res = await call(server, {
      path: `/v1/analytics/funnel?project=${project}&from=${FROM}&to=${TO}&${steps.map((s) => `step=${encodeURIComponent(s)}`).join("&")}${extra}`,
    });
    expect(res.status).toBe(200);
    return res.json;
  };

  test("counts the users who reach each step by the rule: in order, the first in range, the last within the window", async () => {
    for (const [steps, window] of [
      [["Page viewed", "Signed up", "Paid"], 604_800],
      [["Page viewed", "Signed up", "Checkout started", "Paid"], 86_400],
      [["Signed up", "Page viewed"], 3 * 3600],
      [["Signed up", "Page viewed", "Page viewed"], 86_400],
    ] as const) {
      const answer = await funnel([...steps], window === 604_800 ? "" : `&window=${window}`);
      expect(answer).toMatchObject({ from: FROM, to: TO, window });
      expect(answer.steps).toEqual(expectedFunnel(bruteFunnel(EVENTS, [...steps], window), [...steps]));
      expect(answer.steps[1].users).toBeGreaterThan(0);
    }
  });

  test("lists the users who dropped at a step, by id, a page at a time", async () => {
    const steps = ["Page viewed", "Signed up", "Paid"];
    const chains = bruteFunnel(EVENTS, steps, 7200);
    for (const at of [2, 3]) {
      const expected = [...chains]
        .filter(([, levels]) => levels.length === at - 1)
        .map(([user]) => user)
        .sort();
      expect(expected.length).toBeGreaterThan(2);
      const seen: string[] = [];
      let cursor = "";
      for (let page = 0; page < 20; page++) {
        const res = await call(server, {
          path: `/v1/analytics/funnel/dropped?project=shop&from=${FROM}&to=${TO}&step=Page%20viewed&step=Signed%20up&step=Paid&window=7200&at=${at}&limit=2${cursor}`,
        });
        expect(res.status).toBe(200);
        seen.push(...res.json.users);
        if (!res.json.next_cursor) break;
        cursor = `&cursor=${res.json.next_cursor}`;
      }
      expect(seen).toEqual(expected);
    }
  });

  test("equal times, one event per step, users only, the window's edge", async () => {
    await server.services.projects.create("tie");
    const T = FROM + 86_400;
    const log = async (event: string, timestamp: number, user_id?: string) =>
      expect(
        (
          await post(server, "/v1/log", {
            project: "tie",
            channel: "c",
            event,
            timestamp,
            ...(user_id ? { user_id } : {}),
          })
        ).status,
      ).toBe(200);
    await log("B", T, "same-time"); // stored first, at the same second as the A it follows
    await log("A", T, "same-time");
    await log("B", T - 1, "before");
    await log("A", T, "before");
    await log("A", T, "two-a");
    await log("A", T, "two-a");
    await log("A", T, "one-a");
    await log("A", T); // no user: never counted
    await log("B", T);
    await log("A", T, "edge");
    await log("B", T + 3600, "edge");
    await log("A", TO, "late"); // the first step must be before to
    await log("B", TO + 1, "late");
    const ab = await funnel(["A", "B"], "&window=3600", "tie");
    expect(ab.steps.map((s: { users: number }) => s.users)).toEqual([5, 2]);
    expect((await funnel(["A", "B"], "&window=3599", "tie")).steps[1].users).toBe(1);
    expect((await funnel(["A", "A"], "", "tie")).steps.map((s: { users: number }) => s.users)).toEqual([5, 1]);
    const dropped = await call(server, {
      path: `/v1/analytics/funnel/dropped?project=tie&from=${FROM}&to=${TO}&step=A&step=B&window=3600&at=2`,
    });
    expect(dropped.json.users).toEqual(["before", "one-a", "two-a"].sort());
  });
});

describe("retention", () => {
  const DAY = 86_400;
  const B = Date.UTC(2026, 0, 5) / 1000; // a Monday
  const S = "Signed up";
  const R = "Opened app";
  /** At `hour` UTC of day `day` from B. */
  const at = (day: number, hour = 12) => B + day * DAY + hour * 3600;
  type Sent = {
    event: string;
    user?: string;
    day: number;
    hour?: number;
    channel?: string;
    pro?: boolean;
    kettle?: boolean;
  };
  // Cohorts by UTC day: day 0 a, b, c, d (d at 02:00, the evening before in Bogotá); day 1 e (in #app) and f.
  // Returns by UTC day: a 0 1 3 (1 in #app), b 1 8, c 2, e 1 2, f 4; x returns without starting.
  const SENT: Sent[] = [
    { event: S, user: "a", day: 0, pro: true, kettle: true },
    { event: S, user: "b", day: 0, pro: true },
    { event: S, user: "c", day: 0 },
    { event: S, user: "d", day: 0, hour: 2 },
    { event: S, user: "e", day: 1, channel: "app" },
    { event: S, user: "f", day: 1 },
    { event: S, day: 0 }, // no user: never counted
    { event: R, day: 0 },
    { event: R, user: "a", day: 0, hour: 18, pro: true, kettle: true },
    { event: R, user: "a", day: 1, channel: "app", pro: true, kettle: true },
    { event: R, user: "a", day: 3, pro: true, kettle: true },
    { event: R, user: "b", day: 1, pro: true },
    { event: R, user: "b", day: 8 },
    { event: R, user: "c", day: 2 },
    { event: R, user: "e", day: 1, hour: 18 },
    { event: R, user: "e", day: 2 },
    { event: R, user: "f", day: 4 },
    { event: R, user: "x", day: 1 },
  ];
  const ask = (query: string, token?: string) =>
    call(server, {
      path: `/v1/analytics/retention?project=cohorts&start_event=Signed%20up&return_event=Opened%20app&${query}`,
      token,
    });
  const cohorts = async (query: string) => {
    const res = await ask(query);
    expect({ query, status: res.status, body: res.status === 200 ? null : res.json }).toEqual({
      query,
      status: 200,
      body: null,
    });
    return res.json.cohorts as {
      start: number;
      users: number;
      returned: (number | null)[];
      percent: (number | null)[];
    }[];
  };
  const days = `from=${B}&to=${B + 3 * DAY}&periods=3`;

  beforeAll(async () => {
    await server.services.projects.create("cohorts");
    for (const e of SENT) {
      const res = await post(server, "/v1/log", {
        project: "cohorts",
        channel: e.channel ?? "web",
        event: e.event,
        ...(e.user ? { user_id: e.user } : {}),
        tags: e.pro ? { plan: "pro" } : {},
        description: e.kettle ? "made with the kettle" : "plain",
        timestamp: at(e.day, e.hour),
      });
      expect(res.status).toBe(200);
    }
    await searchIndexed(server);
  });

  test("counts each day's cohort and who of it came back in each day after, with percent", async () => {
    const res = await ask(days);
    expect(res.json).toEqual({
      success: true,
      statusCode: 200,
      interval: "day",
      tz: "UTC",
      from: B,
      to: B + 3 * DAY,
      periods: 3,
      start_event: S,
      return_event: R,
      cohorts: [
        { start: B, users: 4, returned: [1, 2, 1, 1], percent: [25, 50, 25, 25] },
        { start: B + DAY, users: 2, returned: [1, 1, 0, 1], percent: [50, 50, 0, 50] },
        { start: B + 2 * DAY, users: 0, returned: [0, 0, 0, 0], percent: [0, 0, 0, 0] },
      ],
    });
  });

  test("the filters apply to both events: channel, tag, user, words", async () => {
    const cases: [string, { users: number; returned: number[]; percent: number[] }[]][] = [
      [
        "channel=web",
        [
          { users: 4, returned: [1, 1, 1, 1], percent: [25, 25, 25, 25] },
          { users: 1, returned: [0, 0, 0, 1], percent: [0, 0, 0, 100] },
        ],
      ],
      ["tag=plan:pro", [{ users: 2, returned: [1, 2, 0, 1], percent: [50, 100, 0, 50] }]],
      ["tag=plan:pro&channel=web", [{ users: 2, returned: [1, 1, 0, 1], percent: [50, 50, 0, 50] }]],
      ["user_id=a", [{ users: 1, returned: [1, 1, 0, 1], percent: [100, 100, 0, 100] }]],
      ["q=kettle", [{ users: 1, returned: [1, 1, 0, 1], percent: [100, 100, 0, 100] }]],
    ];
    const none = { users: 0, returned: [0, 0, 0, 0], percent: [0, 0, 0, 0] };
    for (const [filter, expected] of cases) {
      const found = (await cohorts(`${days}&${filter}`)).map(({ start: _, ...c }) => c);
      expect({ filter, found }).toEqual({ filter, found: [...expected, none, none].slice(0, 3) });
    }
  });

  test("in a time zone: cohorts are its days, from its midnight", async () => {
    // Bogotá is UTC-5 all year: from and to (UTC midnights) fall at 19:00 of its days, so four of them overlap.
    const found = await cohorts(`${days}&tz=America/Bogota`);
    expect(found).toEqual([
      { start: B - DAY + 5 * 3600, users: 1, returned: [0, 0, 0, 0], percent: [0, 0, 0, 0] },
      { start: B + 5 * 3600, users: 3, returned: [1, 2, 1, 1], percent: [33.3, 66.7, 33.3, 33.3] },
      { start: B + DAY + 5 * 3600, users: 2, returned: [1, 1, 0, 1], percent: [50, 50, 0, 50] },
      { start: B + 2 * DAY + 5 * 3600, users: 0, returned: [0, 0, 0, 0], percent: [0, 0, 0, 0] },
    ]);
  });

  test("by week: cohorts from Mondays, periods of a week", async () => {
    const res = await ask(`from=${B}&to=${B + 14 * DAY}&interval=week&periods=2`);
    expect(res.json).toMatchObject({ interval: "week", periods: 2 });
    expect(res.json.cohorts).toEqual([
      { start: B, users: 6, returned: [5, 1, 0], percent: [83.3, 16.7, 0] },
      { start: B + 7 * DAY, users: 0, returned: [0, 0, 0], percent: [0, 0, 0] },
    ]);
  });

  test("a period that has not begun yet is null, in returned and percent", async () => {
    const now = Math.floor(Date.now() / 1000);
    expect(
      (
        await post(server, "/v1/log", {
          project: "cohorts",
          channel: "web",
          event: S,
          user_id: "late",
          timestamp: now - 60,
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await post(server, "/v1/log", {
          project: "cohorts",
          channel: "web",
          event: R,
          user_id: "late",
          timestamp: now - 30,
        })
      ).status,
    ).toBe(200);
    const found = await cohorts(`from=${now - 7200}&to=${now}&periods=3`);
    const asked = Date.now() / 1000;
    expect(found.length).toBeGreaterThanOrEqual(1);
    for (const c of found) {
      const begun = [0, 1, 2, 3].map((k) => c.start + k * DAY <= asked);
      expect(c.returned.map((n) => n !== null)).toEqual(begun);
      expect(c.percent.map((n) => n !== null)).toEqual(begun);
    }
    // The last cohort is today's: its own day has begun, the three after have not.
    expect(found.at(-1)!.returned.slice(1)).toEqual([null, null, null]);
    const mine = found.findLast((c) => c.start <= now - 60)!;
    expect([mine.users, mine.returned[0], mine.percent[0]]).toEqual([1, 1, 100]);
  });

  test("a token limited to another project is refused; an unknown project or channel is a 404", async () => {
    const limited = (await server.services.tokens.create({ name: "shop only", projects: ["shop"] })).token;
    const res = await ask(days, limited);
    expect(res.status).toBe(403);
    expect(res.json.success).toBe(false);
    expect((await ask(`${days}&channel=nope`)).status).toBe(404);
    const elsewhere = await call(server, { path: "/v1/analytics/retention?project=nope&start_event=A&return_event=B" });
    expect(elsewhere.status).toBe(404);
  });
});

describe("bad parameters", () => {
  const cases: [string, string, string][] = [
    ["series", "interval=year", "interval"],
    ["series", `from=${TO}&to=${FROM}`, "from"],
    ["series", `from=${FROM}&to=${FROM}`, "from"],
    ["series", "from=yesterday", "from"],
    // Not ISO 8601: Date.parse read each as a day of 2001.
    ["series", "from=-1", "from"],
    ["series", "from=May%205", "from"],
    ["funnel", "step=A&step=B&to=3%2F4", "to"],
    ["series", "tz=Mars/Olympus", "tz"],
    ["series", "group_by=colour", "group_by"],
    ["series", "group_by=tag:Plan", "group_by"],
    ["series", "measure=people", "measure"],
    ["series", "limit=0", "limit"],
    ["series", "limit=101", "limit"],
    ["series", "limit=ten", "limit"],
    ["series", `interval=hour&from=${FROM - 2 * 365 * 86_400}&to=${FROM}`, "interval"],
    ["series", "channel=Not%20A%20Channel", "channel"],
    // Lines times buckets past 100,000 points: 100 groups by hour over a year were a million, built on the event loop.
    ["series", `interval=hour&from=${FROM - 365 * 86_400}&to=${FROM}&group_by=event&limit=100`, "limit"],
    ["series", `interval=hour&from=${FROM - 9_999 * 3_600}&to=${FROM}&group_by=tag:plan&limit=9`, "limit"],
    ["funnel", "step=A", "step"],
    ["funnel", Array.from({ length: 11 }, (_, i) => `step=S${i}`).join("&"), "step"],
    ["funnel", "step=A&step=", "step.1"],
    ["funnel", "step=A&step=B&window=-1", "window"],
    ["funnel", "step=A&step=B&window=soon", "window"],
    ["funnel", `step=A&step=B&from=${TO}&to=${FROM}`, "from"],
    ["funnel/dropped", "step=A&step=B&at=1", "at"],
    ["funnel/dropped", "step=A&step=B&at=3", "at"],
    ["funnel/dropped", "step=A&step=B&at=2&cursor=%21%21", "cursor"],
    ["funnel/dropped", "step=A&step=B&at=2&limit=0", "limit"],
    ["retention", "return_event=B", "start_event"],
    ["retention", "start_event=A", "return_event"],
    ["retention", "start_event=A&return_event=", "return_event"],
    ["retention", "start_event=A&return_event=B&interval=month", "interval"],
    ["retention", "start_event=A&return_event=B&interval=hour", "interval"],
    ["retention", "start_event=A&return_event=B&periods=0", "periods"],
    ["retention", "start_event=A&return_event=B&periods=91", "periods"],
    ["retention", "start_event=A&return_event=B&periods=two", "periods"],
    ["retention", "start_event=A&return_event=B&tz=Mars/Olympus", "tz"],
    ["retention", `start_event=A&return_event=B&from=${TO}&to=${FROM}`, "from"],
    // A grid of more than 20,000 cells: 366 days of cohorts, 90 days after each.
    ["retention", `start_event=A&return_event=B&periods=90&from=${FROM - 365 * 86_400}&to=${FROM}`, "from"],
  ];
  test("each is a 400 that names the parameter", async () => {
    for (const [route, query, field] of cases) {
      const res = await call(server, { path: `/v1/analytics/${route}?project=shop&${query}` });
      expect({
        query,
        status: res.status,
        error: res.json.error,
        field: res.json.validation?.query?.[0]?.path,
        message: res.json.message.startsWith(`${field}:`),
      }).toEqual({ query, status: 400, error: "validation_error", field, message: true });
    }
  });

  test("several bad parameters: the message names the first and points at the others where they are listed", async () => {
    const res = await call(server, { path: "/v1/analytics/retention?project=shop" });
    expect(res.status).toBe(400);
    expect(res.json.message).toBe("start_event: is required (a string) (and 1 more: see validation.query)");
    expect(res.json.validation.query.map((i: { path: string }) => i.path)).toEqual(["start_event", "return_event"]);
  });

  test("a split series at its most points is answered, with the limit's message saying how many groups fit", async () => {
    const most = await call(server, {
      path: `/v1/analytics/series?project=shop&interval=hour&from=${FROM - 9_999 * 3_600}&to=${FROM}&group_by=tag:plan&limit=8`,
    });
    expect(most.status).toBe(200);
    expect(most.json.series[0].points.length).toBe(9_999);
    const past = await call(server, {
      path: `/v1/analytics/series?project=shop&interval=hour&from=${FROM - 365 * 86_400}&to=${FROM}&group_by=event&limit=100`,
    });
    expect(past.json.message).toContain("must be at most 9 with 8,760 buckets of an hour");
  });

  test("too many buckets says which interval in words", async () => {
    const res = await call(server, {
      path: `/v1/analytics/series?project=shop&interval=hour&from=${FROM - 2 * 365 * 86_400}&to=${FROM}`,
    });
    expect(res.json.message).toContain(
      "more than 10,000 buckets of an hour; choose a longer interval or a shorter range",
    );
  });

  test("a tag filter without a key is a 400, an unknown project or channel a 404", async () => {
    expect((await call(server, { path: "/v1/analytics/series?project=shop&tag=plan" })).json).toMatchObject({
      statusCode: 400,
      error: "invalid_tag_filter",
    });
    expect((await call(server, { path: "/v1/analytics/series?project=nope" })).status).toBe(404);
    expect((await call(server, { path: "/v1/analytics/series?project=shop&channel=nope" })).status).toBe(404);
    expect((await call(server, { path: "/v1/analytics/funnel?project=nope&step=A&step=B" })).status).toBe(404);
  });
});

describe("a question past its budget", () => {
  let slow: TestApp;
  beforeAll(async () => {
    slow = await startTestApp({ "query-timeout": "1ms" });
    const project = (await slow.services.projects.list()).find((p) => p.name === "default")!;
    const { id: channelId } = await slow.store.projects.ensureChannel(project.id, "c", Date.now());
    const now = Date.now();
    // Enough that no question of them fits in 1 ms, on either store.
    // Sent a thousand at a time: PostgreSQL's client pipelines them on the transaction's connection,
    // where one at a time waited for 10,000 round trips (minutes beside other work).
    await slow.store.tx(async (r) => {
      for (let from = 0; from < 10_000; from += 1000) {
        const batch = Array.from({ length: 1000 }, (_, k) => from + k);
        await Promise.all(
          batch.map((i) =>
            r.events.insert({
              projectId: project.id,
              project: "default",
              channelId,
              channel: "c",
              name: i % 3 ? "A" : "B",
              description: null,
              icon: null,
              notify: false,
              parser: "text",
              userId: `u${i % 500}`,
              tags: null,
              ts: now - i * 60_000,
              receivedAt: now,
              historical: false,
            }),
          ),
        );
      }
    });
  });
  afterAll(() => slow.close());

  test("is the 503 query_timeout, and the loop stays free", async () => {
    for (const path of ["/v1/analytics/series?measure=users&group_by=event", "/v1/analytics/funnel?step=A&step=B"]) {
      const pending = call(slow, { path });
      expect((await slow.fetch(`/healthz`)).status).toBe(200);
      const res = await pending;
      expect({ path, status: res.status, error: res.json.error }).toEqual({
        path,
        status: 503,
        error: "query_timeout",
      });
      expect(res.headers.get("retry-after")).toBe("5");
    }
    expect(slow.store.reads!.timeouts).toBeGreaterThanOrEqual(2);
  });
});
