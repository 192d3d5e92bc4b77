// OTLP over HTTP, request by request: both encodings (protobuf made with the same generated code
// OpenTelemetry's SDK uses), gzip, what a record and a data point become, partial success, the
// token's limits, and bodies that cannot be read. The SDK's own exporters: otlp-sdk.test.ts.
import { otlpStatus } from "../otlp-status.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { gzipSync } from "node:zlib";
import fc from "fast-check";
import generated from "@opentelemetry/otlp-transformer/build/src/generated/root.js";
import { call, type Fetch, post, startTestApp, type TestApp } from "../helpers.ts";

type Coder = { encode(m: unknown): { finish(): Uint8Array }; decode(b: Uint8Array): Record<string, any> };
const proto = (generated as unknown as { opentelemetry: { proto: { collector: any } } }).opentelemetry.proto.collector;
type Pair = { request: Coder; response: Coder };
const LOGS: Pair = {
  request: proto.logs.v1.ExportLogsServiceRequest,
  response: proto.logs.v1.ExportLogsServiceResponse,
};
const METRICS: Pair = {
  request: proto.metrics.v1.ExportMetricsServiceRequest,
  response: proto.metrics.v1.ExportMetricsServiceResponse,
};

let server: TestApp;
let send: Fetch;
beforeAll(async () => {
  server = await startTestApp({ "otlp-body-limit": "256KiB" });
  send = server.fetch;
  for (const name of ["shop", "other"]) await server.services.projects.create(name);
});
afterAll(() => server.close());

const str = (value: string) => ({ stringValue: value });
const attrs = (values: Record<string, unknown>) =>
  Object.entries(values).map(([key, value]) => ({
    key,
    value:
      typeof value === "string"
        ? str(value)
        : typeof value === "boolean"
          ? { boolValue: value }
          : Number.isInteger(value)
            ? { intValue: value }
            : { doubleValue: value },
  }));

const nanos = (ms: number) => `${BigInt(Math.round(ms)) * 1_000_000n}`;

type Rec = { body?: string; attributes?: Record<string, unknown>; time?: number; [k: string]: unknown };
/** An ExportLogsServiceRequest in OTLP/JSON. */
function logsJson(records: Rec[], resource: Record<string, unknown> = { "service.name": "Checkout API" }) {
  return {
    resourceLogs: [
      {
        resource: { attributes: attrs(resource) },
        scopeLogs: [
          {
            scope: { name: "test" },
            logRecords: records.map(({ body, attributes, time, ...rest }) => ({
              ...(time !== undefined && { timeUnixNano: nanos(time) }),
              ...(body !== undefined && { body: str(body) }),
              attributes: attrs(attributes ?? {}),
              ...rest,
            })),
          },
        ],
      },
    ],
  };
}

const exportJson = (path: string, body: unknown, headers: Record<string, string> = {}, token = server.token) =>
  call(server, { path, body, headers, token });

async function exportProto(path: string, coder: Pair, message: unknown, headers: Record<string, string> = {}) {
  const bytes = new Uint8Array(coder.request.encode(message).finish());
  const response = await send(path, {
    method: "POST",
    headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/x-protobuf", ...headers },
    body: headers["Content-Encoding"] === "gzip" ? gzipSync(bytes) : bytes,
  });
  return response;
}

async function events(project: string, query = "") {
  const r = await call(server, { path: `/v1/events?project=${project}&limit=100${query}` });
  expect(r.status).toBe(200);
  return r.json.events as Record<string, any>[];
}

async function metric(project: string, title: string) {
  const r = await call(server, { path: `/v1/metrics?project=${project}` });
  return (r.json.metrics as { title: string; value: unknown }[]).find((m) => m.title === title)?.value;
}

describe("logs in OTLP/JSON", () => {
  test("a record becomes an event as the docs map it", async () => {
    const now = server.clock.now();
    const r = await exportJson(
      "/otlp/v1/logs",
      logsJson(
        [
          {
            body: "Payment failed for order 42\n  at charge (pay.ts:10)\n  at main",
            time: now - 1000,
            severityText: "ERROR",
            severityNumber: 17,
            traceId: "5B8EFFF798038103D269B633813FC60C",
            spanId: "EEE19B7EC3C1B174",
            attributes: {
              "http.status_code": 502,
              "Order.ID": "42",
              retry: false,
              "enduser.id": "user-7",
              nested: 1.5,
            },
          },
        ],
        { "service.name": "Checkout API", "signalboard.project": "shop" },
      ),
    );
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.json).toEqual({});
    const [e] = await events("shop", "&channel=checkout-api");
    expect(e).toMatchObject({
      project: "shop",
      channel: "checkout-api",
      event: "Payment failed for order 42",
      description: "Payment failed for order 42\n  at charge (pay.ts:10)\n  at main",
      user_id: "user-7",
      notify: false,
      historical: false,
      tags: {
        severity: "error",
        "trace-id": "5b8efff798038103d269b633813fc60c",
        "http-status-code": 502,
        "order-id": "42",
        retry: false,
        nested: 1.5,
      },
    });
    expect(e!.tags["enduser-id"]).toBeUndefined();
    // Its own time, not the time it arrived, and still live.
    expect(Math.abs(e!.timestamp * 1000 - (now - 1000))).toBeLessThan(2);
  });

  test("the name is the body's first line, at most 160 characters; severity from the number alone", async () => {
    const long = "x".repeat(400);
    await exportJson(
      "/otlp/v1/logs",
      logsJson([{ body: `\n\n  ${long}\nsecond`, severityNumber: 13 }], { "service.name": "long-lines" }),
    );
    const [e] = await events("default", "&channel=long-lines");
    expect(e!.event).toHaveLength(160);
    expect(e!.event.endsWith("…")).toBe(true);
    expect(e!.description).toBe(`\n\n  ${long}\nsecond`);
    expect(e!.tags.severity).toBe("warn");
  });

  test("a record more than 5 minutes old is historical; a recent one is live at its own time", async () => {
    const now = server.clock.now();
    await exportJson(
      "/otlp/v1/logs",
      logsJson(
        [
          { body: "old", time: now - 10 * 60_000, attributes: { "signalboard.notify": true } },
          { body: "recent", time: now - 4 * 60_000 },
        ],
        { "service.name": "times" },
      ),
    );
    const found = await events("default", "&channel=times");
    const old = found.find((e) => e.event === "old")!;
    const recent = found.find((e) => e.event === "recent")!;
    expect(old.historical).toBe(true);
    expect(old.timestamp * 1000).toBeCloseTo(now - 10 * 60_000, -1);
    expect(recent.historical).toBe(false);
    expect(recent.timestamp * 1000).toBeCloseTo(now - 4 * 60_000, -1);
  });

  test("notify only with signalboard.notify=true", async () => {
    await exportJson(
      "/otlp/v1/logs",
      logsJson(
        [
          { body: "tell me", attributes: { "signalboard.notify": true } },
          { body: "tell me too", attributes: { "signalboard.notify": "true" } },
          { body: "quiet", attributes: { "signalboard.notify": "yes" } },
        ],
        { "service.name": "notices" },
      ),
    );
    const found = await events("default", "&channel=notices");
    const notify = Object.fromEntries(found.map((e) => [e.event, e.notify]));
    expect(notify).toEqual({ "tell me": true, "tell me too": true, quiet: false });
    expect(found.find((e) => e.event === "quiet")!.tags?.["signalboard-notify"]).toBeUndefined();
  });

  test("without service.name the channel is otel; 64-bit integers may be strings or numbers", async () => {
    const now = server.clock.now();
    const body = {
      resourceLogs: [
        {
          scopeLogs: [
            {
              logRecords: [
                {
                  timeUnixNano: Number(nanos(now)),
                  body: str("as a number"),
                  attributes: [{ key: "n", value: { intValue: "9007199254740993" } }],
                },
                {
                  observedTimeUnixNano: nanos(now),
                  body: { kvlistValue: { values: [{ key: "a", value: { arrayValue: { values: [str("b")] } } }] } },
                },
              ],
            },
          ],
        },
      ],
    };
    expect((await exportJson("/otlp/v1/logs", body)).json).toEqual({});
    const found = await events("default", "&channel=otel");
    expect(found.find((e) => e.event === "as a number")!.tags.n).toBe(9007199254740992);
    expect(found.some((e) => e.event === '{"a":["b"]}')).toBe(true);
  });
});

describe("logs in protobuf", () => {
  test("decoded with the generated code; answered in protobuf", async () => {
    const now = server.clock.now();
    const message = {
      resourceLogs: [
        {
          resource: { attributes: [{ key: "service.name", value: str("billing") }] },
          scopeLogs: [
            {
              logRecords: [
                {
                  timeUnixNano: Number(nanos(now - 500)),
                  severityText: "Info",
                  body: str("Invoice sent"),
                  traceId: Buffer.from("0af7651916cd43dd8448eb211c80319c", "hex"),
                  attributes: [{ key: "amount", value: { doubleValue: 12.5 } }],
                },
              ],
            },
          ],
        },
      ],
    };
    const response = await exportProto("/otlp/v1/logs", LOGS, message);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/x-protobuf");
    const answer = LOGS.response.decode(new Uint8Array(await response.arrayBuffer()));
    expect(answer.partialSuccess ?? null).toBeNull();
    const [e] = await events("default", "&channel=billing");
    expect(e).toMatchObject({
      event: "Invoice sent",
      tags: { severity: "info", "trace-id": "0af7651916cd43dd8448eb211c80319c", amount: 12.5 },
    });
  });

  test("gzipped", async () => {
    const message = {
      resourceLogs: [
        {
          resource: { attributes: [{ key: "service.name", value: str("zipped") }] },
          scopeLogs: [{ logRecords: [{ body: str("small") }] }],
        },
      ],
    };
    const response = await exportProto("/otlp/v1/logs", LOGS, message, { "Content-Encoding": "gzip" });
    expect(response.status).toBe(200);
    expect((await events("default", "&channel=zipped"))[0]!.event).toBe("small");
  });

  test("a body that is not protobuf is a 400, and nothing is stored", async () => {
    const before = (await events("default")).length;
    const response = await send("/otlp/v1/logs", {
      method: "POST",
      headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/x-protobuf" },
      body: new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0x0f, 1, 2]),
    });
    expect(response.status).toBe(400);
    const status = await otlpStatus(response);
    expect(status.error).toBe("invalid_body");
    expect(status.message).toContain("not a protobuf-encoded ExportLogsServiceRequest");
    expect((await events("default")).length).toBe(before);
  });
});

describe("what cannot be read", () => {
  test("another content type is a 415", async () => {
    const r = await call(server, { path: "/otlp/v1/logs", body: "x", headers: { "Content-Type": "text/plain" } });
    expect(r.status).toBe(415);
    expect(r.json.message).toContain("application/x-protobuf or application/json");
  });

  test("JSON that is not JSON, or of the wrong shape, is a 400 that says where", async () => {
    expect((await exportJson("/otlp/v1/logs", "{nope")).status).toBe(400);
    const wrong = await exportJson("/otlp/v1/logs", {
      resourceLogs: [{ scopeLogs: [{ logRecords: [{ timeUnixNano: "soon" }] }] }],
    });
    expect(wrong.status).toBe(400);
    expect(wrong.json.message).toContain("resourceLogs[0].scopeLogs[0].logRecords[0].timeUnixNano");
  });

  test("a gzip bomb is a 413, and gzip that is not is a 400", async () => {
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, "a"));
    expect(bomb.length).toBeLessThan(256 * 1024);
    const big = await send("/otlp/v1/logs", {
      method: "POST",
      headers: {
        Authorization: `Bearer ${server.token}`,
        "Content-Type": "application/json",
        "Content-Encoding": "gzip",
      },
      body: bomb,
    });
    expect(big.status).toBe(413);
    expect(((await big.json()) as { message: string }).message).toContain("once unzipped");
    const bad = await send("/otlp/v1/logs", {
      method: "POST",
      headers: {
        Authorization: `Bearer ${server.token}`,
        "Content-Type": "application/json",
        "Content-Encoding": "gzip",
      },
      body: "not gzip",
    });
    expect(bad.status).toBe(400);
    const other = await send("/otlp/v1/logs", {
      method: "POST",
      headers: {
        Authorization: `Bearer ${server.token}`,
        "Content-Type": "application/json",
        "Content-Encoding": "br",
      },
      body: "{}",
    });
    expect(other.status).toBe(415);
  });

  test("a body over the limit is a 413", async () => {
    const r = await exportJson("/otlp/v1/logs", logsJson([{ body: "x".repeat(300 * 1024) }]));
    expect(r.status).toBe(413);
    expect(r.json.message).toContain("SIGNALBOARD_OTLP_BODY_LIMIT");
  });

  test("without a token, a 401", async () => {
    expect((await call(server, { path: "/otlp/v1/logs", body: {}, token: null })).status).toBe(401);
  });
});

describe("partial success", () => {
  test("records of a project that does not exist are counted and told; the rest are stored", async () => {
    const body = {
      resourceLogs: [
        ...logsJson([{ body: "kept" }], { "service.name": "partial" }).resourceLogs,
        ...logsJson([{ body: "lost 1" }, { body: "lost 2" }], {
          "service.name": "partial",
          "signalboard.project": "nowhere",
        }).resourceLogs,
        ...logsJson([{ body: "future", time: server.clock.now() + 3 * 86_400_000 }], { "service.name": "partial" })
          .resourceLogs,
      ],
    };
    const r = await exportJson("/otlp/v1/logs", body);
    expect(r.status).toBe(200);
    expect(r.json.partialSuccess.rejectedLogRecords).toBe("3");
    expect(r.json.partialSuccess.errorMessage).toContain('Project "nowhere" does not exist');
    expect(r.json.partialSuccess.errorMessage).toContain("more than a day in the future");
    expect((await events("default", "&channel=partial")).map((e) => e.event)).toEqual(["kept"]);
  });

  test("in protobuf too", async () => {
    const message = {
      resourceLogs: [
        {
          resource: { attributes: [{ key: "signalboard.project", value: str("nowhere") }] },
          scopeLogs: [{ logRecords: [{ body: str("x") }] }],
        },
      ],
    };
    const response = await exportProto("/otlp/v1/logs", LOGS, message);
    expect(response.status).toBe(200);
    const answer = LOGS.response.decode(new Uint8Array(await response.arrayBuffer()));
    expect(Number(answer.partialSuccess.rejectedLogRecords)).toBe(1);
    expect(answer.partialSuccess.errorMessage).toContain("nowhere");
  });
});

describe("which project", () => {
  test("the header before the resource attribute; an unknown one in the header is a 404", async () => {
    const body = logsJson([{ body: "by header" }], { "service.name": "which", "signalboard.project": "other" });
    expect((await exportJson("/otlp/v1/logs", body, { "X-Signalboard-Project": "shop" })).status).toBe(200);
    expect((await events("shop", "&channel=which")).map((e) => e.event)).toEqual(["by header"]);
    expect((await events("other")).filter((e) => e.channel === "which").length).toBe(0);
    const unknown = await exportJson("/otlp/v1/logs", body, { "X-Signalboard-Project": "nowhere" });
    expect(unknown.status).toBe(404);
    expect((await exportJson("/otlp/v1/logs", body, { "X-Signalboard-Project": "Not A Name" })).status).toBe(400);
  });

  test("a token limited to one project writes there, and cannot write elsewhere by header or attribute", async () => {
    const { token } = await server.services.tokens.create({ name: "shop only", projects: ["shop"] });
    const mine = await exportJson(
      "/otlp/v1/logs",
      logsJson([{ body: "to shop" }], { "service.name": "limited" }),
      {},
      token,
    );
    expect(mine.status).toBe(200);
    expect((await events("shop", "&channel=limited")).map((e) => e.event)).toEqual(["to shop"]);
    const byHeader = await exportJson(
      "/otlp/v1/logs",
      logsJson([{ body: "x" }], { "service.name": "limited" }),
      { "X-Signalboard-Project": "other" },
      token,
    );
    expect(byHeader.status).toBe(403);
    expect(byHeader.json.message).toContain('cannot reach "other"');
    expect(byHeader.json.message).not.toContain("service.name"); // the channel's hint is for channels only
    const byAttribute = await exportJson(
      "/otlp/v1/logs",
      logsJson([{ body: "x" }], { "service.name": "limited", "signalboard.project": "other" }),
      {},
      token,
    );
    expect(byAttribute.status).toBe(403);
    const metrics = await exportJson(
      "/otlp/v1/metrics",
      gaugeJson("m", 1, {}, { "signalboard.project": "other" }),
      {},
      token,
    );
    expect(metrics.status).toBe(403);
    expect((await events("other")).filter((e) => e.channel === "limited").length).toBe(0);
  });

  test("a public token: its project and channel; notify only when it may", async () => {
    const { token } = await server.services.tokens.create({
      name: "web",
      kind: "public",
      project: "shop",
      channel: "web",
    });
    expect(
      (await exportJson("/otlp/v1/logs", logsJson([{ body: "from the page" }], { "service.name": "web" }), {}, token))
        .status,
    ).toBe(200);
    const elsewhere = await exportJson(
      "/otlp/v1/logs",
      logsJson([{ body: "x" }], { "service.name": "api" }),
      {},
      token,
    );
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.json.message).toContain('not "api"');
    expect(elsewhere.json.message).toContain("service.name");
    const loud = logsJson([{ body: "x", attributes: { "signalboard.notify": true } }], { "service.name": "web" });
    const refused = await exportJson("/otlp/v1/logs", loud, {}, token);
    expect(refused.status).toBe(403);
    expect(refused.json.message).toContain("signalboard.notify=true");
    expect((await events("shop", "&channel=web")).map((e) => e.event)).toEqual(["from the page"]);
  });
});

function gaugeJson(
  name: string,
  value: number,
  attributes: Record<string, unknown> = {},
  resource: Record<string, unknown> = {},
) {
  return metricsJson([{ name, gauge: { dataPoints: [{ asDouble: value, attributes: attrs(attributes) }] } }], resource);
}

function metricsJson(metrics: unknown[], resource: Record<string, unknown> = {}) {
  return { resourceMetrics: [{ resource: { attributes: attrs(resource) }, scopeMetrics: [{ metrics }] }] };
}

describe("metrics", () => {
  test("a gauge sets; its title is the name and the point's attributes", async () => {
    expect(
      (await exportJson("/otlp/v1/metrics", gaugeJson("queue.depth", 7, { queue: "mail", region: "eu" }))).json,
    ).toEqual({});
    await exportJson("/otlp/v1/metrics", gaugeJson("queue.depth", 3, { region: "eu", queue: "mail" }));
    expect(await metric("default", "queue.depth (queue=mail, region=eu)")).toBe(3);
  });

  test("a delta sum adds, a cumulative one sets", async () => {
    const sum = (temporality: number, value: string) =>
      metricsJson([
        {
          name: temporality === 1 ? "orders" : "orders.total",
          sum: { aggregationTemporality: temporality, isMonotonic: true, dataPoints: [{ asInt: value }] },
        },
      ]);
    await exportJson("/otlp/v1/metrics", sum(1, "5"));
    await exportJson("/otlp/v1/metrics", sum(1, "2"));
    await exportJson("/otlp/v1/metrics", sum(2, "5"));
    await exportJson("/otlp/v1/metrics", sum(2, "9"));
    expect(await metric("default", "orders")).toBe(7);
    expect(await metric("default", "orders.total")).toBe(9);
  });

  test("a histogram is kept as NAME.count and NAME.sum", async () => {
    const histogram = (temporality: number, count: string, sum: number) =>
      metricsJson([
        {
          name: "latency",
          histogram: {
            aggregationTemporality: temporality,
            dataPoints: [
              { count, sum, bucketCounts: [count], explicitBounds: [], attributes: attrs({ route: "/pay" }) },
            ],
          },
        },
      ]);
    await exportJson("/otlp/v1/metrics", histogram(1, "3", 1.5));
    await exportJson("/otlp/v1/metrics", histogram(1, "2", 0.5));
    expect(await metric("default", "latency.count (route=/pay)")).toBe(5);
    expect(await metric("default", "latency.sum (route=/pay)")).toBe(2);
  });

  test("in protobuf, with partial success for what cannot be stored", async () => {
    await call(server, { path: "/v1/insight", body: { project: "default", title: "state", value: "green" } });
    const message = {
      resourceMetrics: [
        {
          scopeMetrics: [
            {
              metrics: [
                { name: "temperature", gauge: { dataPoints: [{ asDouble: 21.5 }] } },
                { name: "state", sum: { aggregationTemporality: 1, dataPoints: [{ asInt: 1 }] } },
                { name: "nan", gauge: { dataPoints: [{ asDouble: Number.NaN }] } },
              ],
            },
          ],
        },
      ],
    };
    const response = await exportProto("/otlp/v1/metrics", METRICS, message);
    expect(response.status).toBe(200);
    const answer = METRICS.response.decode(new Uint8Array(await response.arrayBuffer()));
    expect(Number(answer.partialSuccess.rejectedDataPoints)).toBe(2);
    expect(answer.partialSuccess.errorMessage).toContain("cannot be incremented");
    expect(await metric("default", "temperature")).toBe(21.5);
    expect(await metric("default", "state")).toBe("green");
  });

  test("the resource attribute names the project", async () => {
    await exportJson("/otlp/v1/metrics", gaugeJson("stock", 12, {}, { "signalboard.project": "shop" }));
    expect(await metric("shop", "stock")).toBe(12);
  });
});

test("/v1/log still answers as before beside it", async () => {
  expect((await post(server, "/v1/log", { project: "default", channel: "x", event: "y" })).status).toBe(200);
});

describe("whatever is sent, the answer is a 200 or a 4xx", () => {
  const anyValue = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: "small" },
      fc.record({ stringValue: fc.string() }),
      fc.record({ intValue: fc.oneof(fc.integer(), fc.string()) }),
      fc.record({ doubleValue: fc.oneof(fc.double(), fc.constantFrom("NaN", "Infinity", "x")) }),
      fc.record({ boolValue: fc.anything() }),
      fc.record({ arrayValue: fc.record({ values: fc.array(tie("value"), { maxLength: 3 }) }) }),
      fc.record({ kvlistValue: fc.record({ values: fc.array(tie("kv"), { maxLength: 3 }) }) }),
      fc.anything(),
    ),
    kv: fc.record({
      key: fc.oneof(fc.string(), fc.constantFrom("__proto__", "service.name", "enduser.id")),
      value: tie("value"),
    }),
  }));
  const attributes = fc.array(anyValue.kv, { maxLength: 4 });
  const nanos = fc.oneof(
    fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String),
    fc.integer(),
    fc.string(),
    fc.constant(null),
  );
  const record = fc.record(
    {
      timeUnixNano: nanos,
      observedTimeUnixNano: nanos,
      severityNumber: fc.oneof(fc.integer({ min: -5, max: 40 }), fc.string()),
      severityText: fc.oneof(fc.string(), fc.integer()),
      body: anyValue.value,
      attributes,
      traceId: fc.oneof(fc.string(), fc.stringMatching(/^[0-9a-f]{32}$/)),
      eventName: fc.string(),
    },
    { requiredKeys: [] },
  );
  const resource = fc.record({ attributes }, { requiredKeys: [] });
  const logs = fc.oneof(
    fc.record({
      resourceLogs: fc.array(
        fc.record(
          {
            resource,
            scopeLogs: fc.array(fc.record({ logRecords: fc.array(record, { maxLength: 4 }) }), { maxLength: 2 }),
          },
          { requiredKeys: [] },
        ),
        { maxLength: 2 },
      ),
    }),
    fc.anything(),
  );
  const point = fc.record(
    {
      attributes,
      asDouble: fc.oneof(fc.double(), fc.string()),
      asInt: fc.oneof(fc.integer(), fc.string()),
      count: fc.oneof(fc.integer(), fc.string()),
      sum: fc.double(),
      flags: fc.integer(),
    },
    { requiredKeys: [] },
  );
  const data = fc.record(
    {
      dataPoints: fc.array(point, { maxLength: 3 }),
      aggregationTemporality: fc.oneof(fc.integer({ min: -1, max: 3 }), fc.string()),
    },
    { requiredKeys: [] },
  );
  const metric = fc.record(
    { name: fc.string(), gauge: data, sum: data, histogram: data, exponentialHistogram: data, summary: data },
    { requiredKeys: [] },
  );
  const metrics = fc.oneof(
    fc.record({
      resourceMetrics: fc.array(
        fc.record(
          {
            resource,
            scopeMetrics: fc.array(fc.record({ metrics: fc.array(metric, { maxLength: 3 }) }), { maxLength: 2 }),
          },
          { requiredKeys: [] },
        ),
        { maxLength: 2 },
      ),
    }),
    fc.anything(),
  );

  const fine = (status: number) => status === 200 || (status >= 400 && status < 500);

  test("OTLP/JSON", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom("logs", "metrics"), logs, metrics, async (signal, l, m) => {
        const r = await exportJson(`/otlp/v1/${signal}`, JSON.stringify(signal === "logs" ? l : m) ?? "null");
        if (!fine(r.status)) throw new Error(`${r.status}: ${r.text}`);
        expect(r.headers.get("content-type")).toContain("application/json");
      }),
      { numRuns: 200 },
    );
  });

  test("protobuf: any bytes", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom("logs", "metrics"), fc.uint8Array({ maxLength: 300 }), async (signal, bytes) => {
        const response = await send(`/otlp/v1/${signal}`, {
          method: "POST",
          headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/x-protobuf" },
          body: bytes,
        });
        if (!fine(response.status)) throw new Error(`${response.status}: ${await response.text()}`);
      }),
      { numRuns: 300 },
    );
  });
});

test("past the token's rate limit, a 429 with Retry-After, as on /v1/log", async () => {
  const limited = await startTestApp({ "rate-limit-full": "2/m" });
  try {
    const body = JSON.stringify(logsJson([{ body: "x" }]));
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 3; i++) {
      const r = await call(limited, { path: "/otlp/v1/logs", body });
      statuses.push(r.status);
      retryAfter ??= r.headers.get("retry-after");
    }
    expect(statuses).toEqual([200, 200, 429]);
    expect(Number(retryAfter)).toBeGreaterThan(0);
  } finally {
    await limited.close();
  }
});

test("to a protobuf export an error is a google.rpc.Status in protobuf, with the status and headers of the API's", async () => {
  const limited = await startTestApp({ "rate-limit-full": "1/m" });
  try {
    const body = new Uint8Array(LOGS.request.encode(logsJson([{ body: "x" }])).finish());
    const exportAs = (token: string) =>
      limited.fetch("/otlp/v1/logs", {
        method: "POST",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/x-protobuf" },
        body,
      });
    const refused = await exportAs("sb_not_a_token");
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toContain("Bearer");
    expect(await otlpStatus(refused)).toMatchObject({ error: "unauthorized", domain: "signalboard" });
    expect((await exportAs(limited.token)).status).toBe(200);
    const limitedNow = await exportAs(limited.token);
    expect(limitedNow.status).toBe(429);
    expect(Number(limitedNow.headers.get("retry-after"))).toBeGreaterThan(0);
    const status = await otlpStatus(limitedNow);
    expect(status.error).toBe("rate_limited");
    expect(status.message).toContain("Retry after");
    // A JSON export's error stays the API's JSON error: its `message` is a JSON Status's.
    const json = await limited.fetch("/otlp/v1/logs", {
      method: "POST",
      headers: { Authorization: "Bearer sb_not_a_token", "Content-Type": "application/json" },
      body: "{}",
    });
    expect(json.status).toBe(401);
    expect(((await json.json()) as { message: string }).message).toBeTruthy();
  } finally {
    await limited.close();
  }
});

test("a web page may export with a public token: the preflight allows its headers", async () => {
  const preflight = await send("/otlp/v1/logs", {
    method: "OPTIONS",
    headers: {
      Origin: "https://shop.example.com",
      "Access-Control-Request-Method": "POST",
      "Access-Control-Request-Headers": "authorization, content-type, x-signalboard-project",
    },
  });
  expect(preflight.status).toBe(204);
  expect(preflight.headers.get("access-control-allow-methods")).toContain("POST");
  expect(preflight.headers.get("access-control-allow-headers")).toContain("X-Signalboard-Project");
});
