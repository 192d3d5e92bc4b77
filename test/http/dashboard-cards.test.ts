// The dashboard's charts over HTTP, as the pages ask them: a card's answer is worked out once for
// everyone looking and again only when events arrive (at most every SIGNALBOARD_CARD_REFRESH);
// the builder's form becomes a chart (or says which field is wrong); the cards are arranged one
// move at a time; and what names another project's chart, or nothing, is refused. Time is the
// test's clock: a refresh passes when the test moves it on.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Agent, post, signedIn, startTestApp, type TestApp } from "../helpers.ts";

const OWNER = { username: "owner", password: "correct horse battery staple" };
let server: TestApp;
let agent: Agent;
let csrf: string;
let chartId: number;

beforeAll(async () => {
  server = await startTestApp({ "card-refresh": "300ms" });
  await server.services.accounts.createUser(OWNER, "owner");
  await server.services.projects.create("shop");
  await server.services.projects.create("other");
  for (let i = 0; i < 5; i++)
    expect(
      (await post(server, "/v1/log", { project: "shop", channel: "web", event: "Paid", user_id: `u${i}` })).status,
    ).toBe(200);
  agent = await signedIn(server, OWNER);
  csrf = await agent.csrf();
  chartId = (
    await server.services.charts.create({
      project: "shop",
      kind: "series",
      name: "Paid",
      definition: { event: "Paid", last_days: 7 },
      position: 9,
    })
  ).id;
});
afterAll(() => server.close());

const form = (path: string, fields: Record<string, string>) =>
  agent.request(path, { method: "POST", form: { _csrf: csrf, ...fields } });

describe("a dashboard card", () => {
  test("is worked out once for everyone looking, and again once events arrive", async () => {
    const stats = server.services.answers.stats;
    const before = stats.computed;
    const bodies = await Promise.all(
      Array.from({ length: 8 }, () => agent.request(`/p/shop/cards/${chartId}`).then((r) => r.text())),
    );
    expect(stats.computed - before).toBe(1);
    for (const body of bodies) expect(body).toContain("5 events in the range");

    await server.clock.advance(350); // past the refresh
    const quiet = stats.computed;
    expect(await (await agent.request(`/p/shop/cards/${chartId}`)).text()).toContain("5 events in the range");
    expect(stats.computed).toBe(quiet); // nothing arrived: the answer stands

    expect(
      (await post(server, "/v1/log", { project: "shop", channel: "web", event: "Paid", user_id: "u9" })).status,
    ).toBe(200);
    await post(server, "/v1/log", { project: "other", channel: "web", event: "Paid" });
    await server.clock.advance(350);
    const again = await Promise.all(
      Array.from({ length: 8 }, () => agent.request(`/p/shop/cards/${chartId}`).then((r) => r.text())),
    );
    expect(stats.computed - quiet).toBe(1);
    for (const body of again) expect(body).toContain("6 events in the range");
  });

  test("whose saved question no longer holds says so in the card, as a fragment htmx shows", async () => {
    // A fixed start with no end: the range grows with time, and by hour it outgrows 10,000 buckets.
    const from = Math.floor(Date.now() / 1000) - 9_000 * 3_600;
    const grown = await server.services.charts.create({
      project: "shop",
      kind: "series",
      name: "Grown",
      definition: { from, interval: "hour" },
    });
    await server.store.charts.update(
      grown.id,
      { definition: { from: from - 2_000 * 3_600, interval: "hour" } },
      Date.now(),
    );
    const res = await agent.request(`/p/shop/cards/${grown.id}`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain("This chart cannot be worked out now");
    expect(text).toContain("more than 10,000 buckets of an hour");
  });

  test("of another project, or of nothing, is a 404", async () => {
    const elsewhere = await server.services.charts.create({
      project: "other",
      kind: "series",
      name: "X",
      definition: {},
    });
    expect((await agent.request(`/p/shop/cards/${elsewhere.id}`)).status).toBe(404);
    expect((await agent.request(`/p/shop/charts/${elsewhere.id}`)).status).toBe(404);
    expect((await agent.request("/p/shop/cards/99999")).status).toBe(404);
    expect((await agent.request("/p/shop/cards/abc")).status).toBe(404);
  });
});

describe("a card whose question can no longer be asked", () => {
  test("says why in its place, on the dashboard and on the chart's page", async () => {
    await server.services.projects.createChannel("shop", "trials");
    const chart = await server.services.charts.create({
      project: "shop",
      kind: "series",
      name: "Trials",
      definition: { channel: "trials", last_days: 7 },
    });
    await server.services.projects.deleteChannel("shop", "trials");
    for (const path of [`/p/shop/cards/${chart.id}?compact=1`, `/p/shop/cards/${chart.id}`]) {
      const res = await agent.request(path);
      expect(res.status).toBe(200);
      expect(await res.text()).toMatch(
        /data-testid="chart-problem">This chart cannot be worked out now: Channel &quot;trials&quot; does not exist in project &quot;shop&quot;\. Edit it/,
      );
    }
    await server.services.charts.remove(chart.id);
  });
});

describe("a funnel's steps", () => {
  test("give each share once: of step 1, and from the second on of the step before", async () => {
    for (const user of ["f1", "f2"])
      expect(
        (await post(server, "/v1/log", { project: "shop", channel: "web", event: "Opened", user_id: user })).status,
      ).toBe(200);
    expect(
      (await post(server, "/v1/log", { project: "shop", channel: "web", event: "Paid", user_id: "f1" })).status,
    ).toBe(200);
    const chart = await server.services.charts.create({
      project: "shop",
      kind: "funnel",
      name: "Open to pay",
      definition: { steps: ["Opened", "Paid", "Paid"], last_days: 1 },
    });
    const text = (await (await agent.request(`/p/shop/cards/${chart.id}`)).text())
      .replace(/<[^>]+>/g, " ")
      .replace(/\s+/g, " ");
    expect(text).toContain("1 user 50% of step 1 median");
    expect(text).toContain("0 users 0% of step 1 0% of step 2");
    expect(text).not.toContain("of step 1 50% of step 1");
    await server.services.charts.remove(chart.id);
  });
});

describe("the builder's form", () => {
  test("saves a chart and pins it when asked, then shows it", async () => {
    const res = await form("/p/shop/charts", {
      kind: "series",
      name: "Paid by user",
      event: "Paid",
      range: "7",
      group_by: "tag",
      group_tag: "plan",
      limit: "5",
      display: "bar",
      pin: "1",
    });
    expect(res.status).toBe(303);
    const id = Number(res.headers.get("location")!.split("/").pop());
    const chart = await server.services.charts.get(id);
    expect(chart).toMatchObject({
      name: "Paid by user",
      kind: "series",
      definition: { event: "Paid", last_days: 7, group_by: "tag:plan", limit: 5, display: "bar" },
    });
    expect(chart.position).not.toBeNull();
    const page = await (await agent.request(`/p/shop/charts/${id}`)).text();
    expect(page).toContain("Paid by user");
  });

  test("a chart's page, the list and the dashboard's card say every filter it asks with", async () => {
    const res = await form("/p/shop/charts", {
      kind: "series",
      name: "Pro by alice",
      event: "Paid",
      tag: "plan:pro",
      user_id: "alice",
      q: "refund",
      range: "7",
      pin: "1",
    });
    expect(res.status).toBe(303);
    const id = res.headers.get("location")!.split("/").pop();
    const said = "events, “Paid”, plan:pro, user alice, words “refund”, per day, last 7 days";
    for (const path of [`/p/shop/charts/${id}`, "/p/shop/charts", "/p/shop"])
      expect(await (await agent.request(path)).text()).toContain(said);
  });

  test("a tag filter that is not key:value is named next to Tags, not saved", async () => {
    const res = await form("/p/shop/charts", {
      kind: "series",
      name: "Bad tag",
      tag: "Plan:pro",
      range: "7",
      pin: "1",
    });
    expect(res.status).toBe(422);
    expect(await res.text()).toMatch(/id="chart-tag-error">[^<]*key:value/);
    expect((await server.services.charts.list("shop")).map((c) => c.name)).not.toContain("Bad tag");
  });

  test("says which field is wrong, keeping what was typed", async () => {
    const res = await form("/p/shop/charts", {
      kind: "series",
      name: "Bad",
      event: "Paid",
      range: "custom",
      from: "2026-05-10",
      to: "2026-05-01",
      group_by: "tag",
      group_tag: "Not A Key",
    });
    expect(res.status).toBe(422);
    const page = await res.text();
    expect(page).toMatch(/id="chart-group-tag-error">[^<]*tag key/);
    expect(page).toContain('value="Not A Key"');
    const empty = await form("/p/shop/charts", { kind: "funnel", name: "", step: "Paid" });
    expect(empty.status).toBe(422);
    const text = await empty.text();
    expect(text).toContain('id="chart-name-error"');
    expect(text).toContain('id="chart-steps-error"');
  });

  test("refuses a kind of chart that is none, naming kind, and saves nothing", async () => {
    const before = (await server.services.charts.list("shop")).length;
    const kinds = ["zzz", "__proto__", "constructor", "toString", "hasOwnProperty"];
    const asked = [
      ...kinds.map((kind) => ({ what: `new ${kind}`, send: () => agent.request(`/p/shop/charts/new?kind=${kind}`) })),
      ...kinds.map((kind) => ({
        what: `preview ${kind}`,
        send: () => agent.request(`/p/shop/charts/preview?kind=${kind}&event=Paid&range=7`),
      })),
      ...kinds.flatMap((kind) => [
        { what: `save ${kind}, no name`, send: () => form("/p/shop/charts", { kind, event: "Paid", range: "7" }) },
        {
          what: `save ${kind}, named`,
          send: () => form("/p/shop/charts", { kind, name: `Kind ${kind}`, event: "Paid", range: "7" }),
        },
      ]),
    ];
    for (const { what, send } of asked) {
      const res = await send();
      const page = await res.text();
      expect({ what, status: res.status }).toEqual({ what, status: 400 });
      expect(page).toContain("kind: must be series, funnel, metric or retention");
    }
    // htmx and API-style clients are told the same, in their own shapes.
    const fragment = await agent.request("/p/shop/charts/preview?kind=zzz", { headers: { "HX-Request": "true" } });
    expect(fragment.status).toBe(400);
    expect(await fragment.text()).toContain("kind: must be series, funnel, metric or retention");
    expect((await server.services.charts.list("shop")).length).toBe(before);
    // No kind is a series chart, as the builder's first tab is.
    expect((await agent.request("/p/shop/charts/new")).status).toBe(200);
    expect((await agent.request("/p/shop/charts/new?kind=")).status).toBe(200);
  });

  test("previews a question as a fragment, its URL following the question", async () => {
    const res = await agent.request(
      "/p/shop/charts/preview?kind=series&event=Paid&range=7&path=/p/shop/charts/new&_csrf=x",
    );
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("events in the range");
    expect(res.headers.get("hx-replace-url")).toBe("/p/shop/charts/new?kind=series&event=Paid&range=7");
    const bad = await agent.request("/p/shop/charts/preview?kind=series&interval=fortnight");
    expect(await bad.text()).toContain("must be hour, day, week or month");
    // A path no header can hold (a line break, U+2028, NUL) or not the builder's own: the builder's URL instead, never a 500.
    for (const path of [
      "/p/shop/charts/\r\nX-Evil: 1",
      "/p/shop/charts/\u2028",
      "/p/shop/charts/\u0000",
      "/p/shop/charts/../../settings",
    ]) {
      const odd = await agent.request(`/p/shop/charts/preview?kind=series&range=7&path=${encodeURIComponent(path)}`);
      expect({ path, status: odd.status, url: odd.headers.get("hx-replace-url") }).toEqual({
        path,
        status: 200,
        url: "/p/shop/charts/new?kind=series&range=7",
      });
    }
    const edit = await agent.request(`/p/shop/charts/preview?kind=series&range=7&path=/p/shop/charts/${chartId}/edit`);
    expect(edit.headers.get("hx-replace-url")).toBe(`/p/shop/charts/${chartId}/edit?kind=series&range=7`);
  });
});

describe("arranging the dashboard", () => {
  test("one move at a time; a card that is not there is refused", async () => {
    const cards = async () =>
      (await server.services.charts.dashboard("shop")).map((c) => (c.kind === "activity" ? "activity" : c.chart.name));
    const start = await cards();
    expect(start[0]).toBe("activity");
    expect((await form("/p/shop/dashboard", { card: "activity", move: "down" })).status).toBe(200);
    expect((await cards())[1]).toBe("activity");
    expect((await form("/p/shop/dashboard", { card: "activity", move: "remove" })).status).toBe(200);
    expect(await cards()).not.toContain("activity");
    expect((await form("/p/shop/dashboard", { card: "activity", move: "add" })).status).toBe(200);
    expect((await cards()).at(-1)).toBe("activity");
    expect((await form("/p/shop/dashboard", { card: "nope", move: "up" })).status).toBe(400);
    expect((await form("/p/shop/dashboard", { card: String(chartId), move: "sideways" })).status).toBe(400);
    expect((await form("/p/shop/dashboard", { card: "99999", move: "add" })).status).toBe(404);
    const elsewhere = await server.services.charts.create({
      project: "other",
      kind: "series",
      name: "Y",
      definition: {},
    });
    expect((await form("/p/shop/dashboard", { card: String(elsewhere.id), move: "add" })).status).toBe(404);
    expect(
      (await agent.request("/p/shop/dashboard", { method: "POST", form: { card: "activity", move: "up" } })).status,
    ).toBe(403); // no CSRF token
  });
});
