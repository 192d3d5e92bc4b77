// Alert rules over the API, and what the runner makes of them: each kind fires once and is back
// once, as events in the project's alerts channel with notify (delivered like any notice), a repeat
// while it keeps firing, pause and resume, a matching event settling an absence rule at once, and
// every bad field a 400 that names it. Rounds are run at chosen times, and the service's clock is
// the test's (the runner's own timer fires only when it is moved on), so nothing here waits for
// real periods. In-process: requests go through app.handle.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { AlertRunner } from "../../src/domain/alert-runner.ts";
import { TestClock } from "../clock.ts";
import { expectRefused, startAlerting } from "../alerting.ts";
import { call, eventually, post, signedIn, type TestApp } from "../helpers.ts";
import type { Receiver } from "../receiver.ts";

const MIN = 60_000;
let server: TestApp;
let hook: Receiver;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ server, hook, close } = await startAlerting());
});
afterAll(() => close());

const make = (body: Record<string, unknown>) => call(server, { path: "/v1/alerts", body: { project: "ops", ...body } });
const round = (at: number) => server.services.alerts.runner.round(at);
type Notice = { id: number; event: string; description: string; tags: Record<string, unknown>; notify: boolean };
/** The alerts channel's events, oldest first (none before its first notice made the channel). */
const notices = async (): Promise<Notice[]> =>
  (await call(server, { path: "/v1/events?project=ops&channel=alerts&limit=200" })).json.events ?? [];
/** One rule's notices in the order they were recorded (rounds run at chosen times give them times ahead of now). */
const noticesOf = async (id: number) =>
  (await notices()).filter((e) => e.tags.alert === id).sort((a, b) => a.id - b.id);

describe("alert rules over the API", () => {
  test("are made, listed, read, changed, paused, resumed and deleted", async () => {
    const made = await make({
      name: "Nightly backup",
      kind: "absence",
      filter: { channel: "cron", event: "Backup done", tags: { host: "db1" } },
      period: 86400,
      grace: 600,
    });
    expect(made.status).toBe(200);
    const rule = made.json.alert;
    expect(rule).toMatchObject({
      project: "ops",
      name: "Nightly backup",
      kind: "absence",
      filter: { channel: "cron", event: "Backup done", tags: { host: "db1" } },
      period: 86400,
      grace: 600,
      cron: null,
      paused: false,
      state: "ok",
      last_checked: null,
    });
    expect(typeof rule.since).toBe("number");
    expect(
      (await call(server, { path: "/v1/alerts?project=ops" })).json.alerts.map((a: { id: number }) => a.id),
    ).toContain(rule.id);
    expect((await call(server, { path: `/v1/alerts/${rule.id}` })).json.alert).toEqual(rule);

    const paused = await call(server, {
      method: "PATCH",
      path: `/v1/alerts/${rule.id}`,
      body: { paused: true, grace: 900, repeat: 3600 },
    });
    expect(paused.json.alert).toMatchObject({ paused: true, state: "paused", grace: 900, repeat: 3600, period: 86400 });
    const resumed = await call(server, {
      method: "PATCH",
      path: `/v1/alerts/${rule.id}`,
      body: { paused: false, repeat: null },
    });
    expect(resumed.json.alert).toMatchObject({ paused: false, state: "ok", repeat: null });
    expect(resumed.json.alert.since).toBeGreaterThanOrEqual(rule.since);

    expect((await call(server, { method: "DELETE", path: `/v1/alerts/${rule.id}` })).status).toBe(200);
    expect((await call(server, { path: `/v1/alerts/${rule.id}` })).status).toBe(404);
    expect((await call(server, { method: "DELETE", path: `/v1/alerts/${rule.id}` })).status).toBe(404);
  });

  test("bad input is a 400 that names the field", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ name: "x", kind: "silence", period: 60 }, "kind"],
      [{ name: "x", kind: "absence" }, "period"],
      [{ name: "x", kind: "absence", period: 2 }, "period"],
      [{ name: "x", kind: "absence", period: 60, cron: "0 3 * * *" }, "cron"],
      [{ name: "x", kind: "absence", cron: "every day at 3" }, "cron"],
      [{ name: "x", kind: "absence", cron: "0 3 * * *", tz: "Mars/Olympus" }, "tz"],
      // A schedule that never comes, and one with seconds (croner's sixth field): a rule can mean neither.
      [{ name: "x", kind: "absence", cron: "0 0 31 2 *", tz: "Europe/Paris" }, "cron"],
      [{ name: "x", kind: "absence", cron: "*/2 * * * * *" }, "cron"],
      [{ name: "x", kind: "count", window: 300, above: 10, below: 1 }, "below"],
      [{ name: "x", kind: "count", above: 10 }, "window"],
      [{ name: "x", kind: "metric", metric: "Queue" }, "above"],
      [{ name: "x", kind: "metric", above: 10 }, "metric"],
      [{ name: "", kind: "count", window: 60, above: 1 }, "name"],
      [{ name: "x", kind: "count", window: 60, above: 1, filter: { channel: "Not A Name" } }, "filter.channel"],
      [{ name: "x", kind: "count", window: 60, above: "ten" }, "above"],
    ];
    for (const [body, field] of cases) expectRefused(await make(body), body, field);
    const extra = await make({ name: "x", kind: "count", window: 60, above: 1, extra: true });
    expect(extra.status).toBe(400);
    expect(extra.json.message).toContain("unknown field extra");
    const unknown = await call(server, {
      path: "/v1/alerts",
      body: { project: "nope", name: "x", kind: "count", window: 60, above: 1 },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.json.validation.body[0].path).toBe("project");
    expect((await call(server, { method: "PATCH", path: "/v1/alerts/abc", body: {} })).status).toBe(400);
    expect((await call(server, { method: "PATCH", path: "/v1/alerts/99999", body: { paused: true } })).status).toBe(
      404,
    );
    const publicToken = (await server.services.tokens.create({ name: "site", kind: "public", project: "ops" })).token;
    expect((await call(server, { path: "/v1/alerts?project=ops", token: publicToken })).status).toBe(403);
  });
});

describe("the runner", () => {
  test("an absence rule fires once when nothing came for period + grace, and a matching event brings it back at once", async () => {
    const start = Date.now();
    const rule = (
      await make({
        name: "Heartbeat",
        kind: "absence",
        filter: { channel: "beats", tags: { host: "db1" } },
        period: 60,
        grace: 10,
      })
    ).json.alert;
    await round(start + 30_000);
    await round(start + 65_000);
    expect(await noticesOf(rule.id)).toEqual([]);
    // A beat of another host does not count.
    expect(
      (await post(server, "/v1/log", { project: "ops", channel: "beats", event: "beat", tags: { host: "db2" } }))
        .status,
    ).toBe(200);
    await round(start + 75_000);
    await round(start + 90_000);
    const fired = await noticesOf(rule.id);
    expect(fired).toHaveLength(1);
    expect(fired[0]).toMatchObject({ tags: { alert: rule.id, state: "firing", kind: "absence" }, notify: true });
    expect(fired[0]!.event).toMatch(/^Heartbeat: no event for /);
    expect((await call(server, { path: `/v1/alerts/${rule.id}` })).json.alert.state).toBe("firing");

    expect(
      (await post(server, "/v1/log", { project: "ops", channel: "beats", event: "beat", tags: { host: "db1" } }))
        .status,
    ).toBe(200);
    const back = await eventually(async () => {
      const all = await noticesOf(rule.id);
      expect(all).toHaveLength(2);
      return all[1]!;
    });
    expect(back).toMatchObject({ event: "Heartbeat is back", tags: { alert: rule.id, state: "resolved" } });
    expect((await call(server, { path: `/v1/alerts/${rule.id}` })).json.alert).toMatchObject({ state: "ok" });
    await round(Date.now() + 1000);
    expect(await noticesOf(rule.id)).toHaveLength(2);
    // Each notice was queued and delivered like any notify event.
    await eventually(() =>
      expect(hook.requests.filter((r) => JSON.parse(r.body).event?.tags?.alert === rule.id)).toHaveLength(2),
    );
  });

  test("a count rule fires above its limit and is back when the window has passed", async () => {
    const rule = (
      await make({ name: "Error burst", kind: "count", filter: { channel: "errors" }, window: 300, above: 3 })
    ).json.alert;
    for (let i = 0; i < 5; i++)
      expect((await post(server, "/v1/log", { project: "ops", channel: "errors", event: "Boom" })).status).toBe(200);
    const now = Date.now() + 1000;
    await round(now);
    await round(now + 1000);
    const fired = await noticesOf(rule.id);
    expect(fired).toHaveLength(1);
    expect(fired[0]!.event).toBe("Error burst: 5 events in 5m");
    expect(fired[0]!.description).toContain("the rule fires above 3");
    await round(now + 6 * MIN);
    const all = await noticesOf(rule.id);
    expect(all.map((n) => n.tags.state)).toEqual(["firing", "resolved"]);
    expect(all[1]!.event).toBe("Error burst is back: 0 in 5m");
  });

  test("a metric rule fires above its limit, repeats while it keeps firing, and is back below it", async () => {
    const rule = (await make({ name: "Queue", kind: "metric", metric: "Queue depth", above: 100, repeat: 600 })).json
      .alert;
    const now = Date.now();
    await round(now); // no such metric yet: nothing to say
    expect((await post(server, "/send-metric", { project: "ops", title: "Queue depth", value: 140 })).status).toBe(200);
    await round(now + 1000);
    await round(now + 5 * MIN); // not yet a repeat
    await round(now + 11 * MIN); // a repeat
    expect((await post(server, "/send-metric", { project: "ops", title: "Queue depth", value: 0.0374 })).status).toBe(
      200,
    );
    await round(now + 12 * MIN);
    const all = await noticesOf(rule.id);
    expect(all.map((n) => [n.tags.state, n.tags.repeat ?? false])).toEqual([
      ["firing", false],
      ["firing", true],
      ["resolved", false],
    ]);
    expect(all[0]!.event).toBe("Queue: Queue depth is 140");
    expect(all[2]!.event).toBe("Queue is back: Queue depth is 0.0374");
  });

  test("a paused rule is not checked; resumed, it watches from then", async () => {
    const rule = (
      await make({
        name: "Paused beat",
        kind: "absence",
        filter: { channel: "quiet" },
        period: 60,
        grace: 0,
        paused: true,
      })
    ).json.alert;
    expect(rule.state).toBe("paused");
    await round(Date.now() + 10 * MIN);
    expect(await noticesOf(rule.id)).toEqual([]);
    const resumed = (await call(server, { method: "PATCH", path: `/v1/alerts/${rule.id}`, body: { paused: false } }))
      .json.alert;
    expect(resumed.state).toBe("ok");
    await round(resumed.since * 1000 + 30_000);
    expect(await noticesOf(rule.id)).toEqual([]);
    await round(resumed.since * 1000 + 70_000);
    expect((await noticesOf(rule.id)).map((n) => n.tags.state)).toEqual(["firing"]);
    expect((await call(server, { path: `/v1/alerts/${rule.id}` })).json.alert.last_checked).toBe(
      Math.floor((resumed.since * 1000 + 70_000) / 1000),
    );
  });

  test("a firing rule paused says paused since it was paused, not since it fired", async () => {
    const rule = (await make({ name: "Disk", kind: "metric", metric: "Disk used", above: 90 })).json.alert;
    expect((await post(server, "/send-metric", { project: "ops", title: "Disk used", value: 95 })).status).toBe(200);
    await round(Date.now());
    const firing = (await call(server, { path: `/v1/alerts/${rule.id}` })).json.alert;
    expect(firing.state).toBe("firing");
    await server.clock.advance(1100);
    const before = Math.floor(server.clock.now() / 1000);
    const paused = (await call(server, { method: "PATCH", path: `/v1/alerts/${rule.id}`, body: { paused: true } })).json
      .alert;
    expect(paused.state).toBe("paused");
    expect(paused.since).toBeGreaterThanOrEqual(before);
    expect((await call(server, { path: `/v1/alerts/${rule.id}` })).json.alert.since).toBe(paused.since);
    // A change that does not pause or resume it leaves since as it is.
    const renamed = (
      await call(server, { method: "PATCH", path: `/v1/alerts/${rule.id}`, body: { name: "Disk full" } })
    ).json.alert;
    expect(renamed.since).toBe(paused.since);
  });

  test("a server that was down waits a period and its grace from its start before calling silence it did not watch", async () => {
    const rule = (
      await make({ name: "Cron job", kind: "absence", filter: { channel: "cron-job" }, period: 60, grace: 10 })
    ).json.alert;
    expect((await post(server, "/v1/log", { project: "ops", channel: "cron-job", event: "ran" })).status).toBe(200);
    // As if the server had been stopped for an hour and started again: a new runner, its clock an hour on.
    const clock = new TestClock(Date.now() + 60 * MIN, { stopped: true });
    const restarted = new AlertRunner(server.store, server.services.hub, () => {}, {
      intervalMs: 3_600_000,
      baseUrl: server.url,
      clock,
    });
    restarted.start();
    try {
      const started = clock.now();
      await restarted.round(started + 30_000);
      await restarted.round(started + 69_000);
      expect(await noticesOf(rule.id)).toEqual([]);
      await clock.advance(71_000);
      await restarted.round();
      const fired = await noticesOf(rule.id);
      expect(fired.map((n) => n.tags.state)).toEqual(["firing"]);
      // It says how long the last event is: over an hour, though it watched for 71 s.
      expect(fired[0]!.event).toMatch(/^Cron job: no event for 1h1m$/);
    } finally {
      await restarted.stop();
    }
  });

  test("a test notice goes out whatever the state, and says it is a test", async () => {
    const rule = (await make({ name: "Try me", kind: "count", filter: { channel: "x" }, window: 60, above: 100 })).json
      .alert;
    const event = await server.services.alerts.runner.test(await server.services.alerts.get(rule.id));
    expect(event).toMatchObject({
      channel: "alerts",
      name: "Test: Try me",
      notify: true,
      tags: { alert: rule.id, state: "test" },
    });
  });
});

describe("the Alerts page's form", () => {
  const owner = { username: "owner", password: "correct horse battery staple" };
  beforeAll(() => server.services.accounts.createUser(owner, "owner"));

  test("keeps a channel with no events yet and a metric not set yet: they are filled in and selected, not dropped", async () => {
    const agent = await signedIn(server, owner);
    const beat = (
      await make({ name: "First run", kind: "absence", filter: { channel: "never-ran", event: "Done" }, period: 3600 })
    ).json.alert;
    const gauge = (await make({ name: "Later", kind: "metric", metric: "Not set yet", above: 5 })).json.alert;
    /** What a field of the form holds, as the page gives it. */
    const value = (page: string, name: string) =>
      page.match(new RegExp(`<input id="alert-${name}"[^>]* value="([^"]*)"`))?.[1] ?? null;
    const beatPage = await (await agent.request(`/p/ops/alerts/${beat.id}`)).text();
    expect(value(beatPage, "channel")).toBe("never-ran");
    const gaugePage = await (await agent.request(`/p/ops/alerts/${gauge.id}`)).text();
    expect(gaugePage).toMatch(/<option value="Not set yet" selected>Not set yet \(not set yet\)<\/option>/);
    // What the browser sends for the form as shown: the rules stay what they were.
    const csrf = await agent.csrf();
    const common = {
      _csrf: csrf,
      schedule: "period",
      event: "",
      tags: "",
      cron: "",
      tz: "",
      grace: "",
      window: "",
      compare: "above",
      limit: "",
      repeat: "",
    };
    const selected = (page: string, name: string) =>
      page.match(new RegExp(`<select id="alert-${name}"[^>]*>.*?<option value="([^"]*)"[^>]*selected`, "s"))?.[1] ?? "";
    expect(value(gaugePage, "channel")).toBe("");
    expect(
      (
        await agent.request(`/p/ops/alerts/${beat.id}`, {
          method: "POST",
          form: {
            ...common,
            name: "First run",
            kind: "absence",
            channel: value(beatPage, "channel") ?? "",
            event: "Done",
            period: "3600",
            metric: selected(beatPage, "metric"),
          },
        })
      ).status,
    ).toBe(303);
    expect(
      (
        await agent.request(`/p/ops/alerts/${gauge.id}`, {
          method: "POST",
          form: {
            ...common,
            name: "Later",
            kind: "metric",
            channel: value(gaugePage, "channel") ?? "",
            metric: selected(gaugePage, "metric"),
            limit: "5",
          },
        })
      ).status,
    ).toBe(303);
    expect((await call(server, { path: `/v1/alerts/${beat.id}` })).json.alert.filter).toEqual({
      channel: "never-ran",
      event: "Done",
    });
    expect((await call(server, { path: `/v1/alerts/${gauge.id}` })).json.alert.metric).toBe("Not set yet");
  });

  test("Notices links to the alerts channel once it exists (hidden till then), never to a page that says it does not", async () => {
    const agent = await signedIn(server, owner);
    await server.services.projects.create("fresh");
    const rule = (await make({ project: "fresh", name: "Fresh", kind: "count", window: 60, above: 100 })).json.alert;
    expect((await agent.request("/p/fresh/c/alerts")).status).toBe(404);
    // Until then the link waits, hidden, for the channel to appear (the page shows it live).
    const notices = async () =>
      /<a class="button secondary small" href="\/p\/fresh\/c\/alerts" data-shows-with-channel="alerts" data-testid="notices"( hidden)?>Notices<\/a>/.exec(
        await (await agent.request("/p/fresh/alerts")).text(),
      );
    expect((await notices())?.[1]).toBe(" hidden");
    await server.services.alerts.runner.test(await server.services.alerts.get(rule.id));
    expect((await agent.request("/p/fresh/c/alerts")).status).toBe(200);
    expect(await notices()).not.toBeNull();
    expect((await notices())?.[1]).toBeUndefined();
  });

  test("a schedule that is not one is named in the message shown next to its field", async () => {
    const agent = await signedIn(server, owner);
    const answer = await agent.request("/p/ops/alerts", {
      method: "POST",
      form: {
        _csrf: await agent.csrf(),
        name: "Seconds",
        kind: "absence",
        channel: "",
        event: "",
        tags: "",
        schedule: "cron",
        period: "",
        cron: "0 3 * * * *",
        tz: "UTC",
        grace: "",
        window: "",
        compare: "above",
        limit: "",
        repeat: "",
      },
    });
    expect(answer.status).toBe(422);
    // The form shows the message alone, without the API's "cron: " before it: it says what it is about.
    expect(await answer.text()).toContain(
      "&quot;0 3 * * * *&quot; is not a cron schedule (6 fields, a sixth for seconds); five fields:",
    );
    const single = await make({ name: "x", kind: "absence", cron: "daily" });
    expect(single.json.message).toStartWith('cron: "daily" is not a cron schedule (1 field); five fields:');
  });

  test("keeps a tag value with a space: shown in quotes, saved unchanged, and typed that way", async () => {
    const agent = await signedIn(server, owner);
    const csrf = await agent.csrf();
    const rule = (
      await make({
        name: "Spaced",
        kind: "absence",
        filter: { channel: "cron", tags: { host: "db 1", note: 'say "hi"' } },
        period: 3600,
      })
    ).json.alert;
    const page = await (await agent.request(`/p/ops/alerts/${rule.id}`)).text();
    expect(page).toContain(`value="host:&quot;db 1&quot; note:&quot;say \\&quot;hi\\&quot;&quot;"`);
    // Saved with another name and the tags as the form shows them, the tags stay as they were.
    const fields = {
      _csrf: csrf,
      name: "Spaced out",
      kind: "absence",
      schedule: "period",
      channel: "cron",
      event: "",
      tags: 'host:"db 1" note:"say \\"hi\\""',
      period: "3600",
      grace: "360",
      repeat: "",
    };
    const saved = await agent.request(`/p/ops/alerts/${rule.id}`, { method: "POST", form: fields });
    expect(saved.status).toBe(303);
    expect((await call(server, { path: `/v1/alerts/${rule.id}` })).json.alert).toMatchObject({
      name: "Spaced out",
      filter: { channel: "cron", tags: { host: "db 1", note: 'say "hi"' } },
    });
    const made = await agent.request("/p/ops/alerts", {
      method: "POST",
      form: { ...fields, name: "Typed", tags: 'rack:"b 2" zone:eu' },
    });
    expect(made.status).toBe(303);
    const typed = (await call(server, { path: "/v1/alerts?project=ops" })).json.alerts.find(
      (a: { name: string }) => a.name === "Typed",
    );
    expect(typed.filter.tags).toEqual({ rack: "b 2", zone: "eu" });
    const bad = await agent.request("/p/ops/alerts", {
      method: "POST",
      form: { ...fields, name: "Bad", tags: "rack" },
    });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toContain("“rack” is not key:value");
  });
});
