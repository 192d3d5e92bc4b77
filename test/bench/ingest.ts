// Ingest throughput and latency: Signalboard against a bare Bun.serve that parses the same JSON,
// measured in alternating rounds (so machine noise hits both alike) with wrk on loopback.
import { Database } from "bun:sqlite";
import { join } from "node:path";
import {
  BUN,
  cpuSeconds,
  median,
  postScript,
  type Proc,
  ROOT,
  settle,
  startProcess,
  tempDir,
  wrk,
  type WrkResult,
} from "./lib.ts";

export const EVENT = {
  project: "default",
  channel: "deploys",
  event: "Deployed v1.4.2",
  description: "All checks green on build 4211",
  icon: "🚀",
  tags: { env: "prod", build: 4211 },
};

export type IngestOptions = { rounds: number; seconds: number; binary: string[] };
export type IngestResult = {
  rows: (string | number)[][];
  curve: { connections: number; bare: number; full: number }[];
};

async function server(
  binary: string[],
  dataDir: string,
  sync: "full" | "normal",
  writer: "inline" | "thread" = "inline",
): Promise<Proc> {
  return startProcess(
    [
      ...binary,
      "serve",
      "--port",
      "0",
      "--host",
      "127.0.0.1",
      "--data-dir",
      dataDir,
      "--sqlite-sync",
      sync,
      "--writer",
      writer,
    ],
    { SIGNALBOARD_LOG_LEVEL: "info" },
  );
}

/**
 * Alternating rounds of the baseline and `target`; medians of each. `pid`: the server's process,
 * whose CPU time (all its threads) per request is reported beside the ratio.
 */
function versus(
  bareUrl: string,
  targetUrl: string,
  opts: {
    connections: number;
    seconds: number;
    rounds: number;
    script: string;
    bareScript?: string;
    pid?: number;
    pin?: number;
  },
) {
  const base: number[] = [];
  const ours: WrkResult[] = [];
  const cpu: number[] = [];
  for (let round = 0; round < opts.rounds; round++) {
    base.push(
      wrk(bareUrl, {
        connections: opts.connections,
        seconds: opts.seconds,
        script: opts.bareScript ?? opts.script,
        pin: opts.pin,
      }).rps,
    );
    const before = opts.pid ? cpuSeconds(opts.pid) : 0;
    const r = wrk(targetUrl, {
      connections: opts.connections,
      seconds: opts.seconds,
      script: opts.script,
      pin: opts.pin,
    });
    if (r.errors) throw new Error(`${r.errors} requests failed during the benchmark of ${targetUrl}`);
    if (opts.pid) cpu.push(((cpuSeconds(opts.pid) - before) * 1e6) / r.requests);
    ours.push(r);
  }
  const rps = median(ours.map((r) => r.rps));
  const bare = median(base);
  return {
    rps,
    bare,
    ratio: rps / bare,
    p50: median(ours.map((r) => r.p50)),
    p99: median(ours.map((r) => r.p99)),
    cpuUs: cpu.length ? median(cpu) : NaN,
  };
}

/**
 * The storage baseline: the same event rows (event plus its two tag rows) written straight through
 * bun:sqlite into a database with Signalboard's schema, in transactions of 64, for `seconds`.
 */
function bareInsert(binary: string[], sync: "full" | "normal", seconds: number): number {
  const dataDir = tempDir();
  Bun.spawnSync([...binary, "project", "create", "--init", "default", "--data-dir", dataDir]); // the schema, and the project
  const db = new Database(join(dataDir, "signalboard.db"));
  db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = ${sync.toUpperCase()}; PRAGMA busy_timeout = 5000`);
  const project = db.query<{ id: number }, []>("SELECT id FROM projects WHERE name = 'default'").get()!.id;
  db.query("INSERT INTO channels (project_id, name, created_at) VALUES (?, ?, ?)").run(
    project,
    EVENT.channel,
    Date.now(),
  );
  const channel = db.query<{ id: number }, []>("SELECT id FROM channels ORDER BY id DESC LIMIT 1").get()!.id;
  const event = db.query<{ id: number }, [number, number, string, string, string, string, number, number]>(
    "INSERT INTO events (project_id, channel_id, event, description, icon, tags, ts, received_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
  );
  const tag = db.query("INSERT INTO event_tags (project_id, key, value, ts, event_id) VALUES (?, ?, ?, ?, ?)");
  const tags = JSON.stringify(EVENT.tags);
  const batch = db.transaction(() => {
    for (let i = 0; i < 64; i++) {
      const now = Date.now();
      const { id } = event.get(project, channel, EVENT.event, EVENT.description, EVENT.icon, tags, now, now)!;
      for (const [key, value] of Object.entries(EVENT.tags)) tag.run(project, key, String(value), now, id);
    }
  });
  let rows = 0;
  const start = performance.now();
  while (performance.now() - start < seconds * 1000) {
    batch();
    rows += 64;
  }
  const rate = rows / ((performance.now() - start) / 1000);
  db.close();
  return rate;
}

export async function ingestBenchmark({ rounds, seconds, binary }: IngestOptions): Promise<IngestResult> {
  const dataDir = tempDir();
  const token = Bun.spawnSync([...binary, "token", "create", "--init", "--name", "bench", "--data-dir", dataDir])
    .stdout.toString()
    .trim()
    .split("\n")
    .at(-1)!;
  const headers = { "Content-Type": "application/json", Authorization: `Bearer ${token}` };
  const bare = await startProcess([BUN, join(ROOT, "test/bench/bare.ts")], { BENCH_TOKEN: token });
  const log = postScript("log", EVENT, headers);
  const metric = postScript("metric", { title: "Hot counter", value: 1, increment: true }, headers);
  const rows: (string | number)[][] = [
    [
      "scenario",
      "sqlite sync",
      "connections",
      "req/s (median)",
      "p50 ms",
      "p99 ms",
      "bare req/s",
      "ratio to bare",
      "CPU µs per event",
      "target",
    ],
  ];
  const curve: IngestResult["curve"] = [];
  const row = (name: string, sync: string, connections: number | string, r: ReturnType<typeof versus>, target = "") =>
    rows.push([
      name,
      sync,
      connections,
      Math.round(r.rps),
      r.p50.toFixed(2),
      r.p99.toFixed(2),
      Math.round(r.bare),
      r.ratio.toFixed(2),
      Number.isNaN(r.cpuUs) ? "" : r.cpuUs.toFixed(1),
      target,
    ]);
  const storage = { full: bareInsert(binary, "full", seconds), normal: bareInsert(binary, "normal", seconds) };
  for (const sync of ["full", "normal"] as const) {
    rows.push([
      "Baseline: bare bun:sqlite insert of the same rows, 64 per transaction (rows/s)",
      sync,
      "",
      Math.round(storage[sync]),
      "",
      "",
      "",
      "",
      (1e6 / storage[sync]).toFixed(1),
      "",
    ]);
  }
  try {
    for (const sync of ["full", "normal"] as const) {
      const s = await server(binary, dataDir, sync);
      try {
        wrk(`${s.url}/v1/log`, { connections: 64, seconds: 2, script: log }); // warm up both
        wrk(`${bare.url}/`, { connections: 64, seconds: 2, script: log });
        for (const connections of sync === "full" ? [1, 16, 64, 256] : [64]) {
          const r = versus(`${bare.url}/`, `${s.url}/v1/log`, {
            connections,
            seconds,
            rounds,
            script: log,
            pid: s.pid,
          });
          row("POST /v1/log", sync, connections, r, connections === 64 ? (sync === "full" ? "≥ 0.45" : "≥ 0.50") : "");
          if (connections === 64) {
            // What one thread that does the bare server's HTTP work and then the bare insert could reach.
            const ceiling = 1 / (1 / r.bare + 1 / storage[sync]);
            rows.push([
              "Single-thread limit: bare HTTP + bare insert, one after the other",
              sync,
              64,
              Math.round(ceiling),
              "",
              "",
              Math.round(r.bare),
              (ceiling / r.bare).toFixed(2),
              "",
              "",
            ]);
          }
          if (sync === "full") curve.push({ connections, bare: r.bare, full: r.rps });
          if (sync === "full" && connections === 64) {
            // Latency at half the peak rate: each of 32 connections waits between requests so that
            // together they send half the peak. A short calibration run measures how long a request
            // itself takes at that load, and the wait is shortened by it. Measured once the server
            // has caught up with the saturation runs before (its search index, mostly).
            await settle(s.pid);
            const half = r.rps / 2;
            const cycle = (32 * 1000) / half;
            const probe = wrk(`${s.url}/v1/log`, {
              connections: 32,
              seconds: 2,
              script: postScript("log-probe", EVENT, headers, cycle),
            });
            const busy = Math.max(0, (32 * 1000) / probe.rps - Math.round(cycle));
            const paced = postScript("log-paced", EVENT, headers, cycle - busy);
            const lat = wrk(`${s.url}/v1/log`, { connections: 32, seconds: seconds * 2, script: paced });
            rows.push([
              "POST /v1/log at half the peak rate",
              sync,
              32,
              Math.round(lat.rps),
              lat.p50.toFixed(2),
              lat.p99.toFixed(2),
              "",
              "",
              "",
              "p99 < 10 ms",
            ]);
          }
        }
        if (sync === "full") {
          const m = versus(`${bare.url}/`, `${s.url}/send-metric`, {
            connections: 64,
            seconds,
            rounds,
            script: metric,
            pid: s.pid,
          });
          row("POST /send-metric, increment one hot metric", sync, 64, m);
        }
      } finally {
        await s.stop();
      }
    }
    // The writer thread against the inline writer, with wrk held to one CPU so the server's threads
    // have the other to themselves: what a machine with a core to spare per thread would see.
    for (const writer of ["inline", "thread"] as const) {
      const s = await server(binary, dataDir, "full", writer);
      try {
        wrk(`${s.url}/v1/log`, { connections: 64, seconds: 2, script: log, pin: 1 });
        const r = versus(`${bare.url}/`, `${s.url}/v1/log`, {
          connections: 64,
          seconds,
          rounds,
          script: log,
          pid: s.pid,
          pin: 1,
        });
        row(
          `POST /v1/log, wrk pinned to one CPU, ${writer === "thread" ? "writer thread (SIGNALBOARD_WRITER=thread)" : "inline writer (the default)"}`,
          "full",
          64,
          r,
        );
      } finally {
        await s.stop();
      }
    }
  } finally {
    await bare.stop();
  }
  return { rows, curve };
}
