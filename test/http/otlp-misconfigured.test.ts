// An exporter pointed at the wrong place hears what to change: OTEL_EXPORTER_OTLP_ENDPOINT without
// /otlp (the SDK then posts to /v1/logs and /v1/metrics), a signal's path given twice, or traces;
// in the google.rpc.Status an exporter posting protobuf reads.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { otlpStatus } from "../otlp-status.ts";
import { startTestApp, type TestApp } from "../helpers.ts";

let server: TestApp;
beforeAll(async () => {
  server = await startTestApp({});
});
afterAll(() => server.close());

async function post(path: string) {
  const response = await server.fetch(path, {
    method: "POST",
    headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/x-protobuf" },
    body: new Uint8Array(0),
  });
  return { status: response.status, message: (await otlpStatus(response)).message };
}

test("an endpoint without /otlp: the answer says to add it", async () => {
  const logs = await post("/v1/logs");
  expect(logs.status).toBe(404);
  expect(logs.message).toContain("/otlp/v1/logs");
  expect(logs.message).toContain("OTEL_EXPORTER_OTLP_ENDPOINT");
  // GET /v1/metrics exists: a POST is still a 405, and says where exports go.
  const metrics = await post("/v1/metrics");
  expect(metrics.status).toBe(405);
  expect(metrics.message).toContain("use GET");
  expect(metrics.message).toContain("OTEL_EXPORTER_OTLP_ENDPOINT");
});

test("a signal's path given in the endpoint too, or any other path under /otlp", async () => {
  for (const path of ["/otlp/v1/logs/v1/logs", "/otlp/logs", "/otlp"]) {
    const r = await post(path);
    expect(r.status).toBe(404);
    expect(r.message).toContain("/otlp/v1/logs and /otlp/v1/metrics");
  }
});

test("traces are not taken, and the answer says so", async () => {
  const r = await post("/otlp/v1/traces");
  expect(r.status).toBe(404);
  expect(r.message).toContain("not traces");
});

test("other routes keep their answer, in the API's JSON", async () => {
  const response = await server.fetch("/v1/nothing", {
    method: "POST",
    headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/x-protobuf" },
    body: new Uint8Array(0),
  });
  expect(response.status).toBe(404);
  expect(((await response.json()) as { message: string }).message).toBe(
    "No route POST /v1/nothing. See /docs for the API.",
  );
});
