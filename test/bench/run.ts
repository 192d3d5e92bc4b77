// npm run bench: every benchmark, measured in one run on loopback, printed as tables.
//   BENCH_ONLY=ingest,feed   run some sections only
//   BENCH_ROUNDS, BENCH_SECONDS, BENCH_EVENTS   tune the runs (defaults: 3, 5, 1000000)
import { feedBenchmark } from "./feed.ts";
import { ingestBenchmark } from "./ingest.ts";
import { ensureWrk, table } from "./lib.ts";

const only = new Set((process.env.BENCH_ONLY ?? "ingest,feed").split(","));
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const events = Number(process.env.BENCH_EVENTS ?? 1_000_000);

console.log(`Signalboard benchmark on ${navigator.hardwareConcurrency} cores, Bun ${Bun.version}, ${new Date().toISOString()}`);

if (only.has("ingest")) {
  ensureWrk();
  console.log(`\nIngest: ${rounds} alternating rounds of ${seconds} s with wrk\n`);
  console.log(table(await ingestBenchmark({ rounds, seconds, connections: 64 })));
}

if (only.has("feed")) {
  const { rows, seedSeconds } = await feedBenchmark(events);
  console.log(`\nReading at scale (seeded in ${seedSeconds.toFixed(0)} s; 30 sequential requests each)\n`);
  console.log(table(rows));
}
