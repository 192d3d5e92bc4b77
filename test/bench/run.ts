// npm run bench: every benchmark, measured in one run on loopback against the compiled binary,
// printed as tables and written to BENCHMARKS.md (with docs/throughput.svg).
//   BENCH_ONLY=ingest,fanout,startup,feed,stall,postgres,analytics,alerts,alerts-loop,checks,otlp   run some sections only ("postgres" is
//   pg-ingest and pg-read; BENCH_ONLY=pg-ingest alone is PostgreSQL's ingest beside SQLite, a few minutes)
//   BENCH_ROUNDS, BENCH_SECONDS, BENCH_EVENTS   tune (defaults 3, 5, 1000000)
//   BENCH_STORES=sqlite|postgres   the analytics section on one store only (default both)
//   BENCH_SEEDS=DIR   the analytics section keeps its SQLite data sets in DIR and reuses them (sqlite-N-vV, N events, V seed.ts's SEED_VERSION)
//   BENCH_PG_DROP_INDEXES=events_name_ts,...   pg-ingest without these indexes (what they cost ingest)
import { cpus, release } from "node:os";
import { join } from "node:path";
import { alertsBenchmark, alertsRows } from "./alerts.ts";
import { alertsLoopBenchmark, alertsLoopRows } from "./alerts-loop.ts";
import {
  type AnalyticsResult,
  analyticsBenchmark,
  analyticsRows,
  growthNote,
  growthRows,
  modelNote,
  modelRows,
  sqliteStore,
  statusRows,
  storageRows,
} from "./analytics.ts";
import { throughputChart } from "./chart.ts";
import { checksBenchmark, checksRows } from "./checks.ts";
import { fanoutBenchmark } from "./fanout.ts";
import { heavyOtlpBenchmark, otlpBenchmark } from "./otlp.ts";
import { feedBenchmark } from "./feed.ts";
import { ingestBenchmark } from "./ingest.ts";
import { postgresBenchmark, postgresBytes, seedPostgres } from "./postgres.ts";
import { createDatabase, postgresBin, startCluster } from "../pg-cluster.ts";
import { NOTICE_EVERY, NOTICE_THINGS } from "./seed.ts";
import { stallBenchmark, stallRows } from "./stall.ts";
import { BUN, ensureWrk, ROOT, table, tempDir } from "./lib.ts";
import { startupBenchmark } from "./startup.ts";

const ALL = [
  "ingest",
  "fanout",
  "startup",
  "feed",
  "stall",
  "pg-ingest",
  "pg-read",
  "analytics",
  "alerts",
  "alerts-loop",
  "checks",
  "otlp",
];
const only = new Set(
  (process.env.BENCH_ONLY ?? ALL.join(","))
    .split(",")
    .flatMap((s) => (s === "postgres" ? ["pg-ingest", "pg-read"] : [s])),
);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const events = Number(process.env.BENCH_EVENTS ?? 1_000_000);

const machine = `${cpus().length} cores (${cpus()[0]?.model.trim()}), ${Math.round(require("node:os").totalmem() / 2 ** 30)} GiB, Linux ${release()}, Bun ${Bun.version}`;
console.log(`Signalboard benchmark — ${machine} — ${new Date().toISOString()}`);
ensureWrk();

console.error("building the binary...");
const binaryPath = join(tempDir(), "signalboard");
const built = Bun.spawnSync([BUN, join(ROOT, "scripts/build.ts"), binaryPath], { cwd: ROOT });
if (built.exitCode !== 0) throw new Error(`build failed: ${built.stderr}`);
const binary = [binaryPath];

const sections: string[] = [];
const section = (title: string, note: string, rows: (string | number)[][]) => {
  const text = `## ${title}\n\n${note}\n\n${table(rows)}\n`;
  console.log(`\n${text}`);
  sections.push(text);
};

let chart = "";
if (only.has("ingest")) {
  const { rows, curve } = await ingestBenchmark({ rounds, seconds, binary });
  section(
    "Ingest",
    `${rounds} alternating rounds of ${seconds} s per line (baseline, then Signalboard), medians; wrk with 2 threads on the same machine. The baseline is a bare \`Bun.serve\` that checks the Bearer header, parses the JSON body and answers JSON. CPU µs per event: the server process's CPU time (all its threads: requests, the search indexer, the writer thread when there is one) over the requests answered. Latency at half the peak rate: 32 connections, each waiting a random time between requests (exponentially distributed, as independent clients do) so that together they send half the peak, once the server has gone idle after the runs before.`,
    rows,
  );
  chart = throughputChart(curve);
  await Bun.write(join(ROOT, "docs/throughput.svg"), chart);
}
if (only.has("fanout"))
  section(
    "Live delivery and memory",
    "Subscribers are real SSE connections (plain HTTP/1.1 over TCP) held by a separate process on the same machine; its own reading is part of the latency measured. Live views flush at most every 250 ms (an event after a quiet moment goes out at once), render once per view and write one chunk per stream; a dashboard gets the newest 5 events of a flush and a count of the rest.",
    await fanoutBenchmark(binary, { rounds, seconds }),
  );
if (only.has("startup"))
  section(
    "Start-up",
    "Wall time from spawning the compiled binary to its first 200 on /healthz; 7 runs.",
    await startupBenchmark(binaryPath),
  );
if (only.has("feed")) {
  const { rows, seedSeconds } = await feedBenchmark(events, 30, binary);
  section(
    "Reading at scale",
    `${events.toLocaleString("en-US")} events seeded through the store (in ${seedSeconds.toFixed(0)} s; 85% in one channel, 4 tag keys each); 30 sequential requests per line after 3 warm-ups, on loopback.`,
    rows,
  );
}

if (only.has("stall")) {
  console.error("the stall test...");
  const results = [await stallBenchmark(binary, { name: "SQLite", args: [] })];
  if (postgresBin()) {
    const cluster = await startCluster();
    try {
      results.push(
        await stallBenchmark(binary, {
          name: "PostgreSQL",
          args: ["--database-url", await createDatabase(cluster.url, "stall")],
        }),
      );
    } finally {
      await cluster.stop();
    }
  }
  section(
    "Expensive reads beside writes (the stall test)",
    "1,500 users with 100 properties of 600 characters each (through /v1/identify); 12 searches of the users page at once whose word is only in the last property; meanwhile /healthz (and /readyz on PostgreSQL) every 20 ms on new connections and an event POSTed every 100 ms. The searches run off the process that acknowledges writes (reader processes on SQLite, a read pool on PostgreSQL), each within SIGNALBOARD_QUERY_TIMEOUT (10 s): an answer is results or 503 query_timeout.",
    stallRows(results),
  );
}

if (only.has("pg-ingest") || only.has("pg-read")) {
  if (!postgresBin())
    console.error("PostgreSQL is not installed (apt-get install -y postgresql): its sections are left out");
  else {
    const pg = await postgresBenchmark(
      { rounds, seconds, binary, events },
      { ingest: only.has("pg-ingest"), read: only.has("pg-read") },
    );
    if (only.has("pg-ingest")) {
      section(
        "PostgreSQL: ingest with several instances",
        `POST /v1/log with 64 connections in all, split between the instances (one wrk per instance, at once), against one PostgreSQL 15 database per instance count in a throwaway cluster on this machine; ${rounds} alternating rounds of ${seconds} s (each round: the bare baseline, SQLite, then 1, 2 and 3 instances), medians, and the ratios taken within each round. A batch of events is written by one statement that also moves the event id counter, so the cluster-wide order is held only while that statement runs and commits. CPU µs per event: the instances' (all of them), PostgreSQL's (every process of the cluster) and wrk's CPU time over the requests answered. Here the instances, PostgreSQL and wrk share the same cores.`,
        pg.ingestRows,
      );
      section(
        "PostgreSQL: instances with cores of their own (a model)",
        "From the costs per event measured above with as many instances: every instance answers its share of the requests and follows every event (its live hub), so their CPU per event, all together, grows with their number; with a core each, n instances take n × 1e6 / that. The cluster-wide event order is held by one batch at a time (from its counter update to its commit, a disk flush excluded), so it allows 1e6 / (µs held per event), taken from the run where it was held the shortest: here its holder also waits for the cores that wrk and the instances share, the more so the more instances, and on cores of its own it would be held shorter still (test/bench/pg-order.ts measures it without HTTP). The model is the lower of the two; PostgreSQL needs its CPU per event times that rate in cores, wrk the same on its side.",
        pg.modelRows,
      );
    }
    if (only.has("pg-read"))
      section(
        "PostgreSQL: reading at scale",
        `${events.toLocaleString("en-US")} events (the same data set as above, written in a few statements in ${pg.seedSeconds.toFixed(0)} s), one instance; 30 sequential requests per line after 3 warm-ups.`,
        pg.readRows,
      );
  }
}

if (only.has("analytics")) {
  console.error("asking the data...");
  const options = { samples: Number(process.env.BENCH_SAMPLES ?? 15), stallSeconds: 15 };
  // Each store at BENCH_EVENTS and at a tenth of it: the growth of each answer's cost with the history.
  const sizes = [Math.round(events / 10), events];
  // BENCH_STORES=sqlite or postgres asks one store only (a change to one store's queries, measured in half the time).
  const stores = (process.env.BENCH_STORES ?? "sqlite,postgres").split(",");
  const results: AnalyticsResult[] = [];
  if (stores.includes("sqlite"))
    for (const n of sizes) results.push(await analyticsBenchmark(binary, sqliteStore(n), { ...options, events: n }));
  if (stores.includes("postgres") && postgresBin()) {
    const cluster = await startCluster();
    try {
      for (const n of sizes) {
        const url = await createDatabase(cluster.url, "analytics");
        results.push(
          await analyticsBenchmark(
            binary,
            {
              name: "PostgreSQL",
              args: ["--data-dir", tempDir(), "--database-url", url],
              seed: () => seedPostgres(binary, url, n),
              bytes: () => postgresBytes(url),
            },
            { ...options, events: n },
          ),
        );
      }
    } finally {
      await cluster.stop();
    }
  } else if (stores.includes("postgres"))
    console.error(
      "PostgreSQL is not installed (apt-get install -y postgresql): its half of the analytics section is left out",
    );
  const large = results.filter((r) => r.events === events);
  const rows = analyticsRows(large);
  section(
    "Asking the data (charts, funnels and retention)",
    `${events.toLocaleString("en-US")} events over 50,000 users and 60 days (an event about every ${Math.max(1, Math.round((60 * 50_000) / events))} days per user at this size, one in 7 a checkout and one in 7 a payment), the questions of GET /v1/analytics/series, /funnel and /retention over the last 30 days; ${options.samples} sequential requests each after 2 warm-ups, on loopback, against the compiled binary (SQLite with its 2 reader processes; PostgreSQL 15 in a throwaway cluster on this machine, VACUUM ANALYZE after the seed). Series, retention and funnels' users read the summaries (docs/operations.md#performance); the last three questions are ones they cannot answer, read from the events.`,
    rows.timings,
  );
  section("Growth with the history", growthNote(sizes), growthRows(results, sizes));
  section(
    "Storage and memory",
    "Bytes an event: the database's files and the search index (SQLite: signalboard.db, its WAL and search.db; PostgreSQL: pg_database_size) over the events. Seeded: the events written through the store (SQLite) or in a few statements (PostgreSQL), then their summaries built as after an upgrade, in steps of 50,000 events. Memory: the most resident memory of the server, and of a reader process (SQLite), sampled every 100 ms while the questions above were answered.",
    storageRows(results),
  );
  section("A model for 100 million events", modelNote(), modelRows(results, sizes));
  section(
    "Questions beside writes",
    `Four of the questions above (series by day, split by a tag, distinct users, the funnel) asked in a loop at once for ${options.stallSeconds} s at ${events.toLocaleString("en-US")} events (each answered before it is asked again), while /healthz is probed every 20 ms on new connections and an event is posted every 100 ms, as in the stall test. A /healthz answered while no event was being written could not have waited for a write's commit (SQLite commits on the event loop): its longest is what the reads left of the loop, and the machine's other processes. The event loop held: the same four questions for 10 s against the server run from source with test/bench/loop-hold.ts preloaded, the most CPU its main thread used between two ticks of a 10 ms timer (a tick late while the thread was idle is the process waiting for a core, not the loop held).`,
    rows.stall,
  );
  section(
    "A status page's days",
    `A status share of one check and one alert rule: each of its 90 days is worked out from a read of the project's alerts channel by the check's or the rule's tag (at most 2,000 notices, newest first). Among the events above, one in ${NOTICE_EVERY} is a notice of one of ${NOTICE_THINGS} checks and ${NOTICE_THINGS} rules by turns, so each of the two is a tenth of them. p50, p95 and CPU: GET /s/<key> of a share not asked before (an answer is kept until an event of the project arrives), ${options.samples} sequential requests after 2 warm-ups, against the compiled binary. The event loop held: two loops for 10 s, each posting an event and then asking the next of 64 such pages, against the server run from source with test/bench/loop-hold.ts preloaded, measured as for the questions above.`,
    statusRows(results),
  );
}

if (only.has("alerts")) {
  console.error("alert rules beside ingest...");
  const results = [await alertsBenchmark(binary, { name: "SQLite", args: [] }, { rounds, seconds })];
  if (postgresBin()) {
    const cluster = await startCluster();
    try {
      results.push(
        await alertsBenchmark(
          binary,
          { name: "PostgreSQL", args: ["--database-url", await createDatabase(cluster.url, "alerts")] },
          { rounds, seconds },
        ),
      );
    } finally {
      await cluster.stop();
    }
  }
  section(
    "Alert rules beside ingest",
    `1,000 rules (400 absence rules over 21 channels, one in ten watching the channel being written to; 400 count rules, a quarter of them on that channel and a tag; 200 metric rules), checked every second (SIGNALBOARD_ALERT_INTERVAL=1), while wrk posts the README's event at 64 connections; ${rounds} alternating rounds of ${seconds} s with the rules paused (none checked) and checked, medians. The slowest round is read from /metrics (signalboard_alert_round_seconds) during the runs with rules checked.`,
    alertsRows(results),
  );
}

if (only.has("alerts-loop")) {
  console.error("alert rules beside an import and the analytics loop...");
  const options = { events: 200_000, rules: 1000, imported: 60_000, seconds: 10 };
  section(
    "Alert rules beside an import and beside questions",
    `${options.rules.toLocaleString("en-US")} count rules over 366-day windows (never firing) on ${options.events.toLocaleString("en-US")} events seeded as for Reading at scale, checked every second, against the server run from source with test/bench/loop-hold.ts preloaded; meanwhile /healthz every 20 ms on new connections. Idle for ${options.seconds} s; then \`signalboard import\` of ${options.imported.toLocaleString("en-US")} events, another process writing the server's database; then the first four questions of Asking the data in a loop for ${options.seconds} s. The loop held: the most CPU the main thread used between two ticks of a 10 ms timer; stalled: the longest time it did not turn, running or blocked in a call (a lock waited for inside SQLite, a disk flush), the time it waited for a core left out. Rounds of checks: how many finished meanwhile (the rules' counts run on the reader processes, at a lower priority than the server).`,
    alertsLoopRows(await alertsLoopBenchmark(options)),
  );
}

if (only.has("checks")) {
  console.error("checks: pings, and a thousand due at once...");
  const results = [await checksBenchmark(binary, { name: "SQLite", args: async () => [] }, { rounds, seconds })];
  if (postgresBin()) {
    const cluster = await startCluster();
    try {
      const args = async () => ["--database-url", await createDatabase(cluster.url, "checks")];
      results.push(await checksBenchmark(binary, { name: "PostgreSQL", args }, { rounds, seconds }));
    } finally {
      await cluster.stop();
    }
  }
  section(
    "Checks: pings, and a thousand due at once",
    `Pings: GET /ping/<uuid> of one of 1,000 checks at random per request (SIGNALBOARD_RATE_LIMIT_PING=0), against POST /v1/log with the README's event; 64 connections, ${rounds} alternating rounds of ${seconds} s against the compiled binary, medians. A ping is an event in the check's channel and its check's state, in one transaction. Due at once: 1,000 checks on the cron schedule \`* * * * *\` with 5 s of grace, each pinged once, so all are due at the same moment (as jobs at the top of the hour are); the server run from source with test/bench/loop-hold.ts preloaded and rounds every second (SIGNALBOARD_ALERT_INTERVAL=1). All down: from the moment they are due to the last of their notices; all up: from pinging them all again (32 at a time) to the last notice. Meanwhile /healthz every 20 ms on new connections. Notices: the events of the alerts channel afterwards, three more rounds later.`,
    checksRows(results),
  );
}

if (only.has("otlp")) {
  console.error("OpenTelemetry logs beside /v1/log...");
  const otlp = await otlpBenchmark(binary, { rounds, seconds });
  section(
    "OpenTelemetry logs beside /v1/log",
    `POST /otlp/v1/logs with one protobuf export of 100 records (${otlp.bytes.toLocaleString("en-US")} bytes; each record the README's event as a body of two lines, severity, a trace id and three attributes, so an event with five tags), as an SDK's batch processor sends them, against POST /v1/log with the README's event; 16 connections each, ${rounds} alternating rounds of ${seconds} s against the compiled binary, medians. Each record goes through the same ingest operation as a /v1/log event, in the same group commits. CPU µs per event: the server's CPU time over the events stored.`,
    otlp.rows,
  );
  console.error("Heavy OpenTelemetry exports...");
  section(
    "Heavy OpenTelemetry exports",
    "Exports near the 4 MiB body limit (SIGNALBOARD_OTLP_BODY_LIMIT), each POSTed three times one after the other to /otlp/v1/logs in protobuf, against the server run from source with test/bench/loop-hold.ts preloaded (a full token, not rate-limited by default). Exports are unzipped, decoded and made into inputs on worker threads, which hand back what is to be written in parts of 500 records; the event loop only reads the body and starts the writes, 100 per turn. Held: the most CPU the main thread used between two ticks of a 10 ms timer while they were answered and written.",
    await heavyOtlpBenchmark(),
  );
}

if (ALL.every((s) => only.has(s))) {
  const doc = `# Benchmarks

Measured with \`npm run bench\` on ${machine}, ${new Date().toISOString().slice(0, 10)}. Everything runs
on this one machine: load generator, server and clients share its cores, so numbers are for
comparison within a run; the ratios to the bare baseline are what carries over to other machines.

![Throughput against concurrency](docs/throughput.svg)

${sections.join("\n")}
`;
  await Bun.write(join(ROOT, "BENCHMARKS.md"), doc);
  console.log("\nwrote BENCHMARKS.md and docs/throughput.svg");
}
