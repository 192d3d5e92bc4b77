// OpenTelemetry logs beside /v1/log (BENCH_ONLY=otlp): POST /otlp/v1/logs with protobuf exports
// of 100 records each (as an SDK's batch processor sends them), against POST /v1/log with the
// README's event, at the same connections in alternating rounds against the compiled binary. Both
// are counted in events a second; the ratio is OTLP's over /v1/log's. Then heavy exports (the most
// a body may hold, in records or in attributes) against the server run from source with
// loop-hold.ts preloaded: how long each is answered in, and the most the event loop was held.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import generated from "@opentelemetry/otlp-transformer/build/src/generated/root.js";
import { EVENT } from "./ingest.ts";
import { BUN, cpuSeconds, median, postScript, ROOT, startProcess, tempDir, wrk } from "./lib.ts";

const RECORDS = 100;
const CONNECTIONS = 16;

type Encoder = { encode(message: unknown): { finish(): Uint8Array } };
const request = (
  generated as unknown as {
    opentelemetry: { proto: { collector: { logs: { v1: { ExportLogsServiceRequest: Encoder } } } } };
  }
).opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;

const str = (stringValue: string) => ({ stringValue });

/** An export of RECORDS records that say what the README's event says, each its own order. */
function exportBody(): Uint8Array {
  const logRecords = Array.from({ length: RECORDS }, (_, i) => ({
    severityNumber: 9,
    severityText: "INFO",
    body: str(`${EVENT.event}\n${EVENT.description}`),
    traceId: Buffer.from(crypto.getRandomValues(new Uint8Array(16))),
    attributes: [
      { key: "env", value: str("prod") },
      { key: "build", value: { intValue: 4211 } },
      { key: "order", value: { intValue: i } },
    ],
  }));
  return request
    .encode({
      resourceLogs: [
        {
          resource: { attributes: [{ key: "service.name", value: str(EVENT.channel) }] },
          scopeLogs: [{ scope: { name: "bench" }, logRecords }],
        },
      ],
    })
    .finish();
}

/** A wrk script that POSTs the export in `file` (bytes, read by Lua as they are). */
function protobufScript(file: string, token: string): string {
  const path = join(tempDir(), "otlp.lua");
  writeFileSync(
    path,
    [
      `wrk.method = "POST"`,
      `local f = io.open(${JSON.stringify(file)}, "rb")`,
      `wrk.body = f:read("*a")`,
      `f:close()`,
      `wrk.headers["Content-Type"] = "application/x-protobuf"`,
      `wrk.headers["Authorization"] = ${JSON.stringify(`Bearer ${token}`)}`,
      `errors = 0`,
      `response = function(status, headers, body) if status ~= 200 then errors = errors + 1 end end`,
    ].join("\n") + "\n",
  );
  return path;
}

export async function otlpBenchmark(binary: string[], opts: { rounds: number; seconds: number }) {
  const dataDir = tempDir();
  const args = ["--data-dir", dataDir];
  const made = Bun.spawnSync([...binary, "token", "create", "--init", "--name", "bench", ...args]);
  if (made.exitCode !== 0) throw new Error(`token create failed: ${made.stderr}`);
  const token = made.stdout.toString().trim().split("\n").at(-1)!;
  const server = await startProcess([...binary, "serve", "--port", "0", "--host", "127.0.0.1", ...args], {
    SIGNALBOARD_LOG_LEVEL: "info",
  });
  try {
    const file = join(tempDir(), "export.bin");
    const body = exportBody();
    writeFileSync(file, body);
    const otlp = protobufScript(file, token);
    const log = postScript("log", EVENT, { "Content-Type": "application/json", Authorization: `Bearer ${token}` });
    const run = (path: string, script: string) => {
      const before = cpuSeconds(server.pid);
      // An export of 100 records takes 100 events' time: on a busy machine more than wrk's default 2 s.
      const r = wrk(`${server.url}${path}`, { connections: CONNECTIONS, seconds: opts.seconds, script, timeout: 20 });
      if (r.errors) throw new Error(`${r.errors} requests to ${path} failed`);
      return { ...r, cpu: cpuSeconds(server.pid) - before };
    };
    run("/v1/log", log); // warm-ups
    run("/otlp/v1/logs", otlp);
    const logs: ReturnType<typeof run>[] = [];
    const exports: ReturnType<typeof run>[] = [];
    for (let round = 0; round < opts.rounds; round++) {
      logs.push(run("/v1/log", log));
      exports.push(run("/otlp/v1/logs", otlp));
    }
    const logEvents = median(logs.map((r) => r.rps));
    const otlpEvents = median(exports.map((r) => r.rps * RECORDS));
    const cpuPerEvent = (runs: typeof logs, per: number) =>
      median(runs.map((r) => (r.cpu * 1e6) / (r.requests * per))).toFixed(1);
    return {
      bytes: body.length,
      rows: [
        ["route", "requests/s", "events/s", "p50 ms", "p99 ms", "CPU µs per event", "events/s vs /v1/log"],
        [
          "POST /v1/log (1 event)",
          Math.round(logEvents),
          Math.round(logEvents),
          median(logs.map((r) => r.p50)).toFixed(2),
          median(logs.map((r) => r.p99)).toFixed(2),
          cpuPerEvent(logs, 1),
          "1.00",
        ],
        [
          `POST /otlp/v1/logs (protobuf, ${RECORDS} records)`,
          Math.round(otlpEvents / RECORDS),
          Math.round(otlpEvents),
          median(exports.map((r) => r.p50)).toFixed(2),
          median(exports.map((r) => r.p99)).toFixed(2),
          cpuPerEvent(exports, RECORDS),
          (otlpEvents / logEvents).toFixed(2),
        ],
      ] as (string | number)[][],
    };
  } finally {
    await server.stop();
  }
}

const attribute = (i: number) => ({ key: `k${i}`, value: str(`v${i}`) });
const logs = (logRecords: unknown[]) => request.encode({ resourceLogs: [{ scopeLogs: [{ logRecords }] }] }).finish();

/** Exports near the 4 MiB body limit, each heavy in its own way. */
const HEAVY: [string, () => Uint8Array][] = [
  [
    "one record with 180,000 attributes",
    () => logs([{ body: str("x"), attributes: Array.from({ length: 180_000 }, (_, i) => attribute(i)) }]),
  ],
  [
    "10,000 records with 24 attributes each",
    () =>
      logs(
        Array.from({ length: 10_000 }, (_, r) => ({
          body: str(`record ${r}`),
          attributes: Array.from({ length: 24 }, (_, i) => attribute(i)),
        })),
      ),
  ],
  ["10,000 records of one line", () => logs(Array.from({ length: 10_000 }, (_, r) => ({ body: str(`record ${r}`) })))],
  ["1,400,000 empty records (refused: 413)", () => logs(Array.from({ length: 1_400_000 }, () => ({})))],
];

type LoopLine = { t: number; held: number };

/** Each heavy export sent `times` times, one after the other: its median answer time and the loop's longest hold meanwhile. */
export async function heavyOtlpBenchmark(times = 3): Promise<(string | number)[][]> {
  const dataDir = tempDir();
  const main = `${ROOT}/src/main.ts`;
  const args = ["--data-dir", dataDir];
  const made = Bun.spawnSync([BUN, main, "token", "create", "--init", "--name", "bench", ...args]);
  if (made.exitCode !== 0) throw new Error(`token create failed: ${made.stderr}`);
  const token = made.stdout.toString().trim().split("\n").at(-1)!;
  const holds = join(tempDir(), "loop-hold.jsonl");
  writeFileSync(holds, "");
  const server = await startProcess(
    [BUN, "--preload", `${ROOT}/test/bench/loop-hold.ts`, main, "serve", "--port", "0", "--host", "127.0.0.1", ...args],
    { SIGNALBOARD_LOG_LEVEL: "info", LOOP_HOLD_FILE: holds },
  );
  const lines = () =>
    readFileSync(holds, "utf8")
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as LoopLine);
  const rows: (string | number)[][] = [
    ["export", "bytes", "status", "answered in (ms, median)", "event loop held (ms, most)"],
  ];
  /** Waits until the probe (a line a second, each of the second before its `t`) has written a line after `at`. */
  const probedAfter = async (at: number) => {
    while (!lines().some((l) => l.t > at)) await Bun.sleep(50);
  };
  try {
    let previous = Date.now();
    for (const [name, make] of HEAVY) {
      const body = make();
      // A whole second of the probe's after the previous export, so the lines after `from` hold none of it.
      await probedAfter(previous + 1000);
      const from = Date.now();
      const answered: number[] = [];
      let status = 0;
      for (let i = 0; i < times; i++) {
        const t = performance.now();
        const response = await fetch(`${server.url}/otlp/v1/logs`, {
          method: "POST",
          headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/x-protobuf" },
          body: body as Uint8Array<ArrayBuffer>,
        });
        await response.arrayBuffer();
        status = response.status;
        answered.push(performance.now() - t);
      }
      previous = Date.now(); // answered once written: the line that covers this moment is the last one
      await probedAfter(previous);
      const held = Math.max(
        0,
        ...lines()
          .filter((l) => l.t > from)
          .map((l) => l.held),
      );
      rows.push([name, body.length, status, median(answered).toFixed(0), held.toFixed(1)]);
    }
  } finally {
    await server.stop();
  }
  return rows;
}
