// npm run bench: Signalboard against a bare Bun.serve baseline, measured in the same run, on
// loopback, with wrk. Rounds alternate baseline and Signalboard so machine noise hits both alike;
// the table shows medians and ratios.
import { join } from "node:path";
import { BUN, ensureWrk, median, postScript, ROOT, startProcess, table, tempDir, wrk } from "./lib.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = 64;

ensureWrk();
const event = { project: "default", channel: "deploys", event: "Deployed v1.4.2", description: "All checks green on build 4211", icon: "🚀", tags: { env: "prod", build: 4211 } };

const dataDir = tempDir();
const created = Bun.spawnSync([BUN, join(ROOT, "src/main.ts"), "token", "create", "--name", "bench", "--data-dir", dataDir]);
const token = created.stdout.toString().trim().split("\n").at(-1)!;

const bare = await startProcess([BUN, join(ROOT, "test/bench/bare.ts")], { BENCH_TOKEN: token });
const rows: (string | number)[][] = [["scenario", "sqlite sync", "req/s (median)", "p50 ms", "p99 ms", "ratio to bare"]];

for (const sync of ["full", "normal"] as const) {
  const server = await startProcess([BUN, join(ROOT, "src/main.ts"), "serve", "--port", "0", "--host", "127.0.0.1", "--data-dir", dataDir, "--sqlite-sync", sync], {
    SIGNALBOARD_RATE_LIMIT_FULL: "0",
    SIGNALBOARD_LOG_LEVEL: "info",
  });
  const script = postScript("log", event, { "Content-Type": "application/json", Authorization: `Bearer ${token}` });
  wrk(`${server.url}/v1/log`, { connections: CONNECTIONS, seconds: 2, script }); // warm up
  wrk(`${bare.url}/`, { connections: CONNECTIONS, seconds: 2, script });
  const base: number[] = [];
  const ours: { rps: number; p50: number; p99: number }[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    base.push(wrk(`${bare.url}/`, { connections: CONNECTIONS, seconds: SECONDS, script }).rps);
    const r = wrk(`${server.url}/v1/log`, { connections: CONNECTIONS, seconds: SECONDS, script });
    if (r.errors) throw new Error(`${r.errors} requests failed during the benchmark`);
    ours.push(r);
  }
  const rps = median(ours.map((r) => r.rps));
  rows.push([`bare Bun.serve JSON echo (same rounds)`, "-", Math.round(median(base)), "", "", "1.00"]);
  rows.push([`POST /v1/log, ${CONNECTIONS} connections`, sync, Math.round(rps), median(ours.map((r) => r.p50)).toFixed(2), median(ours.map((r) => r.p99)).toFixed(2), (rps / median(base)).toFixed(2)]);
  await server.stop();
}
await bare.stop();

console.log(`\nSignalboard benchmark: ${ROUNDS} alternating rounds of ${SECONDS} s, wrk on loopback, ${navigator.hardwareConcurrency} cores\n`);
console.log(table(rows));
