// Retention as a saved chart: made, read and changed through /v1/charts (its data what GET
// /v1/analytics/retention answers for the same question), refused when its question could not be
// asked (naming the field), and built in the dashboard's builder: the form becomes the definition,
// the preview and the card are the grid (a row per cohort, a cell per period, shaded by its share,
// escaped), and the card follows new events.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Agent, call, eventually, post, signedIn, startTestServer, type TestServer } from "../helpers.ts";

const OWNER = { username: "owner", password: "correct horse battery staple" };
const DAY = 86_400;
const B = Date.UTC(2026, 0, 5) / 1000; // a Monday
let server: TestServer;
let agent: Agent;
let csrf: string;

/**
 * Day 0: a, b, c and d sign up; day 1: e. Back (opened the app): a on days 0, 1 and 3, b on day 1,
 * c on day 2, e on days 1 and 2; d never. By day over three days, three after each:
 * day 0 is 4 users, back [1, 2, 1, 1]; day 1 is 1 user, back [1, 1, 0, 0]; day 2 none.
 */
const SENT: [string, string, number][] = [
  ["Signed up", "a", 0],
  ["Signed up", "b", 0],
  ["Signed up", "c", 0],
  ["Signed up", "d", 0],
  ["Signed up", "e", 1],
  ["Opened app", "a", 0],
  ["Opened app", "a", 1],
  ["Opened app", "a", 3],
  ["Opened app", "b", 1],
  ["Opened app", "c", 2],
  ["Opened app", "e", 1],
  ["Opened app", "e", 2],
];
const DEFINITION = {
  start_event: "Signed up",
  return_event: "Opened app",
  from: B,
  to: B + 3 * DAY,
  interval: "day",
  periods: 3,
  tz: "UTC",
};

beforeAll(async () => {
  server = await startTestServer({ "card-refresh": "200ms" });
  await server.services.accounts.createUser(OWNER, "owner");
  await server.services.projects.create("shop");
  await server.services.projects.create("other");
  for (const [event, user, day] of SENT) {
    const res = await post(server, "/v1/log", {
      project: "shop",
      channel: "web",
      event,
      user_id: user,
      timestamp: B + day * DAY + 12 * 3600,
    });
    expect(res.status).toBe(200);
  }
  agent = await signedIn(server, OWNER);
  csrf = await agent.csrf();
});
afterAll(() => server.close());

const create = (body: Record<string, unknown>) =>
  call(server, { path: "/v1/charts", body: { project: "shop", kind: "retention", name: "Back", ...body } });

type Cell = { text: string; shade: string | null; title: string | null; future: boolean };
type Row = { cohort: string; date: string; users: string; cells: Cell[] };

/** The grid's header and rows as the HTML has them. */
function grid(page: string): { head: string[]; rows: Row[] } {
  const table = /<table class="retention-grid">([\s\S]*?)<\/table>/.exec(page);
  if (!table) throw new Error(`no retention grid in: ${page.slice(0, 400)}`);
  const head = [...table[1]!.matchAll(/<th scope="col"[^>]*>([^<]*)<\/th>/g)].map((m) => m[1]!);
  const rows = [...table[1]!.matchAll(/<tr data-testid="cohort">([\s\S]*?)<\/tr>/g)].map((m) => {
    const row = m[1]!;
    const th = /<th scope="row"><time datetime="([^"]+)">([^<]*)<\/time><\/th>/.exec(row)!;
    const tds = [...row.matchAll(/<td([^>]*)>([^<]*)<\/td>/g)].map((c) => ({
      attributes: c[1]!,
      text: c[2]!,
    }));
    return {
      cohort: th[2]!,
      date: th[1]!,
      users: tds[0]!.text,
      cells: tds.slice(1).map(({ attributes, text }) => ({
        text,
        shade: /data-shade="(\d+)"/.exec(attributes)?.[1] ?? null,
        title: /title="([^"]*)"/.exec(attributes)?.[1] ?? null,
        future: attributes.includes('class="future"'),
      })),
    };
  });
  return { head, rows };
}

const shown = (text: string, shade: string, title: string): Cell => ({ text, shade, title, future: false });

describe("a retention chart through /v1/charts", () => {
  test("is made, read, changed and deleted; its data is what /v1/analytics/retention answers", async () => {
    const made = await create({ definition: DEFINITION, position: 5 });
    expect(made.status).toBe(200);
    expect(made.json.chart).toMatchObject({ project: "shop", kind: "retention", name: "Back", definition: DEFINITION });
    expect(made.json.chart.position).not.toBeNull();
    const id = made.json.chart.id;
    expect((await call(server, { path: `/v1/charts/${id}` })).json.chart).toEqual(made.json.chart);
    expect(
      (await call(server, { path: "/v1/charts?project=shop" })).json.charts.map((c: { id: number }) => c.id),
    ).toContain(id);

    const data = await call(server, { path: `/v1/charts/${id}/data` });
    const direct = await call(server, {
      path: `/v1/analytics/retention?project=shop&start_event=Signed%20up&return_event=Opened%20app&from=${B}&to=${B + 3 * DAY}&interval=day&periods=3&tz=UTC`,
    });
    const { success, statusCode, ...answer } = direct.json;
    expect(data.json).toEqual({ success, statusCode, chart: made.json.chart, kind: "retention", ...answer });
    expect(answer.cohorts).toEqual([
      { start: B, users: 4, returned: [1, 2, 1, 1], percent: [25, 50, 25, 25] },
      { start: B + DAY, users: 1, returned: [1, 1, 0, 0], percent: [100, 100, 0, 0] },
      { start: B + 2 * DAY, users: 0, returned: [0, 0, 0, 0], percent: [0, 0, 0, 0] },
    ]);

    const changed = await call(server, {
      method: "PATCH",
      path: `/v1/charts/${id}`,
      body: { definition: { ...DEFINITION, interval: "week", periods: 1, to: B + 7 * DAY } },
    });
    expect(changed.status).toBe(200);
    const weekly = (await call(server, { path: `/v1/charts/${id}/data` })).json;
    expect(weekly).toMatchObject({ kind: "retention", interval: "week", periods: 1 });
    // a, b, c, d and e signed up that week; all but d came back in it.
    expect(weekly.cohorts).toEqual([{ start: B, users: 5, returned: [4, 0], percent: [80, 0] }]);
    expect((await call(server, { method: "DELETE", path: `/v1/charts/${id}` })).status).toBe(200);
  });

  test("a question that could not be asked is refused when it is saved, naming its field, and nothing is saved", async () => {
    const { start_event: _, ...withoutStart } = DEFINITION;
    const refusals: [Record<string, unknown>, number, string | null][] = [
      [withoutStart, 400, "definition.start_event"],
      [{ ...DEFINITION, start_event: "" }, 400, "definition.start_event"],
      [{ ...DEFINITION, start_event: 7 }, 400, "definition.start_event"],
      [{ ...DEFINITION, start_event: "x".repeat(201) }, 400, "definition.start_event"],
      [{ ...DEFINITION, return_event: "A\u0000" }, 400, "definition.return_event"],
      [{ ...DEFINITION, interval: "month" }, 400, "definition.interval"],
      [{ ...DEFINITION, periods: 0 }, 400, "definition.periods"],
      [{ ...DEFINITION, periods: 91 }, 400, "definition.periods"],
      [{ ...DEFINITION, periods: 2.5 }, 400, "definition.periods"],
      [{ ...DEFINITION, tz: "Mars/Olympus" }, 400, "definition.tz"],
      [{ ...DEFINITION, tag: ["plan"] }, 400, "definition.tag.0"],
      [{ ...DEFINITION, colour: "red" }, 400, "definition"],
      [{ ...DEFINITION, last_days: 7 }, 400, "definition.last_days"],
      [{ ...DEFINITION, from: B - 400 * DAY, periods: 90 }, 400, "definition.from"],
      [{ ...DEFINITION, channel: "nope" }, 404, null],
    ];
    const before = (await call(server, { path: "/v1/charts?project=shop" })).json.charts.length;
    for (const [definition, status, field] of refusals) {
      const res = await create({ definition });
      expect({ definition, status: res.status, field: res.json.validation?.body?.[0]?.path ?? null }).toEqual({
        definition,
        status,
        field,
      });
      if (field) expect(res.json.message).toStartWith(`${field}:`);
    }
    expect((await call(server, { path: "/v1/charts?project=shop" })).json.charts.length).toBe(before);
  });

  test("a kind of chart that is none names the four there are", async () => {
    const res = await create({ kind: "cohorts", definition: DEFINITION });
    expect(res.status).toBe(400);
    expect(res.json.validation.body).toEqual([
      expect.objectContaining({ path: "kind", message: "kind: must be series, funnel, metric or retention" }),
    ]);
  });
});

const form = (path: string, fields: Record<string, string>) =>
  agent.request(path, { method: "POST", form: { _csrf: csrf, ...fields } });

/** The builder's fields for DEFINITION: a custom range from day 0 to day 2 (included), UTC. */
const FIELDS = {
  kind: "retention",
  name: "Back after sign-up",
  start_event: "Signed up",
  return_event: "Opened app",
  range: "custom",
  from: "2026-01-05",
  to: "2026-01-07",
  tzo: "0",
  interval: "day",
  periods: "3",
  tz: "UTC",
};

describe("the builder", () => {
  test("shows the retention fields, and its preview is the grid: a row per cohort, a cell per period, shaded by its share", async () => {
    const page = await (await agent.request("/p/shop/charts/new?kind=retention")).text();
    for (const id of ["chart-start", "chart-return", "chart-channel", "chart-tag", "chart-user", "chart-q"])
      expect(page).toContain(`id="${id}"`);
    for (const id of ["chart-range", "chart-interval", "chart-periods", "chart-tz"])
      expect(page).toContain(`id="${id}"`);
    expect(page).toContain('<datalist id="time-zones">');
    expect(page).toContain('<option value="Europe/Paris">');
    expect(page).toMatch(/<a href="\/p\/shop\/charts\/new\?kind=retention" aria-current="page">Retention<\/a>/);

    const preview = await agent.request(`/p/shop/charts/preview?${new URLSearchParams(FIELDS)}`);
    expect(preview.status).toBe(200);
    const text = await preview.text();
    expect(text).toContain(
      "Of those who did “Signed up” each day, the share who did “Opened app” that day (day 0) and each day after.",
    );
    const { head, rows } = grid(text);
    expect(head).toEqual(["Day", "Users", "Day 0", "Day 1", "Day 2", "Day 3"]);
    expect(rows).toEqual([
      {
        cohort: "5 Jan 2026",
        date: "2026-01-05",
        users: "4",
        cells: [
          shown("25%", "3", "1 of 4 users (25%)"),
          shown("50%", "5", "2 of 4 users (50%)"),
          shown("25%", "3", "1 of 4 users (25%)"),
          shown("25%", "3", "1 of 4 users (25%)"),
        ],
      },
      {
        cohort: "6 Jan 2026",
        date: "2026-01-06",
        users: "1",
        cells: [
          shown("100%", "10", "1 of 1 user (100%)"),
          shown("100%", "10", "1 of 1 user (100%)"),
          shown("0%", "0", "0 of 1 user (0%)"),
          shown("0%", "0", "0 of 1 user (0%)"),
        ],
      },
      {
        cohort: "7 Jan 2026",
        date: "2026-01-07",
        users: "0",
        cells: Array(4).fill({ text: "–", shade: null, title: "No users in this cohort", future: false }),
      },
    ]);
    expect(text).toMatch(/<table class="retention-grid">\s*<caption class="visually-hidden">/);
    expect(preview.headers.get("hx-replace-url")).toStartWith("/p/shop/charts/new?kind=retention&");
  });

  test("a preview by week in a time zone names its cohorts by the Monday they start, in that zone", async () => {
    const fields = { ...FIELDS, interval: "week", periods: "1", tz: "Asia/Tokyo", to: "2026-01-10" };
    const { head, rows } = grid(
      await (await agent.request(`/p/shop/charts/preview?${new URLSearchParams(fields)}`)).text(),
    );
    expect(head).toEqual(["Week of", "Users", "Week 0", "Week 1"]);
    // 12:00 UTC is 21:00 in Tokyo: the same days, in the week from Monday 5 January there.
    expect(rows.map((r) => [r.cohort, r.date, r.users, r.cells.map((c) => c.text)])).toEqual([
      ["5 Jan 2026", "2026-01-05", "5", ["80%", "0%"]],
    ]);
  });

  test("periods not begun yet are empty, unshaded cells", async () => {
    for (const [event, user] of [
      ["Signed up", "today"],
      ["Opened app", "today"],
    ])
      expect((await post(server, "/v1/log", { project: "shop", channel: "web", event, user_id: user })).status).toBe(
        200,
      );
    const fields = { ...FIELDS, range: "1", periods: "2" };
    const { rows } = grid(await (await agent.request(`/p/shop/charts/preview?${new URLSearchParams(fields)}`)).text());
    const today = rows.at(-1)!;
    expect(today.cells[0]).toMatchObject({ text: "100%", shade: "10", future: false });
    expect(today.cells.slice(1)).toEqual(
      Array(2).fill({ text: "", shade: null, title: "Not begun yet", future: true }),
    );
  });

  test("saves the chart as its definition, and pins it to the dashboard", async () => {
    const res = await form("/p/shop/charts", { ...FIELDS, tag: "plan:pro", channel: "web", pin: "1" });
    expect(res.status).toBe(303);
    const id = Number(res.headers.get("location")!.split("/").pop());
    const chart = await server.services.charts.get(id);
    expect(chart).toMatchObject({
      kind: "retention",
      name: "Back after sign-up",
      definition: { ...DEFINITION, tag: ["plan:pro"], channel: "web" },
    });
    expect(chart.position).not.toBeNull();
    // Its page, the list and the dashboard say what it asks.
    const said = "“Signed up”, back with “Opened app”, by day for 3 days, #web, plan:pro, fixed range";
    for (const path of [`/p/shop/charts/${id}`, "/p/shop/charts", "/p/shop"])
      expect({ path, said: (await (await agent.request(path)).text()).includes(said) }).toEqual({ path, said: true });
    // Edited, the form has what was saved.
    const edit = await (await agent.request(`/p/shop/charts/${id}/edit`)).text();
    for (const field of [
      /id="chart-start"[^>]* name="start_event" value="Signed up"/,
      /id="chart-return"[^>]* name="return_event" value="Opened app"/,
      /id="chart-periods"[^>]* value="3"/,
      /id="chart-tz"[^>]* value="UTC"/,
      /<option value="day" selected>/,
      /<option value="web" selected>#web/,
      /id="chart-tag"[^>]* value="plan:pro"/,
    ])
      expect({ field, found: field.test(edit) }).toEqual({ field, found: true });
    await server.services.charts.remove(id);
  });

  test("says which field is wrong, keeping what was typed, and saves nothing", async () => {
    const before = (await server.services.charts.list("shop")).length;
    const res = await form("/p/shop/charts", { ...FIELDS, start_event: "" });
    expect(res.status).toBe(422);
    const page = await res.text();
    expect(page).toMatch(/id="chart-start-error">[^<]+/);
    expect(page).toContain('<a href="#chart-start">Start event:');
    expect(page).toContain('value="Opened app"');
    const periods = await (await form("/p/shop/charts", { ...FIELDS, periods: "91", interval: "month" })).text();
    expect(periods).toMatch(/id="chart-periods-error">[^<]*from 1 to 90/);
    expect(periods).toMatch(/id="chart-interval-error">[^<]*day or week/);
    expect(periods).toContain('value="91"');
    // A range of the last N days that makes too big a grid is the range's fault, not a hidden From's.
    const big = await form("/p/shop/charts", { ...FIELDS, range: "365", periods: "90" });
    expect(big.status).toBe(422);
    expect(await big.text()).toMatch(/id="chart-range-error">[^<]*at most 20,000 cells/);
    expect((await server.services.charts.list("shop")).length).toBe(before);
  });

  test("escapes the events' names in the grid and its words", async () => {
    const name = `<img src=x onerror="alert(1)">`;
    expect((await post(server, "/v1/log", { project: "shop", channel: "web", event: name, user_id: "z" })).status).toBe(
      200,
    );
    const fields = { ...FIELDS, start_event: name, return_event: name, range: "1" };
    const text = await (await agent.request(`/p/shop/charts/preview?${new URLSearchParams(fields)}`)).text();
    expect(text).not.toContain("<img");
    expect(text).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;");
    expect(grid(text).rows.at(-1)!.cells[0]!.text).toBe("100%");
  });
});

describe("a retention card", () => {
  test("is the grid, compact on the dashboard, and follows new events", async () => {
    const chart = await server.services.charts.create({
      project: "shop",
      kind: "retention",
      name: "Live",
      definition: { start_event: "Joined", return_event: "Came back", last_days: 2, periods: 1, tz: "UTC" },
      position: 1,
    });
    expect(
      (await post(server, "/v1/log", { project: "shop", channel: "web", event: "Joined", user_id: "j1" })).status,
    ).toBe(200);
    const dashboard = await (await agent.request("/p/shop")).text();
    expect(dashboard).toMatch(new RegExp(`<li class="card-item wide" id="card-${chart.id}"`));
    expect(dashboard).toContain(`data-live-url="/p/shop/cards/${chart.id}?compact=1&live=1"`);
    const card = () => agent.request(`/p/shop/cards/${chart.id}?compact=1&live=1`).then((r) => r.text());
    const first = await card();
    expect(first).toContain('class="retention-wrap compact"');
    const own = (text: string) => grid(text).rows.at(-1)!.cells[0]!;
    expect(own(first)).toMatchObject({ text: "0%", title: "0 of 1 user (0%)" });
    expect(
      (await post(server, "/v1/log", { project: "shop", channel: "web", event: "Came back", user_id: "j1" })).status,
    ).toBe(200);
    await eventually(async () => expect(own(await card())).toMatchObject({ text: "100%", shade: "10" }));
    // On the chart's own page the grid is not cut short.
    expect(await (await agent.request(`/p/shop/cards/${chart.id}`)).text()).toContain('class="retention-wrap"');
    // Another project's chart is not this project's card.
    expect((await agent.request(`/p/other/cards/${chart.id}`)).status).toBe(404);
  });
});
