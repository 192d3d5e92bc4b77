// Ingest routes over real HTTP: every route, its happy path, and the ways a body can be wrong.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { call, onPostgres, peek, post, startTestApp, type TestApp } from "../helpers.ts";
import type { SqliteStore } from "../../src/store/sqlite/index.ts";

let server: TestApp;
beforeAll(async () => {
  server = await startTestApp();
});
afterAll(() => server.close());

type Case = {
  name: string;
  method?: string;
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  status: number;
  error?: string;
  contains?: string[];
  field?: string;
};

const event = {
  project: "default",
  channel: "deploys",
  event: "Deployed",
  description: "v1.2.3 is live",
  icon: "🚀",
  tags: { env: "prod", build: 42, green: true },
};

const cases: Case[] = [
  {
    name: "log an event",
    path: "/v1/log",
    body: event,
    status: 200,
    contains: ['"event":"Deployed"', '"channel":"deploys"'],
  },
  {
    name: "log-event uses title and message",
    path: "/log-event",
    body: { project: "default", channel: "signups", title: "New user", message: "alice joined" },
    status: 200,
    contains: ['"event":"New user"', '"description":"alice joined"'],
  },
  {
    name: "a :shortcode: icon is stored as the emoji",
    path: "/v1/log",
    body: { ...event, icon: ":tada:" },
    status: 200,
    contains: ['"icon":"🎉"'],
  },
  {
    name: "null fields count as absent",
    path: "/v1/log",
    body: { ...event, description: null, icon: null, tags: null, user_id: null, timestamp: null },
    status: 200,
  },
  { name: "unknown fields are ignored", path: "/v1/log", body: { ...event, something: "new" }, status: 200 },
  {
    name: "fractional timestamp",
    path: "/v1/log",
    body: { ...event, timestamp: 1700000000.25 },
    status: 200,
    contains: ['"timestamp":1700000000.25', '"historical":true'],
  },
  {
    name: "millisecond timestamp",
    path: "/v1/log",
    body: { ...event, timestamp: 1700000000000 },
    status: 400,
    field: "timestamp",
    contains: ["milliseconds"],
  },
  {
    name: "timestamp far in the future",
    path: "/v1/log",
    body: { ...event, timestamp: Date.now() / 1000 + 7 * 86400 },
    status: 400,
    field: "timestamp",
    contains: ["future"],
  },
  {
    name: "missing event",
    path: "/v1/log",
    body: { project: "default", channel: "x" },
    status: 400,
    field: "event",
    contains: ["required"],
  },
  {
    name: "bad project name",
    path: "/v1/log",
    body: { ...event, project: "My Project" },
    status: 400,
    field: "project",
    contains: ["lowercase"],
  },
  { name: "bad channel name", path: "/v1/log", body: { ...event, channel: "a_b" }, status: 400, field: "channel" },
  {
    name: "two emojis",
    path: "/v1/log",
    body: { ...event, icon: "🚀🚀" },
    status: 400,
    field: "icon",
    contains: ["single emoji"],
  },
  {
    name: "unknown shortcode",
    path: "/v1/log",
    body: { ...event, icon: ":no-such-emoji:" },
    status: 400,
    field: "icon",
  },
  {
    name: "tag key with capitals",
    path: "/v1/log",
    body: { ...event, tags: { Plan: "pro" } },
    status: 400,
    field: "tags.Plan",
  },
  {
    name: "tag value object",
    path: "/v1/log",
    body: { ...event, tags: { plan: { a: 1 } } },
    status: 400,
    field: "tags.plan",
  },
  {
    name: "__proto__ tag key",
    path: "/v1/log",
    body: '{"project":"default","channel":"x","event":"e","tags":{"__proto__":"x"}}',
    status: 400,
    field: "tags.__proto__",
  },
  {
    name: "too many tags",
    path: "/v1/log",
    body: { ...event, tags: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, i])) },
    status: 400,
    field: "tags",
  },
  {
    name: "description too long",
    path: "/v1/log",
    body: { ...event, description: "x".repeat(10_001) },
    status: 400,
    field: "description",
  },
  {
    name: "parser must be text or markdown",
    path: "/v1/log",
    body: { ...event, parser: "html" },
    status: 400,
    field: "parser",
  },
  {
    name: "notify must be a boolean",
    path: "/v1/log",
    body: { ...event, notify: "yes" },
    status: 400,
    field: "notify",
  },
  { name: "body is an array", path: "/v1/log", body: [event], status: 400 },
  { name: "body is not JSON", path: "/v1/log", body: "{nope", status: 400, error: "invalid_json" },
  {
    name: "empty body",
    path: "/v1/log",
    body: "",
    headers: { "Content-Type": "application/json" },
    status: 400,
    error: "invalid_json",
  },
  {
    name: "form content type",
    path: "/v1/log",
    body: "a=b",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    status: 415,
    error: "unsupported_media_type",
  },
  {
    name: "unknown project",
    path: "/v1/log",
    body: { ...event, project: "nope" },
    status: 404,
    error: "not_found",
    contains: ["signalboard project create nope"],
  },
  {
    name: "body over the limit",
    path: "/v1/log",
    body: { ...event, description: "x".repeat(70_000) },
    status: 413,
    error: "payload_too_large",
  },
  { name: "wrong method", method: "GET", path: "/v1/log", status: 405, error: "method_not_allowed" },
  { name: "unknown route", method: "GET", path: "/v2/nothing", status: 404, error: "not_found" },
  {
    name: "metric with only title, value and icon",
    path: "/send-metric",
    body: { title: "Users", value: 10, icon: "👥" },
    status: 200,
  },
  { name: "text metric", path: "/send-metric", body: { title: "Status", value: "online" }, status: 200 },
  {
    name: "metric value must be number or string",
    path: "/send-metric",
    body: { title: "Users", value: [1] },
    status: 400,
    field: "value",
  },
  { name: "metric value is required", path: "/send-metric", body: { title: "Users" }, status: 400, field: "value" },
  {
    name: "insight set",
    path: "/v1/insight",
    body: { project: "default", title: "Revenue", value: 99.5, icon: "💰" },
    status: 200,
    contains: ['"value":99.5'],
  },
  {
    name: "insight needs a project",
    path: "/v1/insight",
    body: { title: "Revenue", value: 1 },
    status: 400,
    field: "project",
  },
  {
    name: "insight increment needs $inc",
    method: "PATCH",
    path: "/v1/insight",
    body: { project: "default", title: "Revenue", value: 5 },
    status: 400,
    field: "value",
  },
  {
    name: "identify",
    path: "/v1/identify",
    body: { project: "default", user_id: "u1", properties: { plan: "pro", seats: 3 } },
    status: 200,
  },
  {
    name: "identify property must be scalar",
    path: "/v1/identify",
    body: { project: "default", user_id: "u1", properties: { nested: { a: 1 } } },
    status: 400,
    field: "properties.nested",
  },
  {
    name: "group",
    path: "/v1/group",
    body: { project: "default", group_id: "acme", user_id: "u1", properties: { tier: "gold" } },
    status: 200,
  },
  { name: "group needs group_id", path: "/v1/group", body: { project: "default" }, status: 400, field: "group_id" },
];

describe("ingest routes", () => {
  for (const c of cases) {
    test(c.name, async () => {
      const res = await call(server, {
        method: c.method ?? (c.body === undefined ? "GET" : "POST"),
        path: c.path,
        body: c.body,
        headers: c.headers,
      });
      expect(res.status).toBe(c.status);
      expect(res.headers.get("content-type")).toContain("application/json");
      expect(res.json.statusCode).toBe(c.status);
      expect(res.json.success).toBe(c.status === 200);
      if (c.status !== 200) expect(typeof res.json.message).toBe("string");
      if (c.error) expect(res.json.error).toBe(c.error);
      for (const text of c.contains ?? []) expect(res.text).toContain(text);
      if (c.field !== undefined) {
        const paths = res.json.validation.body.map((i: { path: string }) => i.path);
        expect(paths).toContain(c.field);
        for (const issue of res.json.validation.body) expect(issue.message).toContain(issue.path || "");
      }
    });
  }
});

describe("metrics", () => {
  test("increment adds to the stored value: 1254 then 5 gives 1259", async () => {
    expect((await post(server, "/send-metric", { title: "Sessions", value: 1254 })).status).toBe(200);
    expect((await post(server, "/send-metric", { title: "Sessions", value: 5, increment: true })).status).toBe(200);
    const { json } = await call(server, { path: "/v1/metrics?project=default" });
    expect(json.metrics.find((m: { title: string }) => m.title === "Sessions").value).toBe(1259);
  });

  test("/send-metric answers with the metric as stored: after an increment, its new value", async () => {
    const set = await post(server, "/send-metric", { title: "Answered", value: 40, icon: "💽" });
    expect(set.json).toMatchObject({
      success: true,
      statusCode: 200,
      project: "default",
      title: "Answered",
      value: 40,
      icon: "💽",
    });
    const incremented = await post(server, "/send-metric", { title: "Answered", value: 2, increment: true });
    expect(incremented.json).toMatchObject({
      success: true,
      statusCode: 200,
      project: "default",
      title: "Answered",
      value: 42,
    });
    expect(typeof incremented.json.updated_at).toBe("number");
  });

  test("a new metric incremented starts from 0", async () => {
    await post(server, "/send-metric", { title: "Fresh", value: 7, increment: true });
    const { json } = await call(server, { path: "/v1/metrics" });
    expect(json.metrics.find((m: { title: string }) => m.title === "Fresh").value).toBe(7);
  });

  test("PATCH /v1/insight with $inc increments", async () => {
    await post(server, "/v1/insight", { project: "default", title: "Orders", value: 10 });
    const res = await call(server, {
      method: "PATCH",
      path: "/v1/insight",
      body: { project: "default", title: "Orders", value: { $inc: 3 } },
    });
    expect(res.status).toBe(200);
    expect(res.json.value).toBe(13);
  });

  test("incrementing a text metric is a 400 that says why, and the value is kept", async () => {
    await post(server, "/send-metric", { title: "Mode", value: "online" });
    const res = await post(server, "/send-metric", { title: "Mode", value: 1, increment: true });
    expect(res.status).toBe(400);
    expect(res.json.message).toContain("cannot be incremented");
    expect(res.json.validation.body[0].path).toBe("value");
    const { json } = await call(server, { path: "/v1/metrics" });
    expect(json.metrics.find((m: { title: string }) => m.title === "Mode").value).toBe("online");
  });

  test("concurrent increments all count", async () => {
    await Promise.all(
      Array.from({ length: 50 }, () => post(server, "/send-metric", { title: "Hits", value: 2, increment: true })),
    );
    const { json } = await call(server, { path: "/v1/metrics" });
    expect(json.metrics.find((m: { title: string }) => m.title === "Hits").value).toBe(100);
  });

  test("history records the value per minute", async () => {
    await post(server, "/send-metric", { title: "Temp", value: 20 });
    await post(server, "/send-metric", { title: "Temp", value: 21 });
    const { json } = await call(server, { path: "/v1/metrics/history?title=Temp" });
    expect(json.points.at(-1).value).toBe(21);
    // from and to bound the range.
    const before = await call(server, {
      path: `/v1/metrics/history?title=Temp&to=${Math.floor(Date.now() / 1000) - 3600}`,
    });
    expect(before.json.points).toEqual([]);
    const bad = await call(server, { path: "/v1/metrics/history?title=Temp&to=tomorrow" });
    expect(bad.status).toBe(400);
  });
});

describe("events", () => {
  test("a channel that does not exist is created by its first event", async () => {
    const res = await post(server, "/v1/log", { project: "default", channel: "brand-new", event: "First" });
    expect(res.status).toBe(200);
    const list = await call(server, { path: "/v1/events?project=default&channel=brand-new" });
    expect(list.json.events.map((e: { event: string }) => e.event)).toEqual(["First"]);
  });

  test("an event is readable back with everything it was sent with", async () => {
    const sent = await post(server, "/v1/log", {
      ...event,
      channel: "roundtrip",
      user_id: "user-7",
      notify: true,
      parser: "markdown",
    });
    const { json } = await call(server, { path: `/v1/events/${sent.json.id}` });
    expect(json.event).toMatchObject({
      project: "default",
      channel: "roundtrip",
      event: "Deployed",
      description: "v1.2.3 is live",
      icon: "🚀",
      tags: { env: "prod", build: 42, green: true },
      user_id: "user-7",
      notify: true,
      parser: "markdown",
      historical: false,
    });
  });
});

describe("identify and group", () => {
  test("properties merge into what was stored; a property sent as null is removed", async () => {
    const stored = async (table: "profiles" | "groups", key: "user_id" | "group_id", id: string) =>
      JSON.parse(
        (await peek<{ properties: string }>(server, `SELECT properties FROM ${table} WHERE ${key} = ?`, id))[0]!
          .properties,
      );
    for (const [path, table, key] of [
      ["/v1/identify", "profiles", "user_id"],
      ["/v1/group", "groups", "group_id"],
    ] as const) {
      expect(
        (await post(server, path, { project: "default", [key]: "merge-1", properties: { plan: "pro", seats: 3 } }))
          .status,
      ).toBe(200);
      expect(
        (await post(server, path, { project: "default", [key]: "merge-1", properties: { plan: null, trial: true } }))
          .status,
      ).toBe(200);
      expect(await stored(table, key, "merge-1")).toEqual({ seats: 3, trial: true });
      expect(
        (await post(server, path, { project: "default", [key]: "merge-1", properties: { seats: null, trial: false } }))
          .status,
      ).toBe(200);
      expect(await stored(table, key, "merge-1")).toEqual({ trial: false });
    }
  });
});

describe("storage", () => {
  test.skipIf(onPostgres)(
    "when the database cannot grow, ingest answers 503 with Retry-After, then resumes by itself",
    async () => {
      const { sqlite } = server.store as SqliteStore;
      const pages = (sqlite.query("PRAGMA page_count").get() as { page_count: number }).page_count;
      sqlite.exec(`PRAGMA max_page_count = ${pages}`);
      try {
        const statuses = new Set<number>();
        for (let i = 0; i < 50; i++)
          statuses.add((await post(server, "/v1/log", { ...event, description: "y".repeat(5000) })).status);
        expect(statuses.has(503)).toBe(true);
        const res = await post(server, "/v1/log", { ...event, description: "z".repeat(5000) });
        expect(res.status).toBe(503);
        expect(res.json.error).toBe("storage_unavailable");
        expect(res.headers.get("retry-after")).toBe("5");
        // Not ready while writes fail: a load balancer sends the events elsewhere.
        const ready = await call(server, { path: "/readyz" });
        expect(ready.status).toBe(503);
        expect(ready.json.error).toBe("storage_unavailable");
        expect(ready.headers.get("retry-after")).toBe("5");
      } finally {
        sqlite.exec("PRAGMA max_page_count = 1073741823");
      }
      // Ready again by itself once writes go through, before any event is sent.
      expect((await call(server, { path: "/readyz" })).status).toBe(200);
      expect((await post(server, "/v1/log", event)).status).toBe(200);
    },
  );
});

describe("Idempotency-Key", () => {
  const keyed = (key: string, body: unknown, path = "/v1/log", token = server.token) =>
    call(server, { path, body, token, headers: { "Idempotency-Key": key } });

  test("a retried request returns the first answer and stores nothing twice", async () => {
    const body = { project: "default", channel: "idem", event: "Charged card", tags: { amount: 10 } };
    const first = await keyed("charge-1", body);
    const again = await keyed("charge-1", body);
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const list = await call(server, { path: "/v1/events?project=default&channel=idem" });
    expect(list.json.events).toHaveLength(1);
  });

  test("retries racing each other still store once", async () => {
    const body = { project: "default", channel: "idem-race", event: "Once" };
    const answers = await Promise.all(Array.from({ length: 20 }, () => keyed("race-1", body)));
    expect(new Set(answers.map((a) => a.json.id)).size).toBe(1);
    expect((await call(server, { path: "/v1/events?project=default&channel=idem-race" })).json.events).toHaveLength(1);
  });

  test("an increment retried with its key is applied once", async () => {
    await post(server, "/send-metric", { title: "Idem counter", value: 100 });
    for (let i = 0; i < 3; i++)
      expect((await keyed("inc-1", { title: "Idem counter", value: 5, increment: true }, "/send-metric")).status).toBe(
        200,
      );
    const { json } = await call(server, { path: "/v1/metrics" });
    expect(json.metrics.find((m: { title: string }) => m.title === "Idem counter").value).toBe(105);
  });

  test("the same request with its keys in another order is the same request (replayed, not a 422)", async () => {
    const first = await keyed("reordered", {
      project: "default",
      channel: "idem-order",
      event: "Ordered",
      tags: { a: 1, b: 2 },
    });
    const again = await call(server, {
      path: "/v1/log",
      body: '{"tags":{"b":2,"a":1},"event":"Ordered","channel":"idem-order","project":"default"}',
      headers: { "Idempotency-Key": "reordered" },
    });
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json.id).toBe(first.json.id);
    expect((await call(server, { path: "/v1/events?project=default&channel=idem-order" })).json.events).toHaveLength(1);
  });

  test("a key named __proto__ counts like any other: a different value is a different request (422)", async () => {
    const first = await call(server, {
      path: "/v1/identify",
      body: '{"project":"default","user_id":"u-proto","properties":{"__proto__":"first"}}',
      headers: { "Idempotency-Key": "proto-key" },
    });
    expect(first.status).toBe(200);
    const other = await call(server, {
      path: "/v1/identify",
      body: '{"project":"default","user_id":"u-proto","properties":{"__proto__":"DIFFERENT"}}',
      headers: { "Idempotency-Key": "proto-key" },
    });
    expect(other.status).toBe(422);
  });

  test("the same key with a different request is a 422", async () => {
    await keyed("reused", { project: "default", channel: "idem", event: "A" });
    const res = await keyed("reused", { project: "default", channel: "idem", event: "B" });
    expect(res.status).toBe(422);
    expect(res.json.error).toBe("idempotency_key_reused");
  });

  test("keys belong to their token", async () => {
    const other = (await server.services.tokens.create({ name: "other-idem" })).token;
    const body = { project: "default", channel: "idem-tokens", event: "Per token" };
    const a = await keyed("shared-key", body);
    const b = await keyed("shared-key", body, "/v1/log", other);
    expect(a.json.id).not.toBe(b.json.id);
  });

  test("a failed request does not use up its key", async () => {
    const bad = await keyed("after-failure", { project: "nope", channel: "c", event: "e" });
    expect(bad.status).toBe(404);
    await server.services.projects.create("nope");
    const good = await keyed("after-failure", { project: "nope", channel: "c", event: "e" });
    expect(good.status).toBe(200);
  });

  test("a malformed key is a 400", async () => {
    const res = await keyed("has spaces in it", { project: "default", channel: "c", event: "e" });
    expect(res.status).toBe(400);
    expect(res.json.error).toBe("invalid_idempotency_key");
  });

  test("keys are kept for a day", async () => {
    const { idempotency } = server.store;
    const now = Date.now();
    const day = 86_400_000;
    expect(await server.store.tx((tx) => tx.idempotency.claim(999, "old", "f", now - day - 1))).toBeNull();
    await idempotency.complete(999, "old", "{}");
    expect(await server.store.tx((tx) => tx.idempotency.claim(999, "new", "f", now - day + 60_000))).toBeNull();
    await idempotency.complete(999, "new", "{}");
    // Within the day a key gives back what was stored; past it, it is free again.
    expect(await idempotency.claim(999, "new", "f", now)).toEqual({ fingerprint: "f", response: "{}" });
    expect(await idempotency.claim(999, "old", "g", now)).toBeNull();
    expect(await idempotency.prune(now + day)).toBeGreaterThanOrEqual(1);
  });
});
