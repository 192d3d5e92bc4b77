// The Checks page and the status badges, in-process: the page shows each state in words, the last
// ping, when a check is next due, the run bar from its ping events, the ping URL and snippets; a
// member adds, pauses, resumes and deletes checks and makes new keys, a viewer sees without
// controls; a check's ping log shows bodies escaped; badges (SVG and shields.io's JSON) say each
// state, one check's or the project's, publicly by the badge key, 404 for anything unknown.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Check } from "../../src/model/check.ts";
import { TestClock } from "../clock.ts";
import { type Agent, signedIn, startTestApp, type TestApp } from "../helpers.ts";

const MIN = 60_000;
let server: TestApp;
let member: Agent;
let viewer: Agent;
let made = 0;

beforeAll(async () => {
  server = await startTestApp({ "alert-interval": "3600", "rate-limit-ping": "0" }, undefined, {
    clock: new TestClock(Date.now(), { stopped: true }),
  });
  await server.services.projects.create("ops");
  for (const role of ["member", "viewer"] as const)
    await server.services.accounts.createUser({ username: role, password: `${role} password 1` }, role);
  member = await signedIn(server, { username: "member", password: "member password 1" });
  viewer = await signedIn(server, { username: "viewer", password: "viewer password 1" });
});
afterAll(() => server.close());

async function check(more: Record<string, unknown> = {}): Promise<Check> {
  const n = ++made;
  return server.services.checks.create({ project: "ops", name: `Job ${n}`, period: 60, grace: 30, ...more });
}
const ping = async (path: string, init: RequestInit = {}) => expect((await server.fetch(path, init)).status).toBe(200);
const page = async (agent: Agent, path = "/p/ops/checks") => {
  const res = await agent.request(path);
  expect(res.status).toBe(200);
  return res.text();
};
/** A check's row on the page. */
const rowOf = (html: string, c: Check) => {
  const at = html.indexOf(`id="check-${c.id}"`);
  expect(at).toBeGreaterThan(-1);
  return html.slice(at, html.indexOf("</li>", at));
};
const csrf = async (agent: Agent) => agent.csrf();

describe("the Checks page", () => {
  test("shows each state in words, last ping, next due, the run bar, the ping URL and the snippets", async () => {
    const fresh = await check();
    const up = await check();
    const down = await check();
    const started = await check();
    const paused = await check({ paused: true });
    await ping(`/ping/${up.uuid}/start`);
    await server.clock.advance(1500);
    await ping(`/ping/${up.uuid}`);
    await ping(`/ping/${up.uuid}/0`);
    await ping(`/ping/${down.uuid}/fail`);
    await ping(`/ping/${started.uuid}/start`);
    const html = await page(member);
    const state = (c: Check) => /data-testid="check-state">([^<]+)</.exec(rowOf(html, c))![1];
    expect([fresh, up, down, started, paused].map(state)).toEqual(["New", "Up", "Down", "Started", "Paused"]);
    expect(rowOf(html, fresh)).toContain("last ping never");
    expect(rowOf(html, started)).toContain("must finish <time");
    expect(rowOf(html, started)).not.toContain("by <time");
    expect(rowOf(html, up)).toMatch(/data-testid="next-due">next due <time/);
    expect(rowOf(html, up)).toContain('data-runs="2"');
    expect(rowOf(html, up)).toContain("Last 2 runs of Job");
    expect(rowOf(html, up)).toContain("took 1.5s");
    expect(rowOf(html, down)).toContain('class="run-fail"');
    expect(rowOf(html, fresh)).toContain("No runs yet.");
    const url = `${server.services.config.baseUrl}/ping/${up.uuid}`;
    expect(rowOf(html, up)).toContain(`value="${url}"`);
    expect(rowOf(html, up)).toContain(`&amp;&amp; curl -fsS -m 10 --retry 5 -o /dev/null ${url}`);
    expect(rowOf(html, up)).toContain(`curl -fsS -m 10 --retry 5 -o /dev/null ${url}/start &amp;&amp;`);
    expect(rowOf(html, up)).toContain(`; curl -fsS -m 10 --retry 5 -o /dev/null ${url}/$?`);
    expect(html).toContain(`value="${await server.services.checks.pingKey("ops")}"`);
    expect(html).toContain(`/badge/${await server.services.checks.badges.badgeKey("ops")}.svg`);
    expect(html).toContain('data-testid="check-controls"');
    expect(html).toContain('data-testid="save-check"');
    // The project's page links to it, where Alerts is.
    expect(await page(member, "/p/ops")).toContain('href="/p/ops/checks" data-testid="project-checks"');
  });

  test("the crontab lines run the job as often as its check expects it", async () => {
    const lines = async (c: Check) =>
      [...rowOf(await page(member), c).matchAll(/data-testid="snippet-[a-z]+"[^>]*>([^<]*)</g)].map((m) => m[1]!);
    const when = async (more: Record<string, unknown>) => {
      const all = await lines(await check(more));
      expect(all).toHaveLength(3);
      const at = all.map((l) => l.slice(0, l.search(/ (?:\/path|curl)/)));
      expect(new Set(at).size).toBe(1);
      return at[0];
    };
    expect(await when({ period: 60 })).toBe("* * * * *");
    expect(await when({ period: 300 })).toBe("*/5 * * * *");
    expect(await when({ period: 3600 })).toBe("0 * * * *");
    expect(await when({ period: 6 * 3600 })).toBe("0 */6 * * *");
    expect(await when({ period: 86400 })).toBe("0 3 * * *");
    expect(await when({ period: 7 * 86400 })).toBe("0 3 * * 1");
    // No cron interval is exactly 90 minutes: the longest that is not longer (more pings never make it late).
    expect(await when({ period: 90 * 60 })).toBe("0 * * * *");
    // Under a minute, cron can do no better than every minute.
    expect(await when({ period: 5 })).toBe("* * * * *");
    expect(await when({ period: undefined, cron: "30 2 * * 1-5", tz: "UTC" })).toBe("30 2 * * 1-5");
  });

  test("with no checks yet, the page says what a check is and how a moved job keeps its URL", async () => {
    await server.services.projects.create("empty");
    const html = await page(member, "/p/empty/checks");
    expect(html).toContain("No checks yet.");
    // The form makes new UUIDs: a job moved from Healthchecks or Uptime Kuma keeps its own another way.
    expect(html).toContain("Moving from Healthchecks or Uptime Kuma");
    expect(html).toContain("signalboard check create --uuid");
    expect(html).toContain("--push-token");
  });

  test("a check past due but within its grace is late", async () => {
    const c = await check();
    await ping(`/ping/${c.uuid}`);
    await server.clock.advance(MIN + 1000);
    expect(/data-testid="check-state">([^<]+)</.exec(rowOf(await page(member), c))![1]).toBe("Late");
  });

  test("next due is the user's due time: a period after the last success, none while down, whenever the round looks next", async () => {
    const c = await check({ notify_after: 3 });
    await ping(`/ping/${c.uuid}`);
    const pinged = (await server.services.checks.get(c.id)).lastPing!;
    const dueShown = (html: string) =>
      /data-testid="next-due">next due (?:<time datetime="([^"]+)"|—)/.exec(rowOf(html, c))!;
    expect(dueShown(await page(member))[1]).toBe(new Date(pinged + MIN).toISOString());
    // Down before its third failure: the round comes back at the next deadline to count one more,
    // but nothing is due from the job.
    await ping(`/ping/${c.uuid}/fail`);
    expect((await server.services.checks.get(c.id)).nextDue).not.toBeNull();
    const html = await page(member);
    expect(dueShown(html)[0]).toEndWith("next due —");
    expect(/data-testid="check-state">([^<]+)</.exec(rowOf(html, c))![1]).toBe("Down");
  });

  test("a viewer sees the checks without controls", async () => {
    const c = await check();
    const html = await page(viewer);
    expect(rowOf(html, c)).toContain('data-testid="check-state"');
    expect(html).not.toContain('data-testid="check-controls"');
    expect(html).not.toContain('data-testid="save-check"');
    expect(html).not.toContain("Make a new ping key");
    const token = await csrf(viewer);
    const refused = await viewer.request(`/p/ops/checks/${c.id}/pause`, { method: "POST", form: { _csrf: token } });
    expect(refused.status).toBe(403);
    expect((await server.services.checks.get(c.id)).paused).toBe(false);
  });

  test("a member adds a check (period or cron), pauses, resumes and deletes it; bad fields are named", async () => {
    const token = await csrf(member);
    const add = (form: Record<string, string>) =>
      member.request("/p/ops/checks", { method: "POST", form: { _csrf: token, ...form } });
    const res = await add({
      name: "Nightly backup",
      slug: "",
      schedule: "period",
      period: "1d",
      grace: "1h",
      channel: "",
    });
    expect(res.status).toBe(303);
    const [made] = (await server.services.checks.list("ops")).filter((c) => c.slug === "nightly-backup");
    expect(made).toMatchObject({ schedule: { kind: "period", seconds: 86400 }, grace: 3600, channel: "checks" });
    const cron = await add({
      name: "Report",
      slug: "weekly-report",
      schedule: "cron",
      cron: "0 3 * * 1",
      tz: "Europe/Berlin",
      grace: "",
      channel: "reports",
      notify_after: "3",
    });
    expect(cron.status).toBe(303);
    const [report] = (await server.services.checks.list("ops")).filter((c) => c.slug === "weekly-report");
    expect(report).toMatchObject({
      schedule: { kind: "cron", expr: "0 3 * * 1", tz: "Europe/Berlin" },
      channel: "reports",
      notifyAfter: 3,
    });
    expect(made!.notifyAfter).toBe(1);
    for (const [notifyAfter, words] of [
      ["2.5", "must be a whole number of failures"],
      ["0", ""],
    ] as const) {
      const refused = await add({ name: "Flappy", schedule: "period", period: "60", notify_after: notifyAfter });
      expect(refused.status).toBe(422);
      const text = await refused.text();
      expect(text).toContain('id="check-notify_after-error"');
      expect(text).toContain(words);
    }
    expect((await server.services.checks.list("ops")).some((c) => c.name === "Flappy")).toBe(false);

    const bad = await add({ name: "", slug: "Not A Slug", schedule: "period", period: "soon", grace: "", channel: "" });
    expect(bad.status).toBe(422);
    const text = await bad.text();
    expect(text).toContain('id="check-period-error"');
    expect(text).toContain("use seconds, or a duration");
    const taken = await add({
      name: "Again",
      slug: "weekly-report",
      schedule: "period",
      period: "60",
      grace: "",
      channel: "",
    });
    expect(taken.status).toBe(422);
    expect(await taken.text()).toContain("is another check");
    expect((await server.services.checks.list("ops")).filter((c) => c.slug === "weekly-report")).toHaveLength(1);

    const pause = await member.request(`/p/ops/checks/${made!.id}/pause`, { method: "POST", form: { _csrf: token } });
    expect(pause.status).toBe(303);
    expect((await server.services.checks.get(made!.id)).state).toBe("paused");
    await member.request(`/p/ops/checks/${made!.id}/resume`, { method: "POST", form: { _csrf: token } });
    expect((await server.services.checks.get(made!.id)).state).toBe("new");
    expect(await (await member.request(`/p/ops/checks/${made!.id}/delete`)).text()).toContain(
      "Delete “Nightly backup”?",
    );
    await member.request(`/p/ops/checks/${made!.id}/delete`, { method: "POST", form: { _csrf: token } });
    expect((await server.services.checks.list("ops")).some((c) => c.id === made!.id)).toBe(false);
    expect((await member.request(`/p/ops/checks/${made!.id}`)).status).toBe(404);
  });

  test("a form with several mistakes names each of them at once, not one per try", async () => {
    const token = await csrf(member);
    const res = await member.request("/p/ops/checks", {
      method: "POST",
      form: {
        _csrf: token,
        name: "",
        slug: "Not A Slug",
        schedule: "period",
        period: "2",
        grace: "soon",
        notify_after: "0",
      },
    });
    expect(res.status).toBe(422);
    const text = await res.text();
    for (const field of ["name", "slug", "period", "grace", "notify_after"])
      expect(text).toContain(`id="check-${field}-error"`);
    // The summary names each field as the form labels it.
    expect(text).toContain('<a href="#check-grace">Grace: use seconds, or a duration');
    expect(text).toContain('<a href="#check-period">Every: must be at least 5</a>');
    expect(text).toContain('<a href="#check-notify_after">Notify after: ');
    // The schedule's own problems too, beside a bad grace.
    const cron = await member.request("/p/ops/checks", {
      method: "POST",
      form: { _csrf: token, name: "Quarterly", schedule: "cron", cron: "61 * * * *", tz: "Mars/Base", grace: "soon" },
    });
    expect(cron.status).toBe(422);
    const cronText = await cron.text();
    for (const field of ["tz", "grace"]) expect(cronText).toContain(`id="check-${field}-error"`);
    expect((await server.services.checks.list("ops")).some((c) => c.name === "Quarterly")).toBe(false);
  });

  test("new ping and badge keys retire the old ones", async () => {
    const c = await check();
    const token = await csrf(member);
    const oldPing = await server.services.checks.pingKey("ops");
    const oldBadge = await server.services.checks.badges.badgeKey("ops");
    expect((await server.fetch(`/badge/${oldBadge}/${c.slug}.svg`)).status).toBe(200);
    await member.request("/p/ops/checks/ping-key", { method: "POST", form: { _csrf: token } });
    await member.request("/p/ops/checks/badge-key", { method: "POST", form: { _csrf: token } });
    expect(await server.services.checks.pingKey("ops")).not.toBe(oldPing);
    expect((await server.fetch(`/ping/${oldPing}/${c.slug}`)).status).toBe(404);
    expect((await server.fetch(`/badge/${oldBadge}/${c.slug}.svg`)).status).toBe(404);
    const badge = await server.services.checks.badges.badgeKey("ops");
    expect(badge).not.toBe(oldBadge);
    expect(badge).not.toBe(await server.services.checks.pingKey("ops"));
    expect((await server.fetch(`/badge/${badge}/${c.slug}.svg`)).status).toBe(200);
  });

  test("names and bodies are escaped; a check's ping log shows its latest pings with their bodies", async () => {
    const c = await check({ name: `<img src=x onerror="alert(1)">` });
    await ping(`/ping/${c.uuid}/fail`, { method: "POST", body: "<script>alert('body')</script>\nline two" });
    await ping(`/ping/${c.uuid}/log`, { method: "POST", body: "just a log" });
    const list = await page(member);
    expect(list).not.toContain("<img src=x");
    expect(list).toContain("&lt;img src=x onerror=");
    const log = await page(member, `/p/ops/checks/${c.id}`);
    expect(log).not.toContain("<script>alert");
    expect(log).toContain("&lt;script&gt;alert(&#39;body&#39;)&lt;/script&gt;\nline two");
    expect(log).toContain("just a log");
    expect((log.match(/data-testid="ping"/g) ?? []).length).toBe(2);
    expect(log.indexOf("just a log")).toBeLessThan(log.indexOf("&lt;script&gt;")); // newest first
    expect(await page(viewer, `/p/ops/checks/${c.id}`)).toContain("just a log");
    const never = await check();
    expect(await page(member, `/p/ops/checks/${never.id}`)).toContain("No pings yet.");
    expect((await member.request("/p/ops/checks/999999")).status).toBe(404);
  });

  test("a row and the list are fragments of their own (what the live page loads)", async () => {
    const c = await check();
    const row = await page(member, `/p/ops/checks/${c.id}/row`);
    expect(row.startsWith(`<li class="card check-row" id="check-${c.id}"`)).toBe(true);
    expect(await page(member, "/p/ops/checks/list")).toContain(`id="check-${c.id}"`);
  });

  test("a project with more checks than one statement reads (made by ?create=1) still shows them all, with their runs", async () => {
    // Anyone with the ping key can make checks by slug: 501 of them once made the page a 500 on SQLite.
    await server.services.projects.create("many");
    const key = await server.services.checks.pingKey("many");
    const slugs = Array.from({ length: 501 }, (_, i) => `job-${i}`);
    for (let i = 0; i < slugs.length; i += 50)
      await Promise.all(slugs.slice(i, i + 50).map((s) => ping(`/ping/${key}/${s}?create=1`)));
    await ping(`/ping/${key}/job-500/fail`);
    const html = await page(member, "/p/many/checks");
    expect((html.match(/class="card check-row"/g) ?? []).length).toBe(501);
    const [first, last] = await Promise.all(
      ["job-0", "job-500"].map(async (s) => (await server.services.checks.list("many")).find((c) => c.slug === s)!),
    );
    expect(rowOf(html, first!)).toContain('data-runs="1"');
    expect(rowOf(html, last!)).toContain('data-runs="2"');
    expect(rowOf(html, last!)).toContain('class="run-fail"');
    expect(await page(member, "/p/many/checks/list")).toContain(`id="check-${last!.id}"`);
  });
});

describe("status badges", () => {
  let key: string;
  beforeAll(async () => {
    await server.services.projects.create("badges");
    key = await server.services.checks.badges.badgeKey("badges");
  });
  const make = (name: string, more: Record<string, unknown> = {}) =>
    server.services.checks.create({ project: "badges", name, period: 60, grace: 30, ...more });
  const json = async (path: string) => {
    const res = await server.fetch(path);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("public, max-age=60");
    expect(res.headers.get("content-type")).toBe("application/json");
    return res.json();
  };
  const svg = async (path: string) => {
    const res = await server.fetch(path);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/svg+xml; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("public, max-age=60");
    return res.text();
  };

  test("say each state, in shields.io's endpoint format and as a flat SVG, with no session", async () => {
    const fresh = await make("Fresh");
    const up = await make("Up one");
    const down = await make("Down one");
    const paused = await make("Paused one", { paused: true });
    const late = await make("Late one");
    await ping(`/ping/${late.uuid}`);
    await server.clock.advance(MIN + 5000);
    await ping(`/ping/${up.uuid}`);
    await ping(`/ping/${down.uuid}/3`);
    const expected = [
      [fresh, "new", "lightgrey", "#9f9f9f"],
      [up, "up", "brightgreen", "#4c1"],
      [down, "down", "red", "#e05d44"],
      [paused, "paused", "lightgrey", "#9f9f9f"],
      [late, "late", "yellow", "#dfb317"],
    ] as const;
    for (const [c, message, color, hex] of expected) {
      expect(await json(`/badge/${key}/${c.slug}.json`)).toEqual({ schemaVersion: 1, label: c.name, message, color });
      const drawn = await svg(`/badge/${key}/${c.slug}.svg`);
      expect(drawn).toStartWith("<svg xmlns=");
      expect(drawn).toContain(`aria-label="${c.name}: ${message}"`);
      expect(drawn).toContain(`fill="${hex}"`);
    }
    // The project's badge: down while any is down.
    expect(await json(`/badge/${key}.json`)).toEqual({
      schemaVersion: 1,
      label: "badges",
      message: "down",
      color: "red",
    });
    expect(await svg(`/badge/${key}.svg`)).toContain('aria-label="badges: down"');
    await ping(`/ping/${down.uuid}`);
    expect((await json(`/badge/${key}.json`)).message).toBe("late");
  });

  test("an unknown key or slug, or another format, is a 404", async () => {
    const c = await make("Known");
    for (const path of [
      `/badge/${"x".repeat(22)}/${c.slug}.svg`,
      `/badge/${key}/nothing.svg`,
      `/badge/${key}/nothing.json`,
      `/badge/${"x".repeat(22)}.json`,
      `/badge/${key}/${c.slug}.png`,
      `/badge/${await server.services.checks.pingKey("badges")}/${c.slug}.svg`,
      `/badge/short/${c.slug}.svg`,
    ]) {
      const res = await server.fetch(path);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
    }
  });

  test("escape a check's name", async () => {
    const c = await make(`a<b & "c"`);
    const drawn = await svg(`/badge/${key}/${c.slug}.svg`);
    expect(drawn).not.toContain("a<b");
    expect(drawn).toContain("a&lt;b &amp; &quot;c&quot;");
    expect((await json(`/badge/${key}/${c.slug}.json`)).label).toBe(`a<b & "c"`);
  });

  test("an SVG badge, served from the dashboard's own address, may run nothing and is never sniffed", async () => {
    const c = await make("Sandboxed");
    for (const file of [`${c.slug}.svg`, `${c.slug}.json`]) {
      const res = await server.fetch(`/badge/${key}/${file}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-security-policy")).toBe("default-src 'none'; frame-ancestors *");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    }
  });
});
