// What one OTLP export may hold: each record and data point becomes a write of its own, so a body
// of a few megabytes of empty records (two bytes each in protobuf) is refused whole, nothing of it
// stored, and the answer says which setting of the sender makes smaller batches.
import { afterAll, beforeAll, expect, test } from "bun:test";
import generated from "@opentelemetry/otlp-transformer/build/src/generated/root.js";
import { jsonCount, protobufCount } from "../../src/api/otlp-wire.ts";
import { otlpStatus } from "../otlp-status.ts";
import { call, startTestApp, type TestApp } from "../helpers.ts";

type Coder = { encode(m: unknown): { finish(): Uint8Array } };
const collector = (generated as unknown as { opentelemetry: { proto: { collector: any } } }).opentelemetry.proto
  .collector;
const LOGS: Coder = collector.logs.v1.ExportLogsServiceRequest;
const METRICS: Coder = collector.metrics.v1.ExportMetricsServiceRequest;

let server: TestApp;
beforeAll(async () => {
  server = await startTestApp({});
  await server.services.projects.create("shop");
});
afterAll(() => server.close());

const logs = (count: number, service = "checkout") => ({
  resourceLogs: [
    {
      resource: { attributes: [{ key: "service.name", value: { stringValue: service } }] },
      scopeLogs: [{ logRecords: Array.from({ length: count }, (_, i) => ({ body: { stringValue: `r${i}` } })) }],
    },
  ],
});
const gauges = (count: number) => ({
  resourceMetrics: [
    {
      scopeMetrics: [
        {
          metrics: [
            {
              name: "load",
              gauge: {
                dataPoints: Array.from({ length: count }, (_, i) => ({
                  asDouble: i,
                  attributes: [{ key: "n", value: { intValue: i } }],
                })),
              },
            },
          ],
        },
      ],
    },
  ],
});

async function protobuf(path: string, coder: Coder, message: unknown, token = server.token) {
  const response = await server.fetch(path, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${token}`,
      "Content-Type": "application/x-protobuf",
      "X-Signalboard-Project": "shop",
    },
    body: new Uint8Array(coder.encode(message).finish()),
  });
  return { status: response.status, json: response.status === 200 ? { message: "" } : await otlpStatus(response) };
}

const stored = async () =>
  (await call(server, { path: "/v1/events?project=shop&limit=1" })).json.events.length as number;
const metricCount = async () =>
  ((await call(server, { path: "/v1/metrics?project=shop" })).json.metrics as unknown[]).length;

test("an export of more than 10,000 log records is refused whole, and says how to send smaller batches", async () => {
  const r = await protobuf("/otlp/v1/logs", LOGS, logs(10_001));
  expect(r.status).toBe(413);
  expect(r.json.message).toContain("10001 log records");
  expect(r.json.message).toContain("at most 10000");
  expect(r.json.message).toContain("send_batch_max_size");
  expect(await stored()).toBe(0);
  // In JSON too.
  const json = await call(server, {
    path: "/otlp/v1/logs",
    body: logs(10_001),
    headers: { "X-Signalboard-Project": "shop" },
  });
  expect(json.status).toBe(413);
  expect(await stored()).toBe(0);
});

test("an export of more than 10,000 data points is refused whole", async () => {
  const r = await protobuf("/otlp/v1/metrics", METRICS, gauges(10_001));
  expect(r.status).toBe(413);
  expect(r.json.message).toContain("10001 data points");
  expect(await metricCount()).toBe(0);
});

test("a public token's export holds at most 1,000 records; within that it is stored", async () => {
  const { token } = await server.services.tokens.create({ name: "page", kind: "public", project: "shop" });
  const r = await protobuf("/otlp/v1/logs", LOGS, logs(1_001, "web"), token);
  expect(r.status).toBe(413);
  expect(r.json.message).toContain("a public token's export holds at most 1000");
  expect(await stored()).toBe(0);
  expect((await protobuf("/otlp/v1/logs", LOGS, logs(1_000, "web"), token)).status).toBe(200);
  let count = 0;
  for (let cursor = ""; ; ) {
    const page = (await call(server, { path: `/v1/events?project=shop&channel=web&limit=200${cursor}` })).json;
    count += page.events.length;
    if (!page.next_cursor) break;
    cursor = `&cursor=${page.next_cursor}`;
  }
  expect(count).toBe(1_000);
});

test("two million empty records in four megabytes of protobuf are counted, not decoded, and refused", async () => {
  // ExportLogsServiceRequest { resource_logs { scope_logs { log_records {} × 2,000,000 } } }, as bytes.
  const records = 2_000_000;
  const empties = Buffer.alloc(records * 2);
  for (let i = 0; i < empties.length; i += 2) empties[i] = 0x12; // log_records (2), length 0
  const scopeLogs = Buffer.concat([Buffer.from([0x12]), varint(empties.length), empties]);
  const body = Buffer.concat([Buffer.from([0x0a]), varint(scopeLogs.length), scopeLogs]); // resource_logs (1)
  expect(protobufCount("logs", body)).toBe(records);
  const response = await server.fetch("/otlp/v1/logs", {
    method: "POST",
    headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/x-protobuf" },
    body,
  });
  expect(response.status).toBe(413);
  expect((await otlpStatus(response)).message).toContain("2000000 log records");
});

test("the count before decoding is the count of what decoding finds", () => {
  const histogram = {
    name: "latency",
    histogram: {
      aggregationTemporality: 1,
      dataPoints: [
        { count: 2, sum: 3 },
        { count: 1, sum: 1 },
      ],
    },
  };
  const empty = { name: "nothing", sum: { dataPoints: [] } };
  const metrics = {
    resourceMetrics: [...gauges(3).resourceMetrics, { scopeMetrics: [{ metrics: [histogram, empty] }] }],
  };
  expect(protobufCount("metrics", METRICS.encode(metrics).finish())).toBe(3 + 2 + 1);
  const twice = { resourceLogs: [...logs(4).resourceLogs, ...logs(5).resourceLogs] };
  expect(protobufCount("logs", LOGS.encode(twice).finish())).toBe(9);
  expect(protobufCount("logs", new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0x0f, 1]))).toBe(null);
  expect(jsonCount("metrics", metrics)).toBe(6);
  expect(jsonCount("logs", twice)).toBe(9);
  expect(jsonCount("logs", { resourceLogs: [null, { scopeLogs: "x" }] })).toBe(0);
});

function varint(n: number): Buffer {
  const out: number[] = [];
  do {
    out.push((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
    n = Math.floor(n / 128);
  } while (n);
  return Buffer.from(out);
}
