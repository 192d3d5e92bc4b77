// Quiet when it should be: maintenance windows over the API, and what the runner makes of them and
// of notify_after. A change inside a window is recorded (the rule's state, and an event in the
// alerts channel without notify) but delivered to nobody; a rule still firing when the window ends
// notifies on the first round after it; one back inside it notifies nothing; notify_after N waits
// for N rounds firing; a recovery notifies only if its firing did; and all of that holds across a
// restart (a new runner on the same database) and with two runners deciding at once. Rounds run at
// chosen times on the test's clock; requests go through app.handle.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { AlertRunner } from "../../src/domain/alert-runner.ts";
import { TestClock } from "../clock.ts";
import { expectRefused, startAlerting } from "../alerting.ts";
import { call, eventually, notifierIdle, post, signedIn, type TestApp } from "../helpers.ts";
import type { Receiver } from "../receiver.ts";

const MIN = 60_000;
let server: TestApp;
let hook: Receiver;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ server, hook, close } = await startAlerting());
  await server.services.projects.create("elsewhere");
});
afterAll(() => close());

type Notice = { id: number; event: string; tags: Record<string, unknown>; notify: boolean };
const round = (at: number) => server.services.alerts.runner.round(at);
const window = (body: Record<string, unknown>) =>
  call(server, { path: "/v1/maintenance?project=ops", body: { project: "ops", ...body } });
/** A metric rule of its own metric, whose value the test sets: firing above 10. */
async function gauge(name: string, extra: Record<string, unknown> = {}) {
  const made = await call(server, {
    path: "/v1/alerts",
    body: { project: "ops", name, kind: "metric", metric: name, above: 10, ...extra },
  });
  expect(made.status).toBe(200);
  return made.json.alert as { id: number; notify_after: number };
}
const set = async (metric: string, value: number) =>
  expect((await post(server, "/send-metric", { project: "ops", title: metric, value })).status).toBe(200);
/** One rule's events in the alerts channel, in the order recorded: [state, notify, quiet]. */
async function noticesOf(id: number): Promise<[unknown, boolean, unknown][]> {
  const events: Notice[] = (await call(server, { path: "/v1/events?project=ops&channel=alerts&limit=200" })).json
    .events;
  return events
    .filter((e) => e.tags.alert === id)
    .sort((a, b) => a.id - b.id)
    .map((e) => [e.tags.state, e.notify, e.tags.quiet ?? null]);
}
/** What the webhook was sent of one rule, once the queue settled: its states, in order. */
async function delivered(id: number, expected: string[]): Promise<void> {
  await notifierIdle(server); // nothing left to send: what was not sent never will be
  await eventually(() => {
    const states = hook.requests
      .map((r) => JSON.parse(r.body).event)
      .filter((e) => e?.tags?.alert === id)
      .map((e) => e.tags.state);
    expect(states).toEqual(expected);
  });
}
const unix = (ms: number) => Math.floor(ms / 1000);
/** A moment days after the last test's: rounds only go forward, whatever the order tests run in. */
let cursor = Date.now();
const later = () => (cursor += 4 * 86_400_000);

describe("maintenance windows over the API", () => {
  test("are made (one-off or recurring), listed with whether they hold now, and deleted", async () => {
    const now = server.clock.now();
    const once = await window({ name: "Upgrade", starts_at: unix(now) - 60, ends_at: unix(now) + 3600 });
    expect(once.status).toBe(200);
    expect(once.json.maintenance).toMatchObject({
      project: "ops",
      name: "Upgrade",
      starts_at: unix(now) - 60,
      ends_at: unix(now) + 3600,
      cron: null,
      active: true,
      next_end: unix(now) + 3600,
    });
    const nightly = await window({ cron: "0 3 * * *", tz: "Europe/Berlin", length: 7200 });
    expect(nightly.json.maintenance).toMatchObject({
      name: "",
      cron: "0 3 * * *",
      tz: "Europe/Berlin",
      length: 7200,
      starts_at: null,
    });
    expect(nightly.json.maintenance.next_end - nightly.json.maintenance.next_start).toBe(7200);
    const listed = await call(server, { path: "/v1/maintenance?project=ops" });
    expect(listed.json.maintenance.map((w: { id: number }) => w.id)).toEqual([
      once.json.maintenance.id,
      nightly.json.maintenance.id,
    ]);
    // The project may be named in the query alone.
    const byQuery = await call(server, {
      path: "/v1/maintenance?project=elsewhere",
      body: { starts_at: unix(now), ends_at: unix(now) + 60 },
    });
    expect(byQuery.json.maintenance.project).toBe("elsewhere");
    for (const w of [once, nightly, byQuery])
      expect((await call(server, { method: "DELETE", path: `/v1/maintenance/${w.json.maintenance.id}` })).status).toBe(
        200,
      );
    expect((await call(server, { method: "DELETE", path: `/v1/maintenance/${once.json.maintenance.id}` })).status).toBe(
      404,
    );
    expect((await call(server, { path: "/v1/maintenance?project=ops" })).json.maintenance).toEqual([]);
  });

  test("bad input is a 400 that names the field, and nothing is made", async () => {
    const now = unix(Date.now());
    const cases: [Record<string, unknown>, string][] = [
      [{}, "starts_at"],
      [{ starts_at: now }, "ends_at"],
      [{ starts_at: now, ends_at: now - 1 }, "ends_at"],
      [{ starts_at: now * 1000, ends_at: now * 1000 + 1 }, "starts_at"],
      [{ starts_at: "tomorrow", ends_at: now }, "starts_at"],
      [{ cron: "0 3 * * *" }, "length"],
      [{ length: 600 }, "cron"],
      [{ cron: "every night", length: 600 }, "cron"],
      [{ cron: "0 3 * * *", tz: "Mars/Olympus", length: 600 }, "tz"],
      [{ cron: "0 3 * * *", length: 1 }, "length"],
      [{ cron: "0 3 * * *", length: 600, starts_at: now, ends_at: now + 60 }, "cron"],
      [{ starts_at: now, ends_at: now + 60, name: "x".repeat(101) }, "name"],
      [{ starts_at: now, ends_at: now + 60, extra: 1 }, ""],
      [{ starts_at: now, ends_at: now + 60, project: "Not A Name" }, "project"],
      [{ starts_at: now, ends_at: now + 60, project: "nope" }, "project"],
    ];
    for (const [body, field] of cases) expectRefused(await window(body), body, field);
    expect((await call(server, { path: "/v1/maintenance?project=ops", body: "[1]" })).status).toBe(400);
    expect((await call(server, { method: "DELETE", path: "/v1/maintenance/abc" })).status).toBe(400);
    expect((await call(server, { path: "/v1/maintenance?project=ops" })).json.maintenance).toEqual([]);
    const rule = await call(server, {
      path: "/v1/alerts",
      body: { project: "ops", name: "x", kind: "metric", metric: "m", above: 1, notify_after: 0 },
    });
    expect(rule.status).toBe(400);
    expect(rule.json.validation.body[0].path).toBe("notify_after");
    const fraction = await call(server, {
      path: "/v1/alerts",
      body: { project: "ops", name: "x", kind: "metric", metric: "m", above: 1, notify_after: 1.5 },
    });
    expect(fraction.json.validation.body[0].path).toBe("notify_after");
    const publicToken = (await server.services.tokens.create({ name: "site", kind: "public", project: "ops" })).token;
    expect((await call(server, { path: "/v1/maintenance?project=ops", token: publicToken })).status).toBe(403);
  });
});

describe("inside a maintenance window", () => {
  test("a rule that fires is recorded without notify, and notifies when the window ends if still firing", async () => {
    const base = later();
    const made = await window({ name: "deploy", starts_at: unix(base), ends_at: unix(base + 10 * MIN) });
    const rule = await gauge("Deploy errors");
    await set("Deploy errors", 50);
    await round(base + MIN);
    expect((await call(server, { path: `/v1/alerts/${rule.id}` })).json.alert).toMatchObject({
      state: "firing",
      notified: "ok",
    });
    await round(base + 5 * MIN);
    expect(await noticesOf(rule.id)).toEqual([["firing", false, "maintenance"]]);
    await round(base + 11 * MIN); // the first round after it
    await round(base + 12 * MIN);
    expect(await noticesOf(rule.id)).toEqual([
      ["firing", false, "maintenance"],
      ["firing", true, null],
    ]);
    expect((await call(server, { path: `/v1/alerts/${rule.id}` })).json.alert.notified).toBe("firing");
    await set("Deploy errors", 0);
    await round(base + 13 * MIN);
    expect((await noticesOf(rule.id)).map((n) => n.slice(0, 2))).toEqual([
      ["firing", false],
      ["firing", true],
      ["resolved", true],
    ]);
    await delivered(rule.id, ["firing", "resolved"]);
    await call(server, { method: "DELETE", path: `/v1/maintenance/${made.json.maintenance.id}` });
  });

  test("a rule that fires and recovers inside it notifies nothing, then or after", async () => {
    const base = later();
    const made = await window({ starts_at: unix(base), ends_at: unix(base + 10 * MIN) });
    const rule = await gauge("Blip");
    await set("Blip", 50);
    await round(base + MIN);
    await set("Blip", 1);
    await round(base + 2 * MIN);
    await round(base + 11 * MIN);
    await round(base + 12 * MIN);
    expect(await noticesOf(rule.id)).toEqual([
      ["firing", false, "maintenance"],
      ["resolved", false, "untold"], // its firing was never told
    ]);
    await delivered(rule.id, []);
    await call(server, { method: "DELETE", path: `/v1/maintenance/${made.json.maintenance.id}` });
  });

  test("a rule told firing before the window, back inside it, says so when it ends; repeats wait too", async () => {
    const base = later();
    const rule = await gauge("Queue", { repeat: 60 });
    await set("Queue", 50);
    await round(base - MIN); // told
    const made = await window({ starts_at: unix(base), ends_at: unix(base + 10 * MIN) });
    await round(base + 3 * MIN); // a repeat would be due: held
    await set("Queue", 1);
    await round(base + 4 * MIN);
    await round(base + 10 * MIN);
    expect(await noticesOf(rule.id)).toEqual([
      ["firing", true, null],
      ["resolved", false, "maintenance"],
      ["resolved", true, null],
    ]);
    await call(server, { method: "DELETE", path: `/v1/maintenance/${made.json.maintenance.id}` });
  });

  test("a recurring window holds when its cron schedule says, in its time zone, for its length", async () => {
    // 03:00 in Tokyo (no summer time: 18:00 UTC the day before) on a day ahead: the window is 03:00 to 04:00 there.
    const day = new Date(later());
    const opens = Date.parse(`${day.toISOString().slice(0, 10)}T03:00:00+09:00`);
    const made = await window({ cron: "0 3 * * *", tz: "Asia/Tokyo", length: 3600 });
    const rule = await gauge("Nightly");
    await set("Nightly", 50);
    await round(opens + 5 * MIN);
    await round(opens + 59 * MIN);
    expect(await noticesOf(rule.id)).toEqual([["firing", false, "maintenance"]]);
    await round(opens + 60 * MIN);
    expect(await noticesOf(rule.id)).toEqual([
      ["firing", false, "maintenance"],
      ["firing", true, null],
    ]);
    await set("Nightly", 0);
    await round(opens + 61 * MIN);
    // The next night's window: back and firing again, quietly.
    await set("Nightly", 50);
    await round(opens + 24 * 60 * MIN + 10 * MIN);
    expect((await noticesOf(rule.id)).slice(2)).toEqual([
      ["resolved", true, null],
      ["firing", false, "maintenance"],
    ]);
    await set("Nightly", 0);
    await round(opens + 24 * 60 * MIN + 11 * MIN);
    await call(server, { method: "DELETE", path: `/v1/maintenance/${made.json.maintenance.id}` });
  });

  test("a window of another project keeps nobody here quiet", async () => {
    const base = later();
    const made = await call(server, {
      path: "/v1/maintenance",
      body: { project: "elsewhere", starts_at: unix(base), ends_at: unix(base + 10 * MIN) },
    });
    const rule = await gauge("Loud");
    await set("Loud", 50);
    await round(base + MIN);
    expect(await noticesOf(rule.id)).toEqual([["firing", true, null]]);
    await set("Loud", 0);
    await round(base + 2 * MIN);
    await call(server, { method: "DELETE", path: `/v1/maintenance/${made.json.maintenance.id}` });
  });
});

describe("notify_after", () => {
  test("3 waits for three rounds firing in a row; a shorter run notifies nothing, its recovery neither", async () => {
    const base = later();
    const rule = await gauge("Flappy", { notify_after: 3 });
    expect(rule.notify_after).toBe(3);
    await set("Flappy", 50);
    await round(base + MIN);
    await round(base + 2 * MIN);
    await set("Flappy", 0);
    await round(base + 3 * MIN); // two rounds, then back: never told
    expect(await noticesOf(rule.id)).toEqual([
      ["firing", false, "notify_after"],
      ["resolved", false, "untold"],
    ]);
    await set("Flappy", 50);
    await round(base + 4 * MIN);
    await round(base + 5 * MIN);
    expect((await noticesOf(rule.id)).length).toBe(3);
    await round(base + 6 * MIN); // the third in a row
    await round(base + 7 * MIN);
    expect((await noticesOf(rule.id)).slice(2)).toEqual([
      ["firing", false, "notify_after"],
      ["firing", true, null],
    ]);
    await set("Flappy", 0);
    await round(base + 8 * MIN);
    expect((await noticesOf(rule.id)).slice(4)).toEqual([["resolved", true, null]]);
    await delivered(rule.id, ["firing", "resolved"]);
  });

  test("is kept by the rule: changed, cleared back to 1, shown in the API", async () => {
    const rule = await gauge("Setting", { notify_after: 5 });
    const changed = await call(server, { method: "PATCH", path: `/v1/alerts/${rule.id}`, body: { notify_after: 2 } });
    expect(changed.json.alert.notify_after).toBe(2);
    const cleared = await call(server, {
      method: "PATCH",
      path: `/v1/alerts/${rule.id}`,
      body: { notify_after: null },
    });
    expect(cleared.json.alert.notify_after).toBe(1);
    await call(server, { method: "DELETE", path: `/v1/alerts/${rule.id}` });
  });
});

describe("across a restart and a second runner", () => {
  const another = () => {
    const clock = new TestClock(server.clock.now(), { stopped: true });
    return new AlertRunner(server.store, server.services.hub, () => {}, {
      intervalMs: 3_600_000,
      baseUrl: server.url,
      clock,
    });
  };

  test("a streak counted before a restart goes on after it, and notifies once", async () => {
    const base = later();
    const rule = await gauge("Restarted", { notify_after: 3 });
    await set("Restarted", 50);
    await round(base + MIN);
    await round(base + 2 * MIN);
    const restarted = another();
    restarted.start();
    try {
      await restarted.round(base + 3 * MIN);
      await restarted.round(base + 4 * MIN);
    } finally {
      await restarted.stop();
    }
    await round(base + 5 * MIN);
    expect(await noticesOf(rule.id)).toEqual([
      ["firing", false, "notify_after"],
      ["firing", true, null],
    ]);
    await set("Restarted", 0);
    await round(base + 6 * MIN);
  });

  test("a firing held by a window is told once after it, by whichever runner sees it first", async () => {
    const base = later();
    const made = await window({ starts_at: unix(base), ends_at: unix(base + 10 * MIN) });
    const rule = await gauge("Held");
    await set("Held", 50);
    await round(base + MIN);
    const a = another();
    const b = another();
    a.start();
    b.start();
    try {
      // Two runners deciding at the same moment after the window: one notice.
      await Promise.all([a.round(base + 11 * MIN), b.round(base + 11 * MIN), round(base + 11 * MIN)]);
      await round(base + 12 * MIN);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
    expect(await noticesOf(rule.id)).toEqual([
      ["firing", false, "maintenance"],
      ["firing", true, null],
    ]);
    await delivered(rule.id, ["firing"]);
    await set("Held", 0);
    await round(base + 13 * MIN);
    await call(server, { method: "DELETE", path: `/v1/maintenance/${made.json.maintenance.id}` });
  });
});

describe("the Alerts page", () => {
  const owner = { username: "owner", password: "correct horse battery staple" };
  const viewer = { username: "viewer", password: "another horse battery staple" };
  beforeAll(async () => {
    await server.services.accounts.createUser(owner, "owner");
    await server.services.accounts.createUser(viewer, "viewer");
  });
  const form = (fields: Record<string, string>) => ({
    name: "",
    kind: "once",
    start: "",
    end: "",
    cron: "",
    length: "",
    tz: "",
    ...fields,
  });

  test("lists the windows; a member adds one (times in a time zone, or a schedule) and deletes one", async () => {
    const agent = await signedIn(server, owner);
    const csrf = await agent.csrf();
    const page = await (await agent.request("/p/ops/alerts")).text();
    expect(page).toContain('id="maintenance"');
    expect(page).toContain('data-testid="no-maintenance"');
    const added = await agent.request("/p/ops/maintenance", {
      method: "POST",
      form: {
        _csrf: csrf,
        ...form({ name: "Upgrade", start: "2031-03-01T03:00", end: "2031-03-01T05:30", tz: "Asia/Tokyo" }),
      },
    });
    expect(added.status).toBe(200);
    const fragment = await added.text();
    expect(fragment).toStartWith('<section class="card stack" id="maintenance"');
    expect(fragment).toContain("Upgrade");
    // 03:00 in Tokyo is 18:00 UTC the day before.
    expect(fragment).toContain("2031-02-28 18:00:00 UTC to 2031-02-28 20:30:00 UTC");
    const nightly = await agent.request("/p/ops/maintenance", {
      method: "POST",
      form: { _csrf: csrf, ...form({ kind: "cron", cron: "30 2 * * 0", length: "45m", tz: "Europe/Berlin" }) },
    });
    expect(await nightly.text()).toContain("“30 2 * * 0” (Europe/Berlin) for 45m");
    const windows = (await call(server, { path: "/v1/maintenance?project=ops" })).json.maintenance;
    expect(windows.map((w: { name: string; starts_at: number | null }) => [w.name, w.starts_at])).toEqual([
      ["Upgrade", Date.UTC(2031, 1, 28, 18) / 1000],
      ["", null],
    ]);
    const deleted = await agent.request(`/p/ops/maintenance/${windows[0].id}/delete`, {
      method: "POST",
      form: { _csrf: csrf },
    });
    expect(deleted.status).toBe(200);
    expect(await deleted.text()).not.toContain("Upgrade");
    // A window of another project is not this project's to delete.
    const theirs = await call(server, {
      path: "/v1/maintenance",
      body: { project: "elsewhere", cron: "0 1 * * *", length: 60 },
    });
    const other = await agent.request(`/p/ops/maintenance/${theirs.json.maintenance.id}/delete`, {
      method: "POST",
      form: { _csrf: csrf },
    });
    expect(other.status).toBe(404);
    for (const w of [windows[1], theirs.json.maintenance])
      await call(server, { method: "DELETE", path: `/v1/maintenance/${w.id}` });
  });

  test("a window that cannot be made comes back with its problems next to their fields, and nothing made", async () => {
    const agent = await signedIn(server, owner);
    const csrf = await agent.csrf();
    const cases: [Record<string, string>, string, string][] = [
      [{ start: "2031-03-01T05:00", end: "2031-03-01T03:00" }, "maintenance-end", "must be after starts_at"],
      [{ start: "soon", end: "2031-03-01T03:00" }, "maintenance-start", "use a date and a time"],
      [
        { start: "2031-03-01T03:00", end: "2031-03-01T05:00", tz: "Mars/Olympus" },
        "maintenance-tz",
        "is not a time zone",
      ],
      [{ kind: "cron", cron: "nightly", length: "1h" }, "maintenance-cron", "is not a cron schedule"],
      [{ kind: "cron", cron: "0 3 * * *", length: "a while" }, "maintenance-length", "use seconds"],
      [{ kind: "cron", cron: "0 3 * * *" }, "maintenance-length", "needs how long it lasts"],
    ];
    for (const [fields, id, message] of cases) {
      const answer = await agent.request("/p/ops/maintenance", {
        method: "POST",
        form: { _csrf: csrf, ...form(fields) },
      });
      expect({ fields, status: answer.status }).toEqual({ fields, status: 422 });
      const text = await answer.text();
      expect({ fields, error: new RegExp(`id="${id}-error">[^<]*${message}`).test(text) }).toEqual({
        fields,
        error: true,
      });
    }
    expect((await call(server, { path: "/v1/maintenance?project=ops" })).json.maintenance).toEqual([]);
  });

  test("a viewer sees the windows without the controls, and cannot add or delete", async () => {
    const made = await window({ name: "Visible", cron: "0 4 * * *", length: 600 });
    const agent = await signedIn(server, viewer);
    const page = await (await agent.request("/p/ops/alerts")).text();
    expect(page).toContain("Visible");
    expect(page).not.toContain('data-testid="add-maintenance"');
    expect(page).not.toContain(`/p/ops/maintenance/${made.json.maintenance.id}/delete`);
    const csrf = await agent.csrf();
    expect(
      (
        await agent.request(`/p/ops/maintenance/${made.json.maintenance.id}/delete`, {
          method: "POST",
          form: { _csrf: csrf },
        })
      ).status,
    ).toBe(403);
    await call(server, { method: "DELETE", path: `/v1/maintenance/${made.json.maintenance.id}` });
  });

  test("the rule form keeps notify_after, shows it, and refuses one that is not a whole number", async () => {
    const agent = await signedIn(server, owner);
    const csrf = await agent.csrf();
    const fields = {
      _csrf: csrf,
      name: "Form flappy",
      kind: "metric",
      metric: "Form flappy",
      compare: "above",
      limit: "10",
      notify_after: "4",
    };
    expect((await agent.request("/p/ops/alerts", { method: "POST", form: fields })).status).toBe(303);
    const rule = (await call(server, { path: "/v1/alerts?project=ops" })).json.alerts.find(
      (a: { name: string }) => a.name === "Form flappy",
    );
    expect(rule.notify_after).toBe(4);
    const page = await (await agent.request(`/p/ops/alerts/${rule.id}`)).text();
    expect(page).toMatch(/<input id="alert-notify_after"[^>]* value="4"/);
    expect(await (await agent.request("/p/ops/alerts")).text()).toContain("notifies after 4 rounds firing");
    const bad = await agent.request(`/p/ops/alerts/${rule.id}`, {
      method: "POST",
      form: { ...fields, notify_after: "2.5" },
    });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toContain("must be a whole number of rounds");
    const zero = await agent.request(`/p/ops/alerts/${rule.id}`, {
      method: "POST",
      form: { ...fields, notify_after: "0" },
    });
    expect(zero.status).toBe(422);
    expect(await zero.text()).toContain("must be at least 1");
    // Emptied, it notifies at once again.
    expect(
      (await agent.request(`/p/ops/alerts/${rule.id}`, { method: "POST", form: { ...fields, notify_after: "" } }))
        .status,
    ).toBe(303);
    expect((await call(server, { path: `/v1/alerts/${rule.id}` })).json.alert.notify_after).toBe(1);
    await call(server, { method: "DELETE", path: `/v1/alerts/${rule.id}` });
  });
});
