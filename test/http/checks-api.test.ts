// Checks over the API (/v1/checks): made (with a period, or cron and tz; a UUID and push token
// made or given), listed, read, changed, paused, resumed and deleted, each answered with its ping
// URLs and where its pings left it (Unix seconds and seconds); every bad field a 400 that names it
// and changes nothing; full-access tokens only, limited to their projects; the project's ping key
// read and made anew; and the routes in /openapi.json. In-process, with a clock the test moves.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { checkFields } from "../../src/domain/checks.ts";
import { TestClock } from "../clock.ts";
import { expectRefused } from "../alerting.ts";
import { call, startTestApp, type TestApp } from "../helpers.ts";

let server: TestApp;
let base: string;

beforeAll(async () => {
  server = await startTestApp({ "alert-interval": "3600", "base-url": "https://sb.example.com" }, undefined, {
    clock: new TestClock(Date.UTC(2026, 0, 1, 12), { stopped: true }),
  });
  base = server.services.config.baseUrl;
  for (const name of ["ops", "other"]) await server.services.projects.create(name);
});
afterAll(() => server.close());

const make = (body: Record<string, unknown>, query = "?project=ops") =>
  call(server, { path: `/v1/checks${query}`, body });
const get = (id: number) => call(server, { path: `/v1/checks/${id}` });
const patch = (id: number, body: unknown) => call(server, { method: "PATCH", path: `/v1/checks/${id}`, body });
const unix = () => Math.floor(server.clock.now() / 1000);

describe("checks over the API", () => {
  test("are made, listed, read, changed, paused, resumed and deleted, with their URLs and state", async () => {
    const made = await make({
      project: "ops",
      name: "Nightly backup",
      slug: "nightly-backup",
      period: 86400,
      grace: 3600,
    });
    expect(made.status).toBe(200);
    const c = made.json.check;
    const key = (await call(server, { path: "/v1/checks/ping-key?project=ops" })).json.ping_key;
    expect(c).toEqual({
      id: expect.any(Number),
      project: "ops",
      name: "Nightly backup",
      slug: "nightly-backup",
      uuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      push_token: expect.stringMatching(/^[A-Za-z0-9]{32}$/),
      period: 86400,
      cron: null,
      tz: null,
      grace: 3600,
      channel: "checks",
      paused: false,
      notify_after: 1,
      ping_url: `${base}/ping/${c.uuid}`,
      slug_url: `${base}/ping/${key}/nightly-backup`,
      push_url: `${base}/api/push/${c.push_token}?status=up&msg=OK&ping=`,
      state: "new",
      since: unix(),
      last_ping: null,
      next_due: null,
      last_duration: null,
      notified: "up",
      created_at: unix(),
      updated_at: unix(),
    });
    expect((await call(server, { path: "/v1/checks?project=ops" })).json.checks).toEqual([c]);
    expect((await get(c.id)).json.check).toEqual(c);

    // Its pings show: a run of 42.5 s, then due a period and grace after it.
    expect((await server.fetch(`/ping/${c.uuid}/start`)).status).toBe(200);
    await server.clock.advance(42_500);
    expect((await server.fetch(`/ping/${c.uuid}`)).status).toBe(200);
    expect((await get(c.id)).json.check).toMatchObject({
      state: "up",
      last_ping: unix(),
      last_duration: 42.5,
      next_due: unix() + 86400 + 3600,
    });

    const cron = await patch(c.id, { cron: "0 3 * * *", tz: "Europe/Berlin", notify_after: 2, channel: "cron" });
    expect(cron.status).toBe(200);
    expect(cron.json.check).toMatchObject({
      period: null,
      cron: "0 3 * * *",
      tz: "Europe/Berlin",
      notify_after: 2,
      channel: "cron",
      state: "up",
      // 03:00 in Berlin is 02:00 UTC on the 2nd of January; an hour's grace.
      next_due: Date.UTC(2026, 0, 2, 3) / 1000,
    });
    expect((await patch(c.id, { paused: true })).json.check).toMatchObject({ paused: true, state: "paused" });
    expect((await patch(c.id, { paused: false })).json.check).toMatchObject({ paused: false, state: "new" });
    expect((await call(server, { method: "DELETE", path: `/v1/checks/${c.id}` })).status).toBe(200);
    expect((await get(c.id)).status).toBe(404);
    expect((await call(server, { method: "DELETE", path: `/v1/checks/${c.id}` })).status).toBe(404);
    expect((await server.fetch(`/ping/${c.uuid}`)).status).toBe(404);
  });

  test("a UUID and push token given are kept (URLs that exist keep working); the project may be the query's", async () => {
    const uuid = "5B0B7C32-8F4E-4A43-9D8E-2F0C3C1E9A61";
    const made = await make({
      name: "Kuma monitor",
      uuid,
      push_token: "Qm9zdG9uVGVhUGFydHkxNzczQm9zdG9u",
      paused: true,
    });
    expect(made.status).toBe(200);
    expect(made.json.check).toMatchObject({
      project: "ops",
      slug: "kuma-monitor",
      uuid: uuid.toLowerCase(),
      ping_url: `${base}/ping/${uuid.toLowerCase()}`,
      push_url: `${base}/api/push/Qm9zdG9uVGVhUGFydHkxNzczQm9zdG9u?status=up&msg=OK&ping=`,
      state: "paused",
    });
    const elsewhere = await make({ project: "other", name: "Elsewhere" }, "");
    expect(elsewhere.json.check.project).toBe("other");
    // Taken: the same UUID, push token or slug (in the same project) again.
    expectRefused(await make({ name: "Again", uuid }), { uuid }, "uuid");
    expectRefused(
      await make({ name: "Again", push_token: "Qm9zdG9uVGVhUGFydHkxNzczQm9zdG9u" }),
      { push_token: "taken" },
      "push_token",
    );
    expectRefused(await make({ name: "Kuma monitor" }), { slug: "kuma-monitor" }, "slug");
  });

  test("every bad field is a 400 naming it, and changes nothing", async () => {
    const before = (await call(server, { path: "/v1/checks?project=ops" })).json.checks;
    const cases: [Record<string, unknown>, string][] = [
      [{}, "name"],
      [{ name: "" }, "name"],
      [{ name: "x", slug: "Not A Slug" }, "slug"],
      [{ name: "x", period: 1 }, "period"],
      [{ name: "x", period: "daily" }, "period"],
      [{ name: "x", grace: -1 }, "grace"],
      [{ name: "x", cron: "every day" }, "cron"],
      [{ name: "x", cron: "0 3 * * *", tz: "Mars/Olympus" }, "tz"],
      [{ name: "x", period: 60, cron: "0 3 * * *" }, "cron"],
      // A time zone says when a cron schedule's times are; beside a period (or alone) it would be dropped unsaid.
      [{ name: "x", period: 60, tz: "Europe/Berlin" }, "tz"],
      [{ name: "x", tz: "Europe/Berlin" }, "tz"],
      [{ name: "x", channel: "Not A Name" }, "channel"],
      [{ name: "x", uuid: "not-a-uuid" }, "uuid"],
      [{ name: "x", push_token: "short" }, "push_token"],
      [{ name: "x", paused: "yes" }, "paused"],
      [{ name: "x", notify_after: 0 }, "notify_after"],
      [{ name: "x", notify_after: 2.5 }, "notify_after"],
      [{ name: "x", project: "nope" }, "project"],
    ];
    for (const [body, field] of cases) expectRefused(await make(body), body, field);
    const extra = await make({ name: "x", extra: true });
    expect(extra.status).toBe(400);
    expect(extra.json.message).toContain("unknown field extra");
    const c = (await make({ name: "Untouched", period: 300 })).json.check;
    for (const [body, field] of [
      [{ period: 0 }, "period"],
      [{ tz: "Europe/Berlin" }, "tz"],
      [{ name: "" }, "name"],
      [{ notify_after: "3" }, "notify_after"],
    ] as const)
      expectRefused(await patch(c.id, body), body, field);
    const moved = await patch(c.id, { project: "other" });
    expect(moved.status).toBe(400);
    expect(moved.json.message).toContain("unknown field project");
    expect((await get(c.id)).json.check).toEqual(c);
    expect((await call(server, { path: "/v1/checks?project=ops" })).json.checks).toEqual([...before, c]);
    expect((await patch(c.id, "[]")).status).toBe(400);
    expect((await call(server, { method: "PATCH", path: "/v1/checks/abc", body: {} })).status).toBe(400);
    expect((await patch(99999, { paused: true })).status).toBe(404);
    expect((await call(server, { path: "/v1/checks?project=nope" })).status).toBe(404);
  });

  test("full-access tokens only, limited to their projects", async () => {
    const mine = (await make({ name: "Mine" })).json.check;
    const theirs = (await make({ project: "other", name: "Theirs" }, "")).json.check;
    const publicToken = (await server.services.tokens.create({ name: "site", kind: "public", project: "ops" })).token;
    expect((await call(server, { path: "/v1/checks?project=ops", token: publicToken })).status).toBe(403);
    const limited = (await server.services.tokens.create({ name: "ops only", projects: ["ops"] })).token;
    const as = (path: string, method = "GET", body?: unknown) => call(server, { path, method, body, token: limited });
    expect((await as("/v1/checks?project=ops")).status).toBe(200);
    expect((await as(`/v1/checks/${mine.id}`)).status).toBe(200);
    expect((await as("/v1/checks?project=other")).status).toBe(403);
    expect((await as(`/v1/checks/${theirs.id}`)).status).toBe(403);
    expect((await as(`/v1/checks/${theirs.id}`, "PATCH", { paused: true })).status).toBe(403);
    expect((await as(`/v1/checks/${theirs.id}`, "DELETE")).status).toBe(403);
    expect((await as("/v1/checks", "POST", { project: "other", name: "Sneaky" })).status).toBe(403);
    expect((await as("/v1/checks/ping-key?project=other")).status).toBe(403);
    expect((await as("/v1/checks/ping-key/regenerate?project=other", "POST")).status).toBe(403);
    expect((await get(theirs.id)).json.check).toEqual(theirs);
  });

  test("the ping key is read, and made anew: the old slug URLs answer 404, the new ones OK", async () => {
    const c = (await make({ name: "Keyed" })).json.check;
    const first = await call(server, { path: "/v1/checks/ping-key?project=ops" });
    const key: string = first.json.ping_key;
    expect(key).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(first.json).toMatchObject({ project: "ops", ping_url: `${base}/ping/${key}/` });
    expect((await call(server, { path: "/v1/checks/ping-key?project=ops" })).json.ping_key).toBe(key);
    const again = await call(server, { method: "POST", path: "/v1/checks/ping-key/regenerate?project=ops" });
    expect(again.status).toBe(200);
    expect(again.json.ping_key).not.toBe(key);
    expect((await server.fetch(`/ping/${key}/keyed`)).status).toBe(404);
    expect((await server.fetch(`/ping/${again.json.ping_key}/keyed`)).status).toBe(200);
    expect((await get(c.id)).json.check.slug_url).toBe(`${base}/ping/${again.json.ping_key}/keyed`);
    expect((await call(server, { path: "/v1/checks/ping-key?project=nope" })).status).toBe(404);
  });

  test("are in /openapi.json like the other routes", async () => {
    const doc = (await call(server, { path: "/openapi.json", token: null })).json;
    expect(Object.keys(doc.paths["/v1/checks"]).sort()).toEqual(["get", "post"]);
    expect(Object.keys(doc.paths["/v1/checks/{id}"]).sort()).toEqual(["delete", "get", "patch"]);
    expect(Object.keys(doc.paths["/v1/checks/ping-key"])).toEqual(["get"]);
    expect(Object.keys(doc.paths["/v1/checks/ping-key/regenerate"])).toEqual(["post"]);
    const body = JSON.stringify(doc.paths["/v1/checks"].post);
    for (const field of Object.keys(checkFields)) expect(body).toContain(`"${field}"`);
  });
});
