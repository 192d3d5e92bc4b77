// Asking the data (BENCH_ONLY=analytics): one million events over 50,000 users (seed.ts, and
// postgres.ts's seedPostgres for PostgreSQL), then each question of the issue's targets timed over
// sequential requests; then four of them asked in a loop at once while /healthz is probed every
// 20 ms on new connections and an event is posted every 100 ms (the stall test's probes), for both
// stores, against the compiled binary.
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { BUN, median, pgCpu, ROOT, startProcess, tempDir, treeCpu, treeRss } from "./lib.ts";
import { SEED_VERSION, seed } from "./seed.ts";
import { statusLoops, statusPages, statusSummary } from "./status-page.ts";

const DAY = 86_400;

/** A question's times, and the CPU time an answer took (the server's and what answers its reads: its reader processes, or PostgreSQL's). */
type Timing = { name: string; p50: number; p95: number; cpuMs: number; target: string; answer: string };

/** The probes beside the questions: /healthz's longest, 99th percentile and answers over 50 ms (and the longest of those answered while no event was being written, whose commit the loop waits for), and ingest's longest. */
type Stall = {
  healthMs: number;
  healthP99: number;
  probes: number;
  over50: number;
  healthNoWriteMs: number;
  ingestMs: number;
  asked: number;
  timedOut: number;
  seconds: number;
  loop: LoopHold;
};

/** The event loop under the same questions, from inside the server (loop-hold.ts): the most CPU its main thread used between two 10 ms ticks; the longest gap between ticks, and that CPU in it. */
type LoopHold = { heldMs: number; gapMs: number; gapHeldMs: number };

export type AnalyticsResult = {
  store: string;
  events: number;
  /** How long the data set took to write, and its summaries to build (as after an upgrade). */
  seeded: { seconds: number; summarySeconds: number };
  /** What the data set takes on disk: the database's files and the search index. */
  bytes: number;
  /** Resident memory while the questions were answered: the server's, and a reader process's at most. */
  rss: { serverMb: number; childMb: number };
  timings: Timing[];
  stall: Stall;
  /** A status page of a check and a rule (status-page.ts): its notices read per item, its times, and the loop while pages are worked out. */
  status: { notices: number; timing: Timing; loop: LoopHold };
};

type Store = {
  name: string;
  args: string[];
  seed: () => Promise<{ seconds: number; summarySeconds: number }>;
  /** The data set's size on disk. */
  bytes: () => Promise<number>;
};

/** The questions over the last 30 days (the data spans 60), with their targets (at 10 million events, on both stores). */
function questions(now: number): [string, string, string][] {
  const range = `project=bench&from=${now - 30 * DAY}&to=${now}`;
  return [
    ["series by day, 30 days", `/v1/analytics/series?${range}`, "< 100 ms"],
    ["split by a tag (plan), by day", `/v1/analytics/series?${range}&group_by=tag:plan`, "< 150 ms"],
    ["distinct users by day", `/v1/analytics/series?${range}&measure=users`, "< 300 ms"],
    [
      "distinct users split by a tag (plan), by week",
      `/v1/analytics/series?${range}&measure=users&group_by=tag:plan&interval=week`,
      "< 500 ms",
    ],
    [
      "series of one event name, by day in Europe/Paris",
      `/v1/analytics/series?${range}&event=Checkout%20started&tz=Europe/Paris`,
      "< 100 ms",
    ],
    [
      "3-step funnel, 30 days (window 14 days)",
      `/v1/analytics/funnel?${range}&step=Page%20viewed&step=Checkout%20started&step=Payment%20received&window=${14 * DAY}`,
      "< 1.5 s",
    ],
    [
      "retention, page views to checkouts, by day, 7 periods",
      `/v1/analytics/retention?${range}&start_event=Page%20viewed&return_event=Checkout%20started&interval=day&periods=7`,
      "< 1.5 s",
    ],
    ["split by event name, by day", `/v1/analytics/series?${range}&group_by=event`, ""],
    ["split by channel, by hour", `/v1/analytics/series?${range}&group_by=channel&interval=hour`, ""],
    // What the dashboard may ask besides: more buckets than a bigint has bits, a word every event holds
    // (each event matched), a filter under a split (the summaries cannot answer these: the events are read).
    ["distinct users by hour", `/v1/analytics/series?${range}&measure=users&interval=hour`, ""],
    ["events with a word all hold (q=took), by hour", `/v1/analytics/series?${range}&q=took&interval=hour`, ""],
    ["tag plan:pro, split by channel, by day", `/v1/analytics/series?${range}&tag=plan:pro&group_by=channel`, ""],
    [
      "retention by week in Europe/Paris, 4 weeks after",
      `/v1/analytics/retention?${range}&start_event=Page%20viewed&return_event=Payment%20received&interval=week&periods=4&tz=Europe/Paris`,
      "",
    ],
    [
      "retention by day, tag plan:pro (read from the events)",
      `/v1/analytics/retention?${range}&start_event=Page%20viewed&return_event=Payment%20received&periods=7&tag=plan:pro`,
      "",
    ],
  ];
}

/** A question asked `samples` times after 2 warm-ups (at `url`, or the i-th one's); one past the read budget (503) ends it, its answer null. */
async function timed(
  url: string | ((i: number) => string),
  headers: Record<string, string>,
  samples: number,
  cpu: () => () => number,
): Promise<{ p50: number; p95: number; cpuMs: number; body: string | null }> {
  const times: number[] = [];
  let used = () => 0;
  for (let i = -2; i < samples; i++) {
    if (i === 0) used = cpu();
    const started = performance.now();
    const response = await fetch(typeof url === "string" ? url : url(i + 2), { headers });
    const body = await response.text();
    const ms = performance.now() - started;
    if (response.status === 503) return { p50: ms, p95: ms, cpuMs: NaN, body: null };
    if (!response.ok) throw new Error(`benchmark request failed: ${response.status} ${body.slice(0, 200)}`);
    if (i < 0) continue;
    times.push(ms);
    if (i === samples - 1) {
      times.sort((a, b) => a - b);
      return {
        p50: median(times),
        p95: times[Math.min(times.length - 1, Math.floor(times.length * 0.95))]!,
        cpuMs: (used() * 1000) / samples,
        body,
      };
    }
  }
  throw new Error("no samples asked");
}

export async function analyticsBenchmark(
  binary: string[],
  store: Store,
  options: { events: number; samples: number; stallSeconds: number },
): Promise<AnalyticsResult> {
  console.error(`  seeding ${options.events.toLocaleString("en-US")} events (${store.name})...`);
  const seeded = await store.seed();
  const bytes = await store.bytes();
  console.error(
    `  ${store.name}: seeded in ${seeded.seconds.toFixed(0)} s (summaries built in ${seeded.summarySeconds.toFixed(0)} s); ${(bytes / options.events).toFixed(0)} bytes an event`,
  );
  const token = Bun.spawnSync([...binary, "token", "create", "--init", "--name", "bench", ...store.args])
    .stdout.toString()
    .trim()
    .split("\n")
    .at(-1)!;
  const server = await startProcess([...binary, "serve", "--port", "0", "--host", "127.0.0.1", ...store.args], {
    SIGNALBOARD_LOG_LEVEL: "info",
  });
  const headers = { Authorization: `Bearer ${token}` };
  try {
    const now = Math.floor(Date.now() / 1000);
    const asked = questions(now);
    const timings: Timing[] = [];
    // CPU time depends less on what else the machine runs than wall time: the server's, and its readers' or the database's.
    const database = store.args.indexOf("--database-url");
    const cpu = () => {
      const [own, reads] = [
        treeCpu(server.pid),
        database < 0 ? () => 0 : pgCpu(Number(new URL(store.args[database + 1]!).port)),
      ];
      return () => own() + reads();
    };
    const memory = treeRss(server.pid);
    for (const [name, path, target] of asked) {
      const t = await timed(server.url + path, headers, options.samples, cpu);
      timings.push({ name, p50: t.p50, p95: t.p95, cpuMs: t.cpuMs, target, answer: summary(t.body) });
      console.error(
        `  ${store.name}: ${name}: p50 ${t.p50.toFixed(0)} ms, p95 ${t.p95.toFixed(0)} ms, CPU ${t.cpuMs.toFixed(0)} ms (${summary(t.body)}; load average ${loadavg()[0]!.toFixed(1)})`,
      );
    }
    const page = await statusPages(server.url, headers, options.events);
    const status = await timed((i) => server.url + page.path(i), headers, options.samples, cpu);
    const statusTiming: Timing = {
      name: `a status page: a check and a rule, ${page.notices.toLocaleString("en-US")} notices each`,
      p50: status.p50,
      p95: status.p95,
      cpuMs: status.cpuMs,
      target: "",
      answer: status.body === null ? summary(null) : statusSummary(status.body),
    };
    timings.push(statusTiming);
    console.error(
      `  ${store.name}: ${statusTiming.name}: p50 ${status.p50.toFixed(0)} ms, p95 ${status.p95.toFixed(0)} ms, CPU ${status.cpuMs.toFixed(0)} ms (${statusTiming.answer})`,
    );
    // Series, a split, distinct users and the funnel: the questions a dashboard of cards keeps asking.
    const paths = [0, 1, 2, 5].map((i) => asked[i]![1]);
    const rss = memory();
    console.error(
      `  ${store.name}: memory while answering: server ${rss.serverMb.toFixed(0)} MB, a reader process at most ${rss.childMb.toFixed(0)} MB`,
    );
    const beside = await stall(server.url, headers, paths, options.stallSeconds);
    console.error(
      `  ${store.name}: beside writes: /healthz longest ${beside.healthMs.toFixed(0)} ms (p99 ${beside.healthP99.toFixed(0)}, ${beside.over50} of ${beside.probes} over 50 ms, longest with no write in flight ${beside.healthNoWriteMs.toFixed(0)}), ingest longest ${beside.ingestMs.toFixed(0)} ms; load average ${loadavg()[0]!.toFixed(1)}`,
    );
    await server.stop();
    const loop = await loopHold(store, questionLoops(paths, headers), 10);
    console.error(
      `  ${store.name}: the event loop under the four questions: held at most ${loop.heldMs.toFixed(1)} ms between two 10 ms ticks; longest gap ${loop.gapMs.toFixed(0)} ms, with ${loop.gapHeldMs.toFixed(1)} ms of the main thread's CPU in it`,
    );
    const statusLoop = await loopHold(store, statusLoops(page, headers), 10);
    console.error(
      `  ${store.name}: the event loop under status pages: held at most ${statusLoop.heldMs.toFixed(1)} ms between two 10 ms ticks; longest gap ${statusLoop.gapMs.toFixed(0)} ms, with ${statusLoop.gapHeldMs.toFixed(1)} ms of the main thread's CPU in it`,
    );
    return {
      store: store.name,
      events: options.events,
      seeded,
      bytes,
      rss,
      timings,
      stall: { ...beside, loop },
      status: { notices: page.notices, timing: statusTiming, loop: statusLoop },
    };
  } finally {
    await server.stop();
  }
}

/** Each question asked again and again, a loop each. */
function questionLoops(paths: string[], headers: Record<string, string>): ((url: string) => Promise<void>)[] {
  return paths.map((path) => async (url) => void (await (await fetch(url + path, { headers })).text()));
}

/**
 * Loops of questions at once against the server run from source with loop-hold.ts preloaded (the
 * compiled binary takes no preload), each asked once first (reader processes start, modules load).
 */
async function loopHold(store: Store, loops: ((url: string) => Promise<void>)[], seconds: number): Promise<LoopHold> {
  const file = join(tempDir(), "loop-hold.jsonl");
  const server = await startProcess(
    [
      BUN,
      "--preload",
      join(ROOT, "test/bench/loop-hold.ts"),
      join(ROOT, "src/main.ts"),
      "serve",
      "--port",
      "0",
      "--host",
      "127.0.0.1",
      ...store.args,
    ],
    { SIGNALBOARD_LOG_LEVEL: "info", LOOP_HOLD_FILE: file },
  );
  try {
    for (const ask of loops) await ask(server.url);
    const from = Date.now();
    let running = true;
    const asking = loops.map(async (ask) => {
      while (running) await ask(server.url);
    });
    await Bun.sleep(seconds * 1000);
    running = false;
    await Promise.all(asking);
    const lines = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { t: number; held: number; gap: number; gapHeld: number });
    const during = lines.filter((l) => l.t > from + 1000 && l.t <= Date.now());
    const longest = during.reduce((a, b) => (b.gap > a.gap ? b : a), { gap: 0, gapHeld: 0 } as {
      gap: number;
      gapHeld: number;
    });
    return { heldMs: Math.max(0, ...during.map((l) => l.held)), gapMs: longest.gap, gapHeldMs: longest.gapHeld };
  } finally {
    await server.stop();
  }
}

/** What an answer held, in a few words: a line's total, a funnel's users per step, or the cohorts' users. */
function summary(body: string | null): string {
  if (body === null) return "503 query_timeout: out of the read budget";
  const json = JSON.parse(body) as {
    series?: { total: number }[];
    steps?: { users: number }[];
    cohorts?: { users: number; percent: (number | null)[] }[];
  };
  if (json.steps) return `users ${json.steps.map((s) => s.users).join(" → ")}`;
  if (json.cohorts)
    return `${json.cohorts.length} cohorts, first ${json.cohorts[0]?.users.toLocaleString("en-US")} users, back ${json.cohorts[0]?.percent.map((p) => (p === null ? "-" : `${p}%`)).join(" ")}`;
  return `${json.series!.length} line(s), total ${json.series!.reduce((sum, s) => sum + s.total, 0).toLocaleString("en-US")}`;
}

/**
 * Four questions asked in a loop at once; meanwhile /healthz every 20 ms on new connections and an
 * event every 100 ms. A slow /healthz while an event is being written may be the loop waiting for
 * that write's commit (SQLite commits on the loop); one while none is says a read held the loop.
 */
async function stall(
  url: string,
  headers: Record<string, string>,
  paths: string[],
  seconds: number,
): Promise<Omit<Stall, "loop">> {
  let running = true;
  const health: { start: number; ms: number }[] = [];
  const writes: { start: number; end: number }[] = [];
  const counted = { asked: 0, timedOut: 0 };
  const loops = paths.map(async (path) => {
    while (running) {
      const res = await fetch(url + path, { headers });
      await res.text();
      counted.asked++;
      if (res.status === 503) counted.timedOut++;
      else if (!res.ok) throw new Error(`a question during the stall test answered ${res.status}`);
    }
  });
  const probe = (async () => {
    while (running) {
      const start = performance.now();
      await (await fetch(`${url}/healthz`, { headers: { Connection: "close" } })).text();
      health.push({ start, ms: performance.now() - start });
      await Bun.sleep(20);
    }
  })();
  const ingest = (async () => {
    while (running) {
      const start = performance.now();
      const res = await fetch(`${url}/v1/log`, {
        method: "POST",
        headers: { ...headers, "Content-Type": "application/json" },
        body: JSON.stringify({ project: "bench", channel: "stall", event: "meanwhile", user_id: "user-1" }),
      });
      await res.text();
      if (!res.ok) throw new Error(`an event during the stall test answered ${res.status}`);
      writes.push({ start, end: performance.now() });
      await Bun.sleep(100);
    }
  })();
  await Bun.sleep(seconds * 1000);
  running = false;
  await Promise.all([...loops, probe, ingest]);
  const sorted = health.map((h) => h.ms).sort((a, b) => a - b);
  const writing = (h: { start: number; ms: number }) => writes.some((w) => w.start < h.start + h.ms && w.end > h.start);
  return {
    healthMs: sorted.at(-1) ?? 0,
    healthP99: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0,
    probes: sorted.length,
    over50: sorted.filter((ms) => ms > 50).length,
    healthNoWriteMs: Math.max(0, ...health.filter((h) => !writing(h)).map((h) => h.ms)),
    ingestMs: Math.max(0, ...writes.map((w) => w.end - w.start)),
    ...counted,
    seconds,
  };
}

export function analyticsRows(results: AnalyticsResult[]): {
  timings: (string | number)[][];
  stall: (string | number)[][];
} {
  const timings: (string | number)[][] = [
    [
      "question (last 30 days)",
      ...results.flatMap((r) => [`${r.store} p50 ms`, `${r.store} p95 ms`, `${r.store} CPU ms`]),
      "target",
      "answer",
    ],
  ];
  results[0]?.timings.forEach((t, i) => {
    const answers = [...new Set(results.map((r) => r.timings[i]!.answer))].join(" / ");
    timings.push([
      t.name,
      ...results.flatMap((r) => [
        r.timings[i]!.p50.toFixed(0),
        r.timings[i]!.p95.toFixed(0),
        Number.isNaN(r.timings[i]!.cpuMs) ? "" : r.timings[i]!.cpuMs.toFixed(0),
      ]),
      t.target,
      answers,
    ]);
  });
  const stall: (string | number)[][] = [
    [
      "store",
      "questions answered (503)",
      "longest /healthz (ms)",
      "/healthz p99 (ms)",
      "/healthz over 50 ms",
      "longest /healthz, no write in flight (ms)",
      "longest ingest (ms)",
      "event loop held at most (ms)",
      "target",
    ],
  ];
  for (const r of results) {
    const s = r.stall;
    stall.push([
      r.store,
      `${s.asked} (${s.timedOut}) in ${s.seconds} s`,
      s.healthMs.toFixed(0),
      s.healthP99.toFixed(0),
      `${s.over50} of ${s.probes}`,
      s.healthNoWriteMs.toFixed(0),
      s.ingestMs.toFixed(0),
      s.loop.heldMs.toFixed(1),
      "/healthz and ingest < 250; loop < 50",
    ]);
  }
  return { timings, stall };
}

/** SQLite in a new data directory, seeded through the store. */
export function sqliteStore(events: number): Store {
  const dataDir = tempDir();
  return {
    name: "SQLite",
    args: ["--data-dir", dataDir],
    seed: () => seedOrReuse(dataDir, events),
    bytes: async () =>
      readdirSync(dataDir)
        .filter((f) => f.endsWith(".db") || f.endsWith(".db-wal"))
        .reduce((sum, f) => sum + statSync(join(dataDir, f)).size, 0),
  };
}

/**
 * A data set of `events` in `dataDir`: with BENCH_SEEDS=DIR, a copy of DIR/sqlite-EVENTS-vSEED_VERSION when an
 * earlier run left one there (seeding ten million events takes about an hour here), else seeded
 * and then kept there; the times reported are those of its seeding.
 */
async function seedOrReuse(dataDir: string, events: number): Promise<{ seconds: number; summarySeconds: number }> {
  const kept = process.env.BENCH_SEEDS ? join(process.env.BENCH_SEEDS, `sqlite-${events}-v${SEED_VERSION}`) : null;
  const copy = (from: string, to: string) => {
    mkdirSync(to, { recursive: true });
    for (const f of ["signalboard.db", "search.db"]) copyFileSync(join(from, f), join(to, f));
  };
  if (kept && existsSync(join(kept, "seeded.json"))) {
    console.error(`  reusing the data set in ${kept}`);
    copy(kept, dataDir);
    return JSON.parse(readFileSync(join(kept, "seeded.json"), "utf8"));
  }
  const seeded = await seed(dataDir, events);
  if (kept) {
    copy(dataDir, kept);
    writeFileSync(join(kept, "seeded.json"), JSON.stringify(seeded));
  }
  return seeded;
}

const ratio = (a: number, b: number) => (a > 0 ? (b / a).toFixed(1) : "-");

export function growthNote(sizes: number[]): string {
  const [small, large] = sizes.map((n) => n.toLocaleString("en-US"));
  return `Each question's p50 at ${small} and at ${large} events (the same data shape, ten times as dense), and how many times longer it took: its cost should follow the question (its range, buckets and filters), not the history's size. Target at most 2×, for the questions with a target.`;
}

export function growthRows(results: AnalyticsResult[], sizes: number[]): (string | number)[][] {
  const stores = [...new Set(results.map((r) => r.store))];
  const at = (store: string, n: number) => results.find((r) => r.store === store && r.events === n);
  const rows: (string | number)[][] = [
    [
      "question",
      ...stores.flatMap((s) => [
        `${s} ${sizes[0]!.toLocaleString("en-US")} (ms)`,
        `${s} ${sizes[1]!.toLocaleString("en-US")} (ms)`,
        `${s} ×`,
      ]),
      "target",
    ],
  ];
  const names = at(stores[0]!, sizes[1]!)?.timings ?? [];
  names.forEach((t, i) => {
    rows.push([
      t.name,
      ...stores.flatMap((s) => {
        const [a, b] = [at(s, sizes[0]!)?.timings[i]?.p50 ?? 0, at(s, sizes[1]!)?.timings[i]?.p50 ?? 0];
        return [a.toFixed(0), b.toFixed(0), ratio(a, b)];
      }),
      t.target ? "≤ 2×" : "",
    ]);
  });
  return rows;
}

export function storageRows(results: AnalyticsResult[]): (string | number)[][] {
  const rows: (string | number)[][] = [
    [
      "store",
      "events",
      "on disk (MB)",
      "bytes an event",
      "seeded (s)",
      "of which summaries built (s)",
      "server RSS (MB)",
      "reader RSS (MB)",
      "targets",
    ],
  ];
  for (const r of results)
    rows.push([
      r.store,
      r.events.toLocaleString("en-US"),
      (r.bytes / 1e6).toFixed(0),
      (r.bytes / r.events).toFixed(0),
      r.seeded.seconds.toFixed(0),
      r.seeded.summarySeconds.toFixed(0),
      r.rss.serverMb.toFixed(0),
      r.rss.childMb ? r.rss.childMb.toFixed(0) : "-",
      "≤ 300 bytes an event at 10M; RSS < 512 MB",
    ]);
  return rows;
}

export function modelNote(): string {
  return "From the two sizes measured: each question's time grown once more by the ratio it showed from one size to the next (its cost per tenfold history), the disk by the bytes an event at the larger size, and the summaries' build (after an upgrade) by the events. A model, not a measurement; the run at the largest size this machine allowed is in docs/operations.md#performance.";
}

export function modelRows(results: AnalyticsResult[], sizes: number[]): (string | number)[][] {
  const rows: (string | number)[][] = [["store", "what", "at 100,000,000 events (model)"]];
  const target = 100_000_000;
  for (const store of new Set(results.map((r) => r.store))) {
    const [small, large] = sizes.map((n) => results.find((r) => r.store === store && r.events === n));
    if (!small || !large) continue;
    const steps = Math.log10(target / large.events);
    large.timings.forEach((t, i) => {
      if (!t.target) return;
      const growth = Math.max(1, t.p50 / Math.max(1, small.timings[i]!.p50));
      rows.push([store, `${t.name} (p50)`, `${(t.p50 * growth ** steps).toFixed(0)} ms`]);
    });
    rows.push([store, "on disk", `${(((large.bytes / large.events) * target) / 1e9).toFixed(0)} GB`]);
    rows.push([
      store,
      "summaries built after an upgrade",
      `${(((large.seeded.summarySeconds / large.events) * target) / 60).toFixed(0)} min`,
    ]);
  }
  return rows;
}

/** The status page's read at each size: the time a page took and the event loop while pages were worked out. */
export function statusRows(results: AnalyticsResult[]): (string | number)[][] {
  const rows: (string | number)[][] = [
    [
      "store",
      "events",
      "notices read per item",
      "p50 (ms)",
      "p95 (ms)",
      "CPU (ms)",
      "event loop held at most (ms)",
      "longest gap (ms)",
      "answer",
      "target",
    ],
  ];
  for (const r of results) {
    const { notices, timing, loop } = r.status;
    rows.push([
      r.store,
      r.events.toLocaleString("en-US"),
      notices.toLocaleString("en-US"),
      timing.p50.toFixed(0),
      timing.p95.toFixed(0),
      Number.isNaN(timing.cpuMs) ? "" : timing.cpuMs.toFixed(0),
      loop.heldMs.toFixed(1),
      loop.gapMs.toFixed(0),
      timing.answer,
      "loop < 50",
    ]);
  }
  return rows;
}
