// Ingest throughput: Signalboard's POST /v1/log against a bare Bun.serve that parses the same
// JSON, in alternating rounds so machine noise hits both alike.
import { join } from "node:path";
import { BUN, median, postScript, ROOT, startProcess, tempDir, wrk } from "./lib.ts";

export const EVENT = { project: "default", channel: "deploys", event: "Deployed v1.4.2", description: "All checks green on build 4211", icon: "🚀", tags: { env: "prod", build: 4211 } };

export async function ingestBenchmark(opts: { rounds: number; seconds: number; connections: number }): Promise<(string | number)[][]> {
  const dataDir = tempDir();
  const created = Bun.spawnSync([BUN, join(ROOT, "src/main.ts"), "token", "create", "--name", "bench", "--data-dir", dataDir]);
  const token = created.stdout.toString().trim().split("\n").at(-1)!;
  const bare = await startProcess([BUN, join(ROOT, "test/bench/bare.ts")], { BENCH_TOKEN: token });
  const rows: (string | number)[][] = [["scenario", "sqlite sync", "req/s (median)", "p50 ms", "p99 ms", "ratio to bare"]];
  const script = postScript("log", EVENT, { "Content-Type": "application/json", Authorization: `Bearer ${token}` });
  try {
    for (const sync of ["full", "normal"] as const) {
      const server = await startProcess([BUN, join(ROOT, "src/main.ts"), "serve", "--port", "0", "--host", "127.0.0.1", "--data-dir", dataDir, "--sqlite-sync", sync], {
        SIGNALBOARD_RATE_LIMIT_FULL: "0",
        SIGNALBOARD_LOG_LEVEL: "info",
      });
      wrk(`${server.url}/v1/log`, { connections: opts.connections, seconds: 2, script }); // warm up
      wrk(`${bare.url}/`, { connections: opts.connections, seconds: 2, script });
      const base: number[] = [];
      const ours: { rps: number; p50: number; p99: number }[] = [];
      for (let round = 0; round < opts.rounds; round++) {
        base.push(wrk(`${bare.url}/`, { connections: opts.connections, seconds: opts.seconds, script }).rps);
        const r = wrk(`${server.url}/v1/log`, { connections: opts.connections, seconds: opts.seconds, script });
        if (r.errors) throw new Error(`${r.errors} requests failed during the benchmark`);
        ours.push(r);
      }
      const rps = median(ours.map((r) => r.rps));
      rows.push([`bare Bun.serve JSON echo (same rounds)`, "-", Math.round(median(base)), "", "", "1.00"]);
      rows.push([`POST /v1/log, ${opts.connections} connections`, sync, Math.round(rps), median(ours.map((r) => r.p50)).toFixed(2), median(ours.map((r) => r.p99)).toFixed(2), (rps / median(base)).toFixed(2)]);
      await server.stop();
    }
  } finally {
    await bare.stop();
  }
  return rows;
}
