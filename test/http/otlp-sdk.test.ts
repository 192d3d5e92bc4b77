// OpenTelemetry's own JavaScript SDK against a running server: its HTTP exporters of logs and
// metrics, in JSON (exporter-*-otlp-http) and protobuf (exporter-*-otlp-proto), gzipped or not,
// one of them set up by the environment variables docs/api.md shows. What they send arrives as
// the docs say, and what the server refuses the SDK reads as a partial success.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { diag, DiagLogLevel } from "@opentelemetry/api";
import { OTLPLogExporter as JsonLogExporter } from "@opentelemetry/exporter-logs-otlp-http";
import { OTLPLogExporter as ProtoLogExporter } from "@opentelemetry/exporter-logs-otlp-proto";
import {
  AggregationTemporalityPreference,
  OTLPMetricExporter as JsonMetricExporter,
} from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPMetricExporter as ProtoMetricExporter } from "@opentelemetry/exporter-metrics-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { type LogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from "@opentelemetry/sdk-logs";
import { MeterProvider, type PushMetricExporter, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { call, eventually, startTestServer, type TestServer } from "../helpers.ts";

let server: TestServer;
// What the SDK says of our answers (a partial success is a warning; a failed export an error).
const said: string[] = [];
beforeAll(async () => {
  server = await startTestServer();
  await server.services.projects.create("shop");
  diag.setLogger(
    {
      error: (...args) => said.push(`error ${args.map(String).join(" ")}`),
      warn: (...args) => said.push(`warn ${args.map(String).join(" ")}`),
      info: () => {},
      debug: () => {},
      verbose: () => {},
    },
    DiagLogLevel.WARN,
  );
});
afterAll(async () => {
  diag.disable();
  await server.close();
});

const headers = () => ({ Authorization: `Bearer ${server.token}` });

type LogExporters = Record<string, () => LogRecordExporter>;
const logExporters: LogExporters = {
  json: () => new JsonLogExporter({ url: `${server.url}/otlp/v1/logs`, headers: headers() }),
  protobuf: () => new ProtoLogExporter({ url: `${server.url}/otlp/v1/logs`, headers: headers() }),
  "json, gzipped": () =>
    new JsonLogExporter({ url: `${server.url}/otlp/v1/logs`, headers: headers(), compression: "gzip" as never }),
  "protobuf, gzipped": () =>
    new ProtoLogExporter({ url: `${server.url}/otlp/v1/logs`, headers: headers(), compression: "gzip" as never }),
};

async function emitLogs(
  exporter: LogRecordExporter,
  service: string,
  emit: (logger: ReturnType<LoggerProvider["getLogger"]>) => void,
  resource: Record<string, string> = {},
) {
  const provider = new LoggerProvider({
    resource: resourceFromAttributes({ "service.name": service, ...resource }),
    processors: [new SimpleLogRecordProcessor({ exporter })],
  });
  emit(provider.getLogger("checkout", "1.0.0"));
  await provider.forceFlush();
  await provider.shutdown();
}

async function events(project: string, channel: string) {
  const r = await call(server, { path: `/v1/events?project=${project}&limit=100` });
  return (r.json.events as Record<string, any>[]).filter((e) => e.channel === channel);
}

async function metricValue(project: string, title: string) {
  const r = await call(server, { path: `/v1/metrics?project=${project}` });
  return (r.json.metrics as { title: string; value: unknown }[]).find((m) => m.title === title)?.value;
}

describe("the SDK's log exporters", () => {
  for (const [encoding, exporter] of Object.entries(logExporters)) {
    test(`${encoding}: a record arrives as an event`, async () => {
      const service = `Shop ${encoding.replace(/\W+/g, " ")}`;
      const channel = service.toLowerCase().replace(/\W+/g, "-");
      await emitLogs(exporter(), service, (logger) =>
        logger.emit({
          body: `Order paid (${encoding})\nwith details`,
          severityNumber: 9,
          severityText: "INFO",
          attributes: { "order.id": 42, "enduser.id": "user-9", plan: "pro", "signalboard.notify": true },
        }),
      );
      const [e] = await eventually(async () => {
        const found = await events("default", channel);
        expect(found).toHaveLength(1);
        return found;
      });
      expect(e).toMatchObject({
        event: `Order paid (${encoding})`,
        description: `Order paid (${encoding})\nwith details`,
        user_id: "user-9",
        notify: true,
        historical: false,
        tags: { severity: "info", "order-id": 42, plan: "pro" },
      });
    });
  }

  test("a record from an hour ago is historical, at its time", async () => {
    const hourAgo = server.clock.now() - 3_600_000;
    await emitLogs(logExporters.protobuf!(), "history", (logger) =>
      logger.emit({ body: "backfilled", timestamp: hourAgo, attributes: { "signalboard.notify": true } }),
    );
    const [e] = await eventually(async () => {
      const found = await events("default", "history");
      expect(found).toHaveLength(1);
      return found;
    });
    expect(e!.historical).toBe(true);
    expect(e!.notify).toBe(true); // kept as sent, never pushed: historical
    expect(Math.abs(e!.timestamp * 1000 - hourAgo)).toBeLessThan(2);
  });

  test("set up by OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_EXPORTER_OTLP_HEADERS, as docs/api.md shows", async () => {
    const saved = { ...process.env };
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `${server.url}/otlp`;
    process.env.OTEL_EXPORTER_OTLP_HEADERS = `Authorization=Bearer ${server.token},X-Signalboard-Project=shop`;
    try {
      await emitLogs(new ProtoLogExporter(), "from-env", (logger) => logger.emit({ body: "configured by env" }));
      const metrics = new ProtoMetricExporter();
      await recordMetrics(metrics, "from-env", (meter) => meter.createGauge("env.gauge").record(5));
    } finally {
      for (const key of ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_HEADERS"]) delete process.env[key];
      Object.assign(process.env, saved);
    }
    await eventually(async () =>
      expect((await events("shop", "from-env")).map((e) => e.event)).toEqual(["configured by env"]),
    );
    expect(await metricValue("shop", "env.gauge")).toBe(5);
  });

  for (const encoding of ["json", "protobuf"])
    test(`${encoding}: what is refused, the SDK reads as a partial success`, async () => {
      said.length = 0;
      await emitLogs(
        logExporters[encoding]!(),
        "refused",
        (logger) => logger.emit({ body: "to a project that is not there" }),
        { "signalboard.project": "nowhere" },
      );
      await eventually(() => expect(said.join("\n")).toContain("Partial Success"));
      expect(said.join("\n")).toMatch(/rejectedLogRecords.*1/);
      expect(said.join("\n")).toContain('Project \\"nowhere\\" does not exist');
    });

  test("a token limited to another project: the export fails, nothing is stored", async () => {
    const { token } = await server.services.tokens.create({ name: "shop only", projects: ["shop"] });
    const exporter = new ProtoLogExporter({
      url: `${server.url}/otlp/v1/logs`,
      headers: { Authorization: `Bearer ${token}`, "X-Signalboard-Project": "default" },
    });
    said.length = 0;
    const provider = new LoggerProvider({
      resource: resourceFromAttributes({ "service.name": "not-mine" }),
      processors: [new SimpleLogRecordProcessor({ exporter })],
    });
    provider.getLogger("x").emit({ body: "x" });
    await provider.forceFlush();
    await provider.shutdown();
    await eventually(() => expect(said.join("\n")).toContain("403"));
    expect(await events("default", "not-mine")).toHaveLength(0);
  });
});

type Meter = ReturnType<MeterProvider["getMeter"]>;

async function recordMetrics(
  exporter: PushMetricExporter,
  service: string,
  record: (meter: Meter) => void | Promise<void>,
  times = 1,
) {
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const provider = new MeterProvider({
    resource: resourceFromAttributes({ "service.name": service }),
    readers: [reader],
  });
  const meter = provider.getMeter("checkout");
  for (let i = 0; i < times; i++) {
    await record(meter);
    await provider.forceFlush();
  }
  await provider.shutdown();
}

describe("the SDK's metric exporters", () => {
  const exporters: Record<string, (delta: boolean) => PushMetricExporter> = {
    json: (delta) =>
      new JsonMetricExporter({
        url: `${server.url}/otlp/v1/metrics`,
        headers: headers(),
        temporalityPreference: delta
          ? AggregationTemporalityPreference.DELTA
          : AggregationTemporalityPreference.CUMULATIVE,
      }),
    protobuf: (delta) =>
      new ProtoMetricExporter({
        url: `${server.url}/otlp/v1/metrics`,
        headers: headers(),
        compression: "gzip" as never,
        temporalityPreference: delta
          ? AggregationTemporalityPreference.DELTA
          : AggregationTemporalityPreference.CUMULATIVE,
      }),
  };

  for (const [encoding, exporter] of Object.entries(exporters)) {
    test(`${encoding}: counters (cumulative and delta), gauges and histograms`, async () => {
      const p = encoding;
      // Cumulative: each export carries the total so far, which is set.
      let counter: ReturnType<Meter["createCounter"]> | null = null;
      await recordMetrics(
        exporter(false),
        "metrics",
        (meter) => {
          counter ??= meter.createCounter(`${p}.orders`);
          counter.add(2, { plan: "pro" });
        },
        3,
      );
      expect(await metricValue("default", `${p}.orders (plan=pro)`)).toBe(6);

      // Delta: each export carries what came since the last, which is added.
      let deltas: ReturnType<Meter["createCounter"]> | null = null;
      await recordMetrics(
        exporter(true),
        "metrics",
        (meter) => {
          deltas ??= meter.createCounter(`${p}.signups`);
          deltas.add(4);
        },
        2,
      );
      expect(await metricValue("default", `${p}.signups`)).toBe(8);

      await recordMetrics(exporter(false), "metrics", (meter) => {
        meter.createGauge(`${p}.temperature`).record(21.5, { room: "lab" });
        const latency = meter.createHistogram(`${p}.latency`);
        for (const ms of [10, 20, 60]) latency.record(ms, { route: "/pay" });
      });
      expect(await metricValue("default", `${p}.temperature (room=lab)`)).toBe(21.5);
      expect(await metricValue("default", `${p}.latency.count (route=/pay)`)).toBe(3);
      expect(await metricValue("default", `${p}.latency.sum (route=/pay)`)).toBe(90);
    });
  }
});
