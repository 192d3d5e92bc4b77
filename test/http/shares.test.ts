// Shared pages (/v1/shares, /s/<key>): made, listed and revoked over the API (a revoked link is a
// 404 at once, its open stream ends), ids of another project refused with a 422 naming them, tokens
// limited to their projects; in the dashboard only admins make and revoke them; and a shared page's
// HTML, its cards, its status and its stream hold nothing beyond what was chosen: distinctive
// strings seeded in another project, in events' user ids, in unchosen charts and in events no chosen
// card shows never appear.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { TestClock } from "../clock.ts";
import {
  type Agent,
  call,
  eventually,
  openSse,
  signedIn,
  startTestApp,
  startTestServer,
  type TestApp,
  type TestServer,
} from "../helpers.ts";

let server: TestServer;
const as = {} as Record<"admin" | "member" | "viewer", Agent>;
const ids = { paid: 0, funnel: 0, unchosen: 0, otherChart: 0, check: 0, alert: 0, otherCheck: 0 };

/** Strings that must never reach a shared page. */
const SECRETS = [
  "USER-SECRET-ALICE",
  "USER-SECRET-BOB",
  "USER-SECRET-LIVE",
  "UNCHOSEN-CHART-NAME",
  "SECRET-EVENT-NAME",
  "SECRET-DESCRIPTION",
  "OTHER-PROJECT-SECRET",
  "OTHER-CHART-SECRET",
  "OTHER-METRIC-SECRET",
  "OTHER-CHECK-SECRET",
];

const log = (body: Record<string, unknown>) => call(server, { path: "/v1/log", body });
const share = (body: Record<string, unknown>, token?: string) => call(server, { path: "/v1/shares", body, token });
const keyOf = (url: string) => url.slice(url.lastIndexOf("/s/") + 3);

beforeAll(async () => {
  server = await startTestServer({ "alert-interval": "3600", "card-refresh": "1s" });
  const s = server.services;
  for (const name of ["shop", "other"]) await s.projects.create(name);
  for (const role of ["admin", "member", "viewer"] as const) {
    await s.accounts.createUser({ username: role, password: `${role} password 1` }, role);
    as[role] = await signedIn(server, { username: role, password: `${role} password 1` });
  }
  for (const user of ["USER-SECRET-ALICE", "USER-SECRET-BOB"])
    expect((await log({ project: "shop", channel: "sales", event: "signup", user_id: user })).status).toBe(200);
  expect((await log({ project: "shop", channel: "sales", event: "paid", user_id: "USER-SECRET-ALICE" })).status).toBe(
    200,
  );
  expect(
    (await log({ project: "shop", channel: "ops", event: "SECRET-EVENT-NAME", description: "SECRET-DESCRIPTION" }))
      .status,
  ).toBe(200);
  expect(
    (await log({ project: "other", channel: "x", event: "OTHER-PROJECT-SECRET", user_id: "OTHER-PROJECT-SECRET" }))
      .status,
  ).toBe(200);
  for (const [project, title, value] of [
    ["shop", "MRR", 1234],
    ["shop", "Queue", 7],
    ["other", "OTHER-METRIC-SECRET", 1],
  ] as const)
    expect((await call(server, { path: "/v1/insight", body: { project, title, value } })).status).toBe(200);
  ids.paid = (
    await s.charts.create({
      project: "shop",
      kind: "series",
      name: "Paid per day",
      definition: { event: "paid", last_days: 7 },
    })
  ).id;
  ids.funnel = (
    await s.charts.create({
      project: "shop",
      kind: "funnel",
      name: "Signup to paid",
      definition: { steps: ["signup", "paid"], last_days: 7 },
    })
  ).id;
  ids.unchosen = (
    await s.charts.create({
      project: "shop",
      kind: "series",
      name: "UNCHOSEN-CHART-NAME",
      definition: { last_days: 7 },
    })
  ).id;
  ids.otherChart = (
    await s.charts.create({
      project: "other",
      kind: "series",
      name: "OTHER-CHART-SECRET",
      definition: { last_days: 7 },
    })
  ).id;
  ids.check = (await s.checks.create({ project: "shop", name: "Nightly export", period: 86400, grace: 3600 })).id;
  ids.otherCheck = (await s.checks.create({ project: "other", name: "OTHER-CHECK-SECRET", period: 60 })).id;
  ids.alert = (
    await s.alerts.create({ project: "shop", name: "Payments keep coming", kind: "absence", period: 3600 })
  ).id;
});
afterAll(() => server.close());

describe("shares over the API", () => {
  test("are made (id and url), listed, and revoked: the link answers 404 at once", async () => {
    const made = await share({ project: "shop", kind: "dashboard", charts: [ids.paid] });
    expect(made.status).toBe(200);
    expect(made.json.id).toEqual(expect.any(Number));
    expect(made.json.url).toMatch(new RegExp(`^${server.services.config.baseUrl}/s/[A-Za-z0-9_-]{43}$`));
    const listed = await call(server, { path: "/v1/shares?project=shop" });
    expect(listed.json.shares.map((x: { id: number }) => x.id)).toContain(made.json.id);
    const page = await server.fetch(`/s/${keyOf(made.json.url)}`);
    expect(page.status).toBe(200);
    await page.text();
    expect((await call(server, { method: "DELETE", path: `/v1/shares/${made.json.id}` })).status).toBe(200);
    const after = await server.fetch(`/s/${keyOf(made.json.url)}`);
    expect(after.status).toBe(404);
    expect(after.headers.get("x-robots-tag")).toBe("noindex");
    // Whoever opens it learns that it was revoked and what to do, not only that nothing is here.
    const words = await after.text();
    expect(words).toContain("revoked");
    expect(words).toContain("new link");
    expect((await server.fetch(`/s/${keyOf(made.json.url)}/cards/${ids.paid}?compact=1`)).status).toBe(404);
    expect(
      (await call(server, { path: "/v1/shares?project=shop" })).json.shares.map((x: { id: number }) => x.id),
    ).not.toContain(made.json.id);
    expect((await call(server, { method: "DELETE", path: `/v1/shares/${made.json.id}` })).status).toBe(404);
  });

  test("ids of another project are refused with a 422 that names them, and nothing is stored", async () => {
    const before = (await call(server, { path: "/v1/shares?project=shop" })).json.shares.length;
    const charts = await share({ project: "shop", kind: "dashboard", charts: [ids.paid, ids.otherChart] });
    expect(charts.status).toBe(422);
    expect(charts.json.error).toBe("not_in_project");
    expect(charts.json.message).toContain(`chart ${ids.otherChart}`);
    expect(charts.json.validation.body[0].path).toBe("charts[1]");
    const status = await share({
      project: "shop",
      kind: "status",
      checks: [ids.otherCheck],
      alerts: [999999],
      metrics: ["OTHER-METRIC-SECRET"],
    });
    expect(status.status).toBe(422);
    expect(status.json.validation.body.map((i: { path: string }) => i.path)).toEqual([
      "checks[0]",
      "alerts[0]",
      "metrics[0]",
    ]);
    const bad = await share({ project: "shop", kind: "dashboard" });
    expect(bad.status).toBe(400);
    expect(bad.json.validation.body[0].path).toBe("charts");
    expect((await share({ project: "shop", kind: "poster", charts: [ids.paid] })).status).toBe(400);
    expect((await call(server, { path: "/v1/shares?project=shop" })).json.shares.length).toBe(before);
  });

  test("tokens limited to some projects reach only theirs; public tokens none", async () => {
    const onlyOther = (await server.services.tokens.create({ name: "other only", projects: ["other"] })).token;
    const pub = (await server.services.tokens.create({ name: "site", kind: "public", project: "shop" })).token;
    expect((await share({ project: "shop", kind: "dashboard", charts: [ids.paid] }, onlyOther)).status).toBe(403);
    expect((await call(server, { path: "/v1/shares?project=shop", token: onlyOther })).status).toBe(403);
    expect((await share({ project: "shop", kind: "dashboard", charts: [ids.paid] }, pub)).status).toBe(403);
    const mine = await share({ project: "other", kind: "dashboard", charts: [ids.otherChart] }, onlyOther);
    expect(mine.status).toBe(200);
    const shops = await share({ project: "shop", kind: "dashboard", charts: [ids.paid] });
    expect(
      (await call(server, { method: "DELETE", path: `/v1/shares/${shops.json.id}`, token: onlyOther })).status,
    ).toBe(403);
    expect(
      (await call(server, { method: "DELETE", path: `/v1/shares/${mine.json.id}`, token: onlyOther })).status,
    ).toBe(200);
  });
});

describe("shares in the dashboard", () => {
  test("only admins make and revoke them; members and viewers are refused", async () => {
    const form = (csrf: string, more: Record<string, string> = {}) => ({
      method: "POST",
      headers: { "X-CSRF-Token": csrf },
      form: { kind: "dashboard", charts: String(ids.paid), title: "From the dashboard", text: "", ...more },
    });
    for (const role of ["member", "viewer"] as const) {
      const res = await as[role].request("/p/shop/shares", form(await as[role].csrf()));
      expect({ role, status: res.status }).toEqual({ role, status: 403 });
    }
    const made = await as.admin.request("/p/shop/shares", form(await as.admin.csrf()));
    expect(made.status).toBe(303);
    const settings = await (await as.admin.request("/p/shop/settings")).text();
    expect(settings).toContain("From the dashboard");
    const { id, url } = (await call(server, { path: "/v1/shares?project=shop" })).json.shares.find(
      (x: { title: string }) => x.title === "From the dashboard",
    );
    expect(settings).toContain(`value="${url}"`);
    const memberView = await (await as.member.request("/p/shop/settings")).text();
    expect(memberView).not.toContain('data-testid="revoke-share"');
    const refused = await as.member.request(`/p/shop/shares/${id}/revoke`, {
      method: "POST",
      headers: { "X-CSRF-Token": await as.member.csrf() },
    });
    expect(refused.status).toBe(403);
    expect((await server.fetch(`/s/${keyOf(url!)}`)).status).toBe(200);
    const revoked = await as.admin.request(`/p/shop/shares/${id}/revoke`, {
      method: "POST",
      headers: { "X-CSRF-Token": await as.admin.csrf() },
    });
    expect(revoked.status).toBe(303);
    expect((await server.fetch(`/s/${keyOf(url!)}`)).status).toBe(404);
  });

  test("a status page made in the dashboard takes the time zone of its days", async () => {
    const post = async (zone: string) =>
      as.admin.request("/p/shop/shares", {
        method: "POST",
        headers: { "X-CSRF-Token": await as.admin.csrf() },
        form: { kind: "status", checks: String(ids.check), title: `Zoned ${zone}`, text: "", time_zone: zone },
      });
    const settings = await (await as.admin.request("/p/shop/settings")).text();
    expect(settings).toContain('name="time_zone"');
    expect((await post("Europe/Berlin")).status).toBe(303);
    const made = (await call(server, { path: "/v1/shares?project=shop" })).json.shares.find(
      (x: { title: string }) => x.title === "Zoned Europe/Berlin",
    );
    expect(made.time_zone).toBe("Europe/Berlin");
    expect(await (await as.admin.request("/p/shop/settings")).text()).toContain("days in Europe/Berlin");
    expect((await post("Nowhere/Else")).status).toBe(400);
    const titles = (await call(server, { path: "/v1/shares?project=shop" })).json.shares.map(
      (x: { title: string }) => x.title,
    );
    expect(titles).not.toContain("Zoned Nowhere/Else");
  });
});

describe("a shared page", () => {
  const leaks = (text: string) => SECRETS.filter((s) => text.includes(s));

  test("a dashboard's HTML, its cards and its stream hold only the chosen cards: no user id, nothing of another project", async () => {
    const made = await share({
      project: "shop",
      kind: "dashboard",
      charts: [ids.paid, ids.funnel],
      title: "Shop numbers",
    });
    const key = keyOf(made.json.url);
    const page = await server.fetch(`/s/${key}`);
    const html = await page.text();
    expect(page.headers.get("x-robots-tag")).toBe("noindex");
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(html).toContain('<meta name="robots" content="noindex">');
    expect(html).toContain("Paid per day");
    expect(html).toContain("Signup to paid");
    expect(html).not.toContain('href="/p/');
    let all = html;
    for (const id of [ids.paid, ids.funnel]) {
      const card = await server.fetch(`/s/${key}/cards/${id}?compact=1`);
      expect(card.status).toBe(200);
      all += await card.text();
    }
    expect(all).toContain("1 dropped");
    expect(all).not.toContain("/funnel/dropped");
    // A chart of the project that was not chosen, and one of another project, are not there.
    expect((await server.fetch(`/s/${key}/cards/${ids.unchosen}?compact=1`)).status).toBe(404);
    expect((await server.fetch(`/s/${key}/cards/${ids.otherChart}?compact=1`)).status).toBe(404);
    const stream = await openSse(`${server.url}/s/${key}/live`);
    expect(stream.response.headers.get("x-robots-tag")).toBe("noindex");
    await log({ project: "other", channel: "x", event: "OTHER-PROJECT-SECRET", user_id: "OTHER-PROJECT-SECRET" });
    await log({
      project: "shop",
      channel: "sales",
      event: "paid",
      user_id: "USER-SECRET-LIVE",
      description: "SECRET-DESCRIPTION",
    });
    const frames = await stream.waitFor(1);
    expect(frames.map((f) => f.event)).toEqual(frames.map(() => "refresh"));
    all += JSON.stringify(frames) + stream.comments.join("\n");
    expect(leaks(all)).toEqual([]);
    // Revoked, its open stream ends.
    await call(server, { method: "DELETE", path: `/v1/shares/${made.json.id}` });
    await eventually(() => expect(stream.ended).toBe(true));
    expect((await server.fetch(`/s/${key}/live`)).status).toBe(404);
  });

  test("a status page shows the chosen checks, rules and metrics, their 90 days, and nothing else", async () => {
    const made = await share({
      project: "shop",
      kind: "status",
      checks: [ids.check],
      alerts: [ids.alert],
      metrics: ["MRR"],
      title: "Shop status",
      text: "Orders and payments.",
    });
    expect(made.status).toBe(200);
    const key = keyOf(made.json.url);
    const page = await server.fetch(`/s/${key}?kiosk=1`);
    const html = await page.text();
    expect(html).toContain('class="shared-page kiosk"');
    for (const shown of [
      "Shop status",
      "Orders and payments.",
      "Nightly export",
      "Payments keep coming",
      "MRR",
      "1,234",
    ])
      expect(html).toContain(shown);
    expect(html).not.toContain("Queue");
    expect(html.match(/class="day"/g)?.length).toBe(180);
    const body = await (await server.fetch(`/s/${key}/status`)).text();
    expect(body).toContain("Nightly export");
    const stream = await openSse(`${server.url}/s/${key}/live`);
    await call(server, { path: "/v1/insight", body: { project: "shop", title: "MRR", value: 2000 } });
    await log({ project: "shop", channel: "sales", event: "paid", user_id: "USER-SECRET-LIVE" });
    const frames = await stream.waitFor(1);
    expect(leaks(html + body + JSON.stringify(frames))).toEqual([]);
    await eventually(async () => expect(await (await server.fetch(`/s/${key}/status`)).text()).toContain("2,000"));
    stream.close();
  });

  test("a key that names nothing is a 404", async () => {
    expect((await server.fetch("/s/nothing")).status).toBe(404);
    expect((await server.fetch(`/s/${"A".repeat(43)}`)).status).toBe(404);
    expect((await server.fetch(`/s/${"A".repeat(43)}/status`)).status).toBe(404);
  });
});

describe("a status page's days in its time zone", () => {
  // Thursday 12 March 2026, 11:00 in New York (EDT since Sunday 8 March, a day of 23 hours there).
  const NOW = Date.UTC(2026, 2, 12, 15, 0);
  let app: TestApp;
  let check = 0;

  beforeAll(async () => {
    app = await startTestApp({ "alert-interval": "3600" }, undefined, {
      clock: new TestClock(NOW, { stopped: true }),
    });
    await app.services.projects.create("ops");
    check = (
      await app.services.checks.create(
        { project: "ops", name: "Backup", slug: "backup", period: 86400 },
        undefined,
        Date.UTC(2025, 11, 1),
      )
    ).id;
    // The check's notices, as the check runner writes them: down, then up again 20 and 10 minutes later.
    const notice = async (iso: string, state: "down" | "up") =>
      expect(
        (
          await call(app, {
            path: "/v1/log",
            body: {
              project: "ops",
              channel: "alerts",
              event: `Backup is ${state}`,
              tags: { check: "backup", state },
              timestamp: Date.parse(iso) / 1000,
            },
          })
        ).status,
      ).toBe(200);
    await notice("2026-03-05T04:30:00Z", "down"); // 23:30 on 4 March in New York, 5 March in UTC
    await notice("2026-03-05T04:50:00Z", "up");
    await notice("2026-03-09T04:30:00Z", "down"); // 00:30 on 9 March in New York (EDT): a fixed offset says the 8th
    await notice("2026-03-09T04:40:00Z", "up");
  });
  afterAll(() => app.close());

  /** The page's bars: each one's date and state, oldest first. */
  async function bars(timeZone?: string): Promise<{ zone: string; days: [string, string][] }> {
    const made = await call(app, {
      path: "/v1/shares",
      body: { project: "ops", kind: "status", checks: [check], ...(timeZone && { time_zone: timeZone }) },
    });
    expect(made.status).toBe(200);
    const page = await (await app.fetch(new URL(made.json.url).pathname)).text();
    const days = [...page.matchAll(/data-day="(\w+)" title="(\d{4}-\d\d-\d\d):/g)].map(
      (m) => [m[2]!, m[1]!] as [string, string],
    );
    return { zone: made.json.share.time_zone, days };
  }
  const down = (days: [string, string][]) => days.filter(([, state]) => state === "down").map(([date]) => date);

  test("are UTC days unless a zone is chosen", async () => {
    const { zone, days } = await bars();
    expect(zone).toBe("UTC");
    expect(days.length).toBe(90);
    expect(days.at(-1)![0]).toBe("2026-03-12");
    expect(down(days)).toEqual(["2026-03-05", "2026-03-09"]);
  });

  test("are the zone's days, from its midnight to its midnight, 23 hours long when its clocks go forward", async () => {
    const { zone, days } = await bars("america/new_york");
    expect(zone).toBe("America/New_York");
    expect(days.length).toBe(90);
    expect(new Set(days.map(([date]) => date)).size).toBe(90);
    expect(days[0]![0]).toBe("2025-12-13");
    expect(days.at(-1)![0]).toBe("2026-03-12");
    expect(down(days)).toEqual(["2026-03-04", "2026-03-09"]);
    // Every other watched day was up (the check was made before them all).
    expect(days.filter(([, state]) => state === "none")).toEqual([]);
  });

  test("notices are read in pages: a change older than the last 1,100 notices still shows", async () => {
    const sync = (
      await app.services.checks.create(
        { project: "ops", name: "Sync", slug: "sync", period: 3600 },
        undefined,
        Date.UTC(2026, 0, 1),
      )
    ).id;
    const notice = async (at: number, state: "down" | "up") => {
      const event = { event: `Sync is ${state}`, tags: { check: "sync", state }, timestamp: at / 1000 };
      const r = await call(app, { path: "/v1/log", body: { project: "ops", channel: "alerts", ...event } });
      expect(r.status).toBe(200);
    };
    await notice(Date.UTC(2026, 0, 20, 8), "down");
    await notice(Date.UTC(2026, 0, 20, 9), "up");
    // Then 1,100 notices of a check that flaps, down and up by turns, from 1 March to 11 March (04:26).
    const start = Date.UTC(2026, 2, 1);
    for (let i = 0; i < 1100; i += 100)
      await Promise.all(
        Array.from({ length: 100 }, (_, j) => notice(start + (i + j) * 800_000, (i + j) % 2 ? "up" : "down")),
      );
    const made = await call(app, { path: "/v1/shares", body: { project: "ops", kind: "status", checks: [sync] } });
    const page = await (await app.fetch(new URL(made.json.url).pathname)).text();
    const days = [...page.matchAll(/data-day="(\w+)" title="(\d{4}-\d\d-\d\d):/g)].map((m) => [m[2]!, m[1]!] as const);
    const march = Array.from({ length: 11 }, (_, d) => `2026-03-${String(d + 1).padStart(2, "0")}`);
    expect(days.filter(([, state]) => state === "down").map(([date]) => date)).toEqual(["2026-01-20", ...march]);
    expect(days.filter(([date]) => date > "2026-01-20" && date < "2026-03-01").every(([, s]) => s === "up")).toBe(true);
  });

  test("an unknown zone, or a zone on a dashboard share, is a 400 naming time_zone, and nothing is stored", async () => {
    const before = (await call(app, { path: "/v1/shares?project=ops" })).json.shares.length;
    const unknown = await call(app, {
      path: "/v1/shares",
      body: { project: "ops", kind: "status", checks: [check], time_zone: "Mars/Olympus_Mons" },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.json.validation.body.map((i: { path: string }) => i.path)).toEqual(["time_zone"]);
    expect(unknown.json.validation.body[0].message).toContain("time zone");
    const chart = await app.services.charts.create({
      project: "ops",
      kind: "series",
      name: "Events",
      definition: { last_days: 7 },
    });
    const dashboard = await call(app, {
      path: "/v1/shares",
      body: { project: "ops", kind: "dashboard", charts: [chart.id], time_zone: "Europe/Paris" },
    });
    expect(dashboard.status).toBe(400);
    expect(dashboard.json.validation.body.map((i: { path: string }) => i.path)).toEqual(["time_zone"]);
    expect((await call(app, { path: "/v1/shares?project=ops" })).json.shares.length).toBe(before);
  });
});
