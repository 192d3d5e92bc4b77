// A metric with a long history (200,000 minutes): its page and GET /v1/metrics/history answer what a
// reader can use (spans a chart shows, pages of at most 10,000 points behind a cursor), not every
// point at once; a single spike survives the reduction.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Agent, call, signedIn, startTestApp, type TestApp } from "../helpers.ts";

const OWNER = { username: "owner", password: "correct horse battery staple" };
const MINUTE = 60_000;
const POINTS = 200_000;
const SPIKE = { i: 123_457, value: 1000 };
const DIP = { i: 45_678, value: -7.5 };

let server: TestApp;
let agent: Agent;
/** The newest point's minute (Unix ms); point i (0 the oldest) is at last - (POINTS - 1 - i) minutes. */
let last: number;
const minuteOf = (i: number) => last - (POINTS - 1 - i) * MINUTE;
const valueOf = (i: number) => (i === SPIKE.i ? SPIKE.value : i === DIP.i ? DIP.value : 50 + (i % 100) / 10);

/** Writes the history in one statement (the same values on both stores): 200,000 requests would take minutes. */
async function seedHistory(metricId: number): Promise<void> {
  const store = server.store;
  const value = `CASE WHEN i = ${SPIKE.i} THEN ${SPIKE.value} WHEN i = ${DIP.i} THEN ${DIP.value} ELSE 50 + (i % 100) / 10.0 END`;
  const upsert = "ON CONFLICT (metric_id, minute) DO UPDATE SET value_num = excluded.value_num";
  if ("sqlite" in store) {
    store.sqlite.run(
      `WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < ${POINTS - 1})
       INSERT INTO metric_history (metric_id, minute, value_num) SELECT ${metricId}, ${last} - (${POINTS - 1} - i) * ${MINUTE}, ${value} FROM s WHERE true ${upsert}`,
    );
  } else if ("sql" in store) {
    const sql = store.sql as { unsafe(text: string): Promise<unknown> };
    await sql.unsafe(
      `INSERT INTO metric_history (metric_id, minute, value_num)
       SELECT ${metricId}, ${last}::bigint - (${POINTS - 1} - i)::bigint * ${MINUTE}, ${value} FROM generate_series(0, ${POINTS - 1}) AS i ${upsert}`,
    );
  }
}

beforeAll(async () => {
  server = await startTestApp();
  await server.services.accounts.createUser(OWNER, "owner");
  agent = await signedIn(server, OWNER);
  last = Date.now() - (Date.now() % MINUTE) - MINUTE;
  const project = (await server.store.projects.findByName("default"))!;
  const { id } = await server.store.metrics.save({
    projectId: project.id,
    title: "Load",
    value: valueOf(POINTS - 1),
    icon: null,
    now: last,
  });
  await seedHistory(id);
});
afterAll(() => server.close());

const history = (query: string) => call(server, { path: `/v1/metrics/history?title=Load&${query}` });
const fromAll = () => `from=${minuteOf(0) / 1000}`;

type ApiPoint = { timestamp: number; value: number; first?: number; min?: number; max?: number; count?: number };

describe("the metric page", () => {
  test("200,000 points over 365 days: under 1 MB, drawn in about 1,000 spans, with the lowest and highest values", async () => {
    const res = await agent.request("/p/default/metrics/Load?days=365");
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(Buffer.byteLength(page)).toBeLessThan(1_000_000);
    expect(/data-testid="metric-min">([^<]*)</.exec(page)?.[1]).toBe("-7.5");
    expect(/data-testid="metric-max">([^<]*)</.exec(page)?.[1]).toBe("1,000");
    expect(page).toContain("of 200,000 values in this range");
    // The chart's spans: few, together every point, and the spike among their highest values.
    const spans = JSON.parse(/data-points="([^"]*)"/.exec(page)![1]!.replaceAll("&quot;", '"')) as number[][];
    expect(spans.length).toBeGreaterThan(100);
    expect(spans.length).toBeLessThanOrEqual(1_001);
    expect(spans.filter((s) => s[3] === SPIKE.value)).toHaveLength(1);
    expect(spans.filter((s) => s[2] === DIP.value)).toHaveLength(1);
    expect(spans[0]![0]).toBe(minuteOf(0));
    expect(spans.at(-1)![4]).toBe(last);
  });
});

describe("GET /v1/metrics/history", () => {
  test("at most 10,000 points an answer; following next_cursor gives every point once, in order", async () => {
    const seen: number[] = [];
    let values = 0;
    let path = fromAll();
    for (let pages = 0; ; pages++) {
      expect(pages).toBeLessThan(25);
      const res = await history(path);
      expect(res.status).toBe(200);
      expect(res.json.metric.title).toBe("Load");
      const points = res.json.points as ApiPoint[];
      expect(points.length).toBeLessThanOrEqual(10_000);
      for (const p of points) {
        const i = seen.length;
        seen.push(p.timestamp * 1000);
        if (p.value === valueOf(i)) values++;
      }
      if (res.json.next_cursor === null) break;
      expect(points).toHaveLength(10_000);
      path = `${fromAll()}&cursor=${res.json.next_cursor}`;
    }
    expect(seen).toHaveLength(POINTS);
    expect(seen[0]).toBe(minuteOf(0));
    expect(seen.every((at, i) => at === minuteOf(i))).toBe(true);
    expect(values).toBe(POINTS);
  });

  test("limit sets the page's size, and the last page says there is no more", async () => {
    const first = await history(`from=${minuteOf(POINTS - 5) / 1000}&limit=2`);
    expect(first.json.points.map((p: ApiPoint) => p.timestamp * 1000)).toEqual([
      minuteOf(POINTS - 5),
      minuteOf(POINTS - 4),
    ]);
    const second = await history(`from=${minuteOf(POINTS - 5) / 1000}&limit=2&cursor=${first.json.next_cursor}`);
    expect(second.json.points.map((p: ApiPoint) => p.timestamp * 1000)).toEqual([
      minuteOf(POINTS - 3),
      minuteOf(POINTS - 2),
    ]);
    const third = await history(`from=${minuteOf(POINTS - 5) / 1000}&limit=2&cursor=${second.json.next_cursor}`);
    expect(third.json.points.map((p: ApiPoint) => p.timestamp * 1000)).toEqual([minuteOf(POINTS - 1)]);
    expect(third.json.next_cursor).toBeNull();
  });

  test("interval=auto: about 1,000 spans of first, min, max and last; a single spike is kept", async () => {
    const res = await history(`${fromAll()}&interval=auto`);
    expect(res.status).toBe(200);
    const spans = res.json.points as Required<ApiPoint>[];
    expect(res.json.next_cursor).toBeNull();
    expect(spans.length).toBeGreaterThan(100);
    expect(spans.length).toBeLessThanOrEqual(1_001);
    expect(spans.reduce((n, s) => n + s.count, 0)).toBe(POINTS);
    const width = res.json.interval * 1000;
    const spiked = spans.filter((s) => s.max === SPIKE.value);
    expect(spiked).toHaveLength(1);
    expect(spiked[0]!.timestamp * 1000).toBe(minuteOf(SPIKE.i) - (minuteOf(SPIKE.i) % width));
    expect(spans.filter((s) => s.min === DIP.value)).toHaveLength(1);
    expect(Math.max(...spans.filter((s) => s !== spiked[0]).map((s) => s.max))).toBe(59.9);
    // value is the span's last value, as a point's is its minute's last; first its first.
    expect(spans[0]!.first).toBe(valueOf(0));
    expect(spans.at(-1)!.value).toBe(valueOf(POINTS - 1));
  });

  test("interval in seconds: spans of that width, paged by limit and cursor, each point counted once", async () => {
    let path = `${fromAll()}&interval=3600&limit=500`;
    const starts: number[] = [];
    let counted = 0;
    let spikes = 0;
    for (let pages = 0; ; pages++) {
      expect(pages).toBeLessThan(20);
      const res = await history(path);
      expect(res.status).toBe(200);
      expect(res.json.interval).toBe(3600);
      const spans = res.json.points as Required<ApiPoint>[];
      expect(spans.length).toBeLessThanOrEqual(500);
      for (const s of spans) {
        starts.push(s.timestamp);
        counted += s.count;
        if (s.max === SPIKE.value) spikes++;
      }
      if (res.json.next_cursor === null) break;
      path = `${fromAll()}&interval=3600&limit=500&cursor=${res.json.next_cursor}`;
    }
    expect(counted).toBe(POINTS);
    expect(spikes).toBe(1);
    expect(starts.every((t, i) => t % 3600 === 0 && (i === 0 || t > starts[i - 1]!))).toBe(true);
    const hour = (at: number) => Math.floor(at / 3_600_000);
    expect(starts).toHaveLength(hour(last) - hour(minuteOf(0)) + 1);
  });

  test("a history with gaps: spans only where there are points, none lost between pages", async () => {
    const project = (await server.store.projects.findByName("default"))!;
    const DAY = 86_400_000;
    // Ten minutes into a span of two hours (and of one): the two points a minute apart share one.
    const start = last - 30 * DAY - ((last - 30 * DAY) % 7_200_000) + 10 * MINUTE;
    const sets: [number, number][] = [
      [start, 1],
      [start + 3 * DAY, 2],
      [start + 3 * DAY + MINUTE, 3],
      [start + 10 * DAY, 4],
      [start + 29 * DAY, 5],
    ];
    for (const [now, value] of sets)
      await server.store.metrics.save({ projectId: project.id, title: "Sparse", value, icon: null, now });
    const from = `title=Sparse&from=${(start - DAY) / 1000}`;
    for (const interval of ["7200", "60", "auto"]) {
      const spans: Required<ApiPoint>[] = [];
      let width = 0;
      for (let cursor = "", pages = 0; ; pages++) {
        expect(pages).toBeLessThan(5);
        const res = await call(server, { path: `/v1/metrics/history?${from}&interval=${interval}&limit=2${cursor}` });
        expect(res.status).toBe(200);
        width = res.json.interval * 1000;
        expect(res.json.points.length).toBeGreaterThan(0);
        spans.push(...res.json.points);
        if (res.json.next_cursor === null) break;
        cursor = `&cursor=${res.json.next_cursor}`;
      }
      expect(width).toBe(interval === "7200" ? 7_200_000 : interval === "60" ? MINUTE : 3_600_000);
      // [span's start, points in it, its last value]: the two points a minute apart share a span unless it is a minute wide.
      const expected: [number, number, number][] =
        interval === "60"
          ? sets.map(([at, v]) => [at, 1, v])
          : [
              [start, 1, 1],
              [start + 3 * DAY, 2, 3],
              [start + 10 * DAY, 1, 4],
              [start + 29 * DAY, 1, 5],
            ];
      expect(
        spans.map((s) => [s.timestamp * 1000, s.count, s.value]),
        interval,
      ).toEqual(expected.map(([at, n, v]) => [at - (at % width), n, v]));
    }
  });

  test("bad values are a 400 naming the parameter", async () => {
    const raw = (await history(`${fromAll()}&limit=1`)).json.next_cursor as string;
    const spans = (await history(`${fromAll()}&interval=3600&limit=1`)).json.next_cursor as string;
    const cases: [string, string][] = [
      ["limit=0", "limit"],
      ["limit=10001", "limit"],
      ["limit=ten", "limit"],
      ["cursor=not-a-cursor", "cursor"],
      [`cursor=${Buffer.from("12:34").toString("base64url")}`, "cursor"],
      [`cursor=${raw}&interval=3600`, "cursor"],
      [`cursor=${spans}`, "cursor"],
      [`cursor=${spans}&interval=60`, "cursor"],
      ["from=2026-02-01&to=2026-01-01", "from"],
      ["interval=90", "interval"],
      ["interval=0", "interval"],
      ["interval=daily", "interval"],
    ];
    for (const [query, field] of cases) {
      const res = await history(query);
      expect(res.status, query).toBe(400);
      expect(res.json.success).toBe(false);
      expect(res.json.error, query).toBe("validation_error");
      expect(res.json.validation.query[0].path, query).toBe(field);
      expect(res.json.message, query).toContain(field);
    }
  });
});
