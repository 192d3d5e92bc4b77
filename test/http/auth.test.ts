// Tokens and their scopes: full tokens do everything; public tokens only ingest, only into their
// project (and channel); revoked tokens stop at once; browsers get CORS answers on ingest routes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { call, post, startTestApp, type TestApp } from "../helpers.ts";

let server: TestApp;
let publicToken: string;
let channelToken: string;

beforeAll(async () => {
  server = await startTestApp();
  await server.services.projects.create("site");
  await server.services.projects.create("other");
  publicToken = (await server.services.tokens.create({ name: "web", kind: "public", project: "site" })).token;
  channelToken = (
    await server.services.tokens.create({ name: "signup-form", kind: "public", project: "site", channel: "signups" })
  ).token;
});
afterAll(() => server.close());

const logTo = (project: string, channel: string) => ({ project, channel, event: "Visit" });
/** An OpenTelemetry resource whose records go to project "other". */
const otherProject = { attributes: [{ key: "signalboard.project", value: { stringValue: "other" } }] };

describe("authentication", () => {
  // Every ingest route (checked against the route table below) and a read of each kind; the table
  // itself is walked, every route of it, in test/http/routes.test.ts.
  const routes: [string, string][] = [
    ["POST", "/v1/log"],
    ["POST", "/log-event"],
    ["POST", "/send-metric"],
    ["POST", "/v1/insight"],
    ["PATCH", "/v1/insight"],
    ["POST", "/v1/identify"],
    ["POST", "/v1/group"],
    ["POST", "/v1/page"],
    ["POST", "/otlp/v1/logs"],
    ["POST", "/otlp/v1/metrics"],
    ["GET", "/v1/events"],
    ["GET", "/v1/metrics"],
    ["GET", "/v1/stream"],
  ];
  test("these are every ingest route of the route table", () => {
    const table = server.routes.filter((r) => r.access === "token").map((r) => `${r.method} ${r.path}`);
    expect(routes.filter(([method]) => method !== "GET").map(([m, p]) => `${m} ${p}`)).toEqual(table);
  });
  const bad: [string, Record<string, string>][] = [
    ["no header", {}],
    ["malformed header", { Authorization: "Token abc" }],
    ["empty bearer", { Authorization: "Bearer " }],
    ["unknown token", { Authorization: "Bearer sb_0000000000000000000000000000000000000000" }],
    ["garbage token", { Authorization: "Bearer hello" }],
  ];
  for (const [method, path] of routes) {
    for (const [label, headers] of bad) {
      test(`${method} ${path} with ${label} is 401`, async () => {
        const res = await call(server, {
          method,
          path,
          token: null,
          headers,
          body: method === "GET" ? undefined : logTo("default", "x"),
        });
        expect(res.status).toBe(401);
        expect(res.json).toMatchObject({ success: false, statusCode: 401, error: "unauthorized" });
        expect(res.json.message).toContain("Authorization: Bearer");
      });
    }
  }

  const bodies: Record<string, unknown> = {
    "/v1/log": { project: "other", channel: "x", event: "e" },
    "/log-event": { project: "other", channel: "x", title: "e" },
    "/send-metric": { project: "other", title: "m", value: 1 },
    "/v1/insight": { project: "other", title: "m", value: 1 },
    "/v1/identify": { project: "other", user_id: "u" },
    "/v1/group": { project: "other", group_id: "g" },
    "/v1/page": { project: "other", payload: { path: "/" } },
    "/otlp/v1/logs": { resourceLogs: [{ resource: otherProject, scopeLogs: [{ logRecords: [{}] }] }] },
    "/otlp/v1/metrics": {
      resourceMetrics: [
        { resource: otherProject, scopeMetrics: [{ metrics: [{ name: "m", gauge: { dataPoints: [{ asInt: 1 }] } }] }] },
      ],
    },
  };
  for (const [method, path] of routes) {
    const body = method === "PATCH" ? { project: "other", title: "m", value: { $inc: 1 } } : bodies[path];
    test(`${method} ${path}: a revoked token is 401, a public token elsewhere is 403`, async () => {
      const { token, info } = await server.services.tokens.create({ name: `revoked-${method}-${path}` });
      await server.services.tokens.revoke(String(info.id));
      const revoked = await call(server, { method, path, token, body: method === "GET" ? undefined : body });
      expect(revoked.status).toBe(401);
      const outside = await call(server, {
        method,
        path,
        token: publicToken,
        body: method === "GET" ? undefined : body,
      });
      expect(outside.status).toBe(403);
      expect(outside.json.error).toBe("forbidden");
    });
  }

  test("a revoked token is refused at once, by the same running server", async () => {
    const { token, info } = await server.services.tokens.create({ name: "short-lived" });
    expect((await post(server, "/v1/log", logTo("default", "x"), token)).status).toBe(200);
    await server.services.tokens.revoke(String(info.id));
    const res = await post(server, "/v1/log", logTo("default", "x"), token);
    expect(res.status).toBe(401);
    expect(res.json.message).toContain("revoked");
  });

  test("last use is recorded without a write per request, and reaches the database in the background", async () => {
    const { token, info } = await server.services.tokens.create({ name: "tracked" });
    expect((await server.services.tokens.list()).find((t) => t.id === info.id)!.lastUsedAt).toBeNull();
    await post(server, "/v1/log", logTo("default", "x"), token);
    expect((await server.services.tokens.list()).find((t) => t.id === info.id)!.lastUsedAt).toBeGreaterThan(
      Date.now() - 5000,
    );
    expect((await server.store.tokens.findById(info.id))!.lastUsedAt).toBeNull();
    await server.services.tokens.flushLastUsed();
    expect((await server.store.tokens.findById(info.id))!.lastUsedAt).toBeGreaterThan(Date.now() - 5000);
  });

  test("error bodies never echo the token", async () => {
    const secret = "sb_SECRETSECRETSECRETSECRETSECRETSECRETSECR";
    const res = await post(server, "/v1/log", logTo("default", "x"), secret);
    expect(res.text).not.toContain(secret);
  });
});

describe("public tokens", () => {
  test("may send events to their project and any channel there", async () => {
    const res = await post(server, "/v1/log", logTo("site", "pageviews"), publicToken);
    expect(res.status).toBe(200);
  });

  test("may set metrics in their project; /send-metric defaults to it", async () => {
    expect(
      (await post(server, "/send-metric", { title: "Visitors", value: 1, increment: true }, publicToken)).status,
    ).toBe(200);
    const { json } = await call(server, { path: "/v1/metrics?project=site" });
    expect(json.metrics.map((m: { title: string }) => m.title)).toContain("Visitors");
  });

  test("may not send to another project", async () => {
    const res = await post(server, "/v1/log", logTo("other", "x"), publicToken);
    expect(res.status).toBe(403);
    expect(res.json.message).toContain('"site"');
  });

  test("limited to a channel: may send there, and only there", async () => {
    expect((await post(server, "/v1/log", logTo("site", "signups"), channelToken)).status).toBe(200);
    const res = await post(server, "/v1/log", logTo("site", "pageviews"), channelToken);
    expect(res.status).toBe(403);
    expect(res.json.message).toContain('"signups"');
  });

  test("limited to a channel: may not set metrics or traits", async () => {
    expect((await post(server, "/send-metric", { title: "X", value: 1 }, channelToken)).status).toBe(403);
    expect((await post(server, "/v1/identify", { project: "site", user_id: "u" }, channelToken)).status).toBe(403);
  });

  test("may not send notifications unless allowed: notify: true is a 403 that says how, and nothing is stored", async () => {
    const res = await post(
      server,
      "/v1/log",
      { ...logTo("site", "alerts"), event: "Pushed by a visitor", notify: true },
      publicToken,
    );
    expect(res.status).toBe(403);
    expect(res.json.error).toBe("forbidden");
    expect(res.json.message).toContain("may not send notifications");
    expect(res.json.message).toContain("Settings → API");
    const stored = await call(server, { path: "/v1/events?project=site&limit=200" });
    expect(stored.json.events.some((e: { event: string }) => e.event === "Pushed by a visitor")).toBe(false);
    // Without notify, or as a historical event (never pushed), it is fine.
    expect((await post(server, "/v1/log", { ...logTo("site", "alerts"), notify: false }, publicToken)).status).toBe(
      200,
    );
    expect(
      (
        await post(
          server,
          "/v1/log",
          { ...logTo("site", "alerts"), notify: true, timestamp: Math.floor(Date.now() / 1000) - 60 },
          publicToken,
        )
      ).status,
    ).toBe(200);
  });

  test("a public token allowed to notify may; the flag can be turned off again, effective at once", async () => {
    const { token, info } = await server.services.tokens.create({
      name: "notifier",
      kind: "public",
      project: "site",
      mayNotify: true,
    });
    expect(info.mayNotify).toBe(true);
    expect((await post(server, "/v1/log", { ...logTo("site", "alerts"), notify: true }, token)).status).toBe(200);
    await server.services.tokens.setMayNotify(String(info.id), false);
    expect((await post(server, "/v1/log", { ...logTo("site", "alerts"), notify: true }, token)).status).toBe(403);
  });

  test("new public tokens may not notify by default; full tokens always may", async () => {
    expect(
      (await server.services.tokens.create({ name: "default-public", kind: "public", project: "site" })).info.mayNotify,
    ).toBe(false);
    expect(server.services.tokens.create({ name: "odd", kind: "full", mayNotify: true })).rejects.toThrow(
      /public tokens/,
    );
  });

  for (const path of ["/v1/events", "/v1/metrics", "/v1/stream", "/v1/events/1"]) {
    test(`may not read ${path}`, async () => {
      const res = await call(server, { path, token: publicToken });
      expect(res.status).toBe(403);
      expect(res.json.error).toBe("forbidden");
    });
  }

  test("stop working when their project is deleted", async () => {
    await server.services.projects.create("temp");
    const { token } = await server.services.tokens.create({ name: "temp", kind: "public", project: "temp" });
    await server.services.projects.deleteProject("temp");
    expect((await post(server, "/v1/log", logTo("temp", "x"), token)).status).toBe(401);
  });
});

describe("CORS for web pages", () => {
  for (const path of [
    "/v1/log",
    "/log-event",
    "/send-metric",
    "/v1/insight",
    "/v1/identify",
    "/v1/group",
    "/v1/page",
  ]) {
    test(`preflight on ${path}`, async () => {
      const res = await server.fetch(path, {
        method: "OPTIONS",
        headers: {
          Origin: "https://example.com",
          "Access-Control-Request-Method": "POST",
          "Access-Control-Request-Headers": "authorization, content-type",
        },
      });
      expect(res.status).toBe(204);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(res.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("authorization");
      expect(res.headers.get("access-control-allow-methods")).toContain("POST");
    });
  }

  test("ingest answers, including errors, are readable cross-origin", async () => {
    const ok = await post(server, "/v1/log", logTo("site", "x"), publicToken);
    expect(ok.headers.get("access-control-allow-origin")).toBe("*");
    const denied = await post(server, "/v1/log", logTo("other", "x"), publicToken);
    expect(denied.headers.get("access-control-allow-origin")).toBe("*");
    // A page can read when to retry and which request it was.
    for (const header of ["Retry-After", "RateLimit-Remaining", "Idempotent-Replayed", "X-Request-Id"])
      expect(denied.headers.get("access-control-expose-headers")).toContain(header);
  });
});

describe("rate limits", () => {
  test("public tokens get 429 with Retry-After and RateLimit headers past their limit", async () => {
    const limited = await startTestApp({ "rate-limit-public": "3/m" });
    try {
      const { token } = await limited.services.tokens.create({ name: "web", kind: "public", project: "default" });
      const statuses = [];
      for (let i = 0; i < 5; i++) statuses.push((await post(limited, "/v1/log", logTo("default", "x"), token)).status);
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      const res = await post(limited, "/v1/log", logTo("default", "x"), token);
      expect(res.json.error).toBe("rate_limited");
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(res.headers.get("ratelimit-limit")).toBe("3");
      expect(res.headers.get("ratelimit-remaining")).toBe("0");
      // the full token is not affected by the public token's limit
      expect((await post(limited, "/v1/log", logTo("default", "x"))).status).toBe(200);
    } finally {
      await limited.close();
    }
  });

  test("guessing tokens from one address runs into 429", async () => {
    const limited = await startTestApp({ "rate-limit-ip": "2/m" });
    try {
      const statuses = [];
      for (let i = 0; i < 4; i++)
        statuses.push((await post(limited, "/v1/log", logTo("default", "x"), `sb_guess${i}`)).status);
      expect(statuses).toEqual([401, 401, 429, 429]);
    } finally {
      await limited.close();
    }
  });
});

describe("operations", () => {
  test("/metrics is off by default, and with it on needs a full-access token", async () => {
    expect((await call(server, { path: "/metrics" })).status).toBe(404);
    const observed = await startTestApp({ metrics: "true" });
    try {
      await post(observed, "/v1/log", { project: "default", channel: "m", event: "counted" });
      await post(observed, "/v1/log", { project: "nope", channel: "m", event: "refused" });
      expect((await call(observed, { path: "/metrics", token: null })).status).toBe(401);
      const { token } = await observed.services.tokens.create({ name: "web", kind: "public", project: "default" });
      expect((await call(observed, { path: "/metrics", token })).status).toBe(403);
      const res = await call(observed, { path: "/metrics" });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("text/plain");
      expect(res.text).toContain('signalboard_ingest_requests_total{route="POST /v1/log",status="200"} 1');
      expect(res.text).toContain('signalboard_ingest_requests_total{route="POST /v1/log",status="404"} 1');
      // Both timed, in buckets of seconds (which ones they fell in depends on how busy the machine is).
      expect(res.text).toContain('signalboard_ingest_duration_seconds_bucket{route="POST /v1/log",le="0.005"}');
      expect(res.text).toMatch(/signalboard_ingest_duration_seconds_bucket\{route="POST \/v1\/log",le="\+Inf"\} 2/);
      expect(res.text).toContain('signalboard_ingest_duration_seconds_count{route="POST /v1/log"} 2');
      for (const name of [
        "signalboard_writer_last_batch_size",
        "signalboard_writer_queue_depth",
        "signalboard_sse_clients",
        "signalboard_notifications_pending",
        "process_resident_memory_bytes",
      ])
        expect(res.text).toContain(`\n${name} `);
      for (const name of [
        "signalboard_writer_batches_total",
        "signalboard_writer_writes_total",
        "signalboard_sse_connections_total",
        "signalboard_notifications_delivered_total",
      ])
        expect(res.text).toContain(`# TYPE ${name} counter\n`);
    } finally {
      await observed.close();
    }
  });

  test("errors carry a request id: the caller's, or a new one", async () => {
    const mine = await call(server, { path: "/v1/log", body: {}, headers: { "X-Request-Id": "abc-123" } });
    expect(mine.headers.get("x-request-id")).toBe("abc-123");
    const generated = await call(server, { path: "/v1/log", body: {} });
    expect(generated.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    // Refused before anything reads the body, by its declared size: still the caller's id.
    const big = await call(server, {
      path: "/v1/log",
      body: "x".repeat(70_000),
      headers: { "X-Request-Id": "too-big-1" },
    });
    expect(big.status).toBe(413);
    expect(big.headers.get("x-request-id")).toBe("too-big-1");
  });

  test("the OpenAPI document is generated from the request schemas, and /docs renders it", async () => {
    const res = await call(server, { path: "/openapi.json", token: null });
    expect(res.status).toBe(200);
    expect(res.json.openapi).toBe("3.1.0");
    const log = res.json.paths["/v1/log"].post;
    expect(log.requestBody.content["application/json"].schema.required).toEqual(["project", "channel", "event"]);
    expect(log.requestBody.content["application/json"].schema.properties.project.pattern).toBe("^[a-z0-9-]{1,64}$");
    expect(res.json.paths["/v1/events"].get.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(["project", "channel", "tag", "q", "cursor", "limit"]),
    );
    for (const path of [
      "/log-event",
      "/send-metric",
      "/v1/insight",
      "/v1/identify",
      "/v1/group",
      "/v1/page",
      "/v1/events/{id}",
      "/v1/metrics",
      "/v1/stream",
    ])
      expect(res.json.paths[path]).toBeDefined();
    expect(res.json.paths["/v1/events/{id}"].get.parameters).toEqual([
      expect.objectContaining({ name: "id", in: "path", required: true }),
    ]);
    const docs = await server.fetch(`/docs`, { headers: { Accept: "text/html" } });
    const page = await docs.text();
    expect(docs.status).toBe(200);
    for (const text of ["/v1/log", "PATCH", "Idempotency-Key", "project", "pattern ^[a-z0-9-]{1,64}$"])
      expect(page).toContain(text);
  });

  test("/readyz checks the database", async () => {
    const res = await call(server, { path: "/readyz", token: null });
    expect(res.json).toMatchObject({ success: true, status: "ready" });
  });
});
