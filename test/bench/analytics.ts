// Asking the data (BENCH_ONLY=analytics): one million events over 50,000 users (seed.ts, and
// postgres.ts's seedPostgres for PostgreSQL), then each question of the targets timed over
// sequential requests; then four of them asked in a loop at once while /healthz is probed every
// 20 ms on new connections and an event is posted every 100 ms (the stall test's probes), for both
// stores, against the compiled binary.
import { median, startProcess, tempDir } from "./lib.ts";
import { seed } from "./seed.ts";

const DAY = 86_400;

type Timing = { name: string; p50: number; p95: number; target: string; answer: string };

export type AnalyticsResult = { store: string; timings: Timing[]; stall: { healthMs: number; ingestMs: number; asked: number; timedOut: number; seconds: number } };

type Store = { name: string; args: string[]; seed: () => Promise<{ seconds: number }> };

/** The questions over the last 30 days (the data spans 60), with their targets. */
function questions(now: number): [string, string, string][] {
  const range = `project=bench&from=${now - 30 * DAY}&to=${now}`;
  return [
    ["series by day, 30 days", `/v1/analytics/series?${range}`, "< 150 ms"],
    ["split by a tag (plan), by day", `/v1/analytics/series?${range}&group_by=tag:plan`, "< 300 ms"],
    ["distinct users by day", `/v1/analytics/series?${range}&measure=users`, "< 500 ms"],
    ["3-step funnel, 30 days (window 14 days)", `/v1/analytics/funnel?${range}&step=Page%20viewed&step=Checkout%20started&step=Payment%20received&window=${14 * DAY}`, "< 1 s"],
    ["series of one event name, by day in Europe/Paris", `/v1/analytics/series?${range}&event=Checkout%20started&tz=Europe/Paris`, ""],
    ["split by event name, by day", `/v1/analytics/series?${range}&group_by=event`, ""],
    ["split by channel, by hour", `/v1/analytics/series?${range}&group_by=channel&interval=hour`, ""],
  ];
}

async function timed(url: string, headers: Record<string, string>, samples: number): Promise<{ p50: number; p95: number; body: string }> {
  let body = "";
  for (let i = 0; i < 2; i++) body = await (await fetch(url, { headers })).text();
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const started = performance.now();
    const response = await fetch(url, { headers });
    body = await response.text();
    if (!response.ok) throw new Error(`benchmark request failed: ${response.status} ${body.slice(0, 200)}`);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50: median(times), p95: times[Math.min(times.length - 1, Math.floor(times.length * 0.95))]!, body };
}

export async function analyticsBenchmark(binary: string[], store: Store, options: { events: number; samples: number; stallSeconds: number }): Promise<AnalyticsResult> {
  console.error(`  seeding ${options.events.toLocaleString("en-US")} events (${store.name})...`);
  await store.seed();
  const token = Bun.spawnSync([...binary, "token", "create", "--name", "bench", ...store.args]).stdout.toString().trim().split("\n").at(-1)!;
  const server = await startProcess([...binary, "serve", "--port", "0", "--host", "127.0.0.1", ...store.args], { SIGNALBOARD_LOG_LEVEL: "info" });
  const headers = { Authorization: `Bearer ${token}` };
  try {
    const now = Math.floor(Date.now() / 1000);
    const asked = questions(now);
    const timings: Timing[] = [];
    for (const [name, path, target] of asked) {
      const t = await timed(server.url + path, headers, options.samples);
      timings.push({ name, p50: t.p50, p95: t.p95, target, answer: summary(t.body) });
      console.error(`  ${store.name}: ${name}: p50 ${t.p50.toFixed(0)} ms, p95 ${t.p95.toFixed(0)} ms (${summary(t.body)})`);
    }
    return { store: store.name, timings, stall: await stall(server.url, headers, asked.slice(0, 4).map(([, path]) => path), options.stallSeconds) };
  } finally {
    await server.stop();
  }
}

/** What an answer held, in a few words: a line's total, or a funnel's users per step. */
function summary(body: string): string {
  const json = JSON.parse(body) as { series?: { total: number }[]; steps?: { users: number }[] };
  if (json.steps) return `users ${json.steps.map((s) => s.users).join(" → ")}`;
  return `${json.series!.length} line(s), total ${json.series!.reduce((sum, s) => sum + s.total, 0).toLocaleString("en-US")}`;
}

/** Four questions asked in a loop at once; meanwhile the longest /healthz and the longest acknowledged event. */
async function stall(url: string, headers: Record<string, string>, paths: string[], seconds: number) {
  let running = true;
  const longest = { health: 0, ingest: 0 };
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
      const started = performance.now();
      await (await fetch(`${url}/healthz`, { headers: { Connection: "close" } })).text();
      longest.health = Math.max(longest.health, performance.now() - started);
      await Bun.sleep(20);
    }
  })();
  const writes = (async () => {
    while (running) {
      const started = performance.now();
      const res = await fetch(`${url}/v1/log`, { method: "POST", headers: { ...headers, "Content-Type": "application/json" }, body: JSON.stringify({ project: "bench", channel: "stall", event: "meanwhile", user_id: "user-1" }) });
      await res.text();
      if (!res.ok) throw new Error(`an event during the stall test answered ${res.status}`);
      longest.ingest = Math.max(longest.ingest, performance.now() - started);
      await Bun.sleep(100);
    }
  })();
  await Bun.sleep(seconds * 1000);
  running = false;
  await Promise.all([...loops, probe, writes]);
  return { healthMs: longest.health, ingestMs: longest.ingest, ...counted, seconds };
}

export function analyticsRows(results: AnalyticsResult[]): { timings: (string | number)[][]; stall: (string | number)[][] } {
  const timings: (string | number)[][] = [["question (last 30 days)", ...results.flatMap((r) => [`${r.store} p50 ms`, `${r.store} p95 ms`]), "target", "answer"]];
  results[0]?.timings.forEach((t, i) => timings.push([t.name, ...results.flatMap((r) => [r.timings[i]!.p50.toFixed(0), r.timings[i]!.p95.toFixed(0)]), t.target, t.answer]));
  const stall: (string | number)[][] = [["store", "questions answered (503)", "longest /healthz (ms)", "longest ingest (ms)", "target"]];
  for (const r of results) stall.push([r.store, `${r.stall.asked} (${r.stall.timedOut}) in ${r.stall.seconds} s`, r.stall.healthMs.toFixed(0), r.stall.ingestMs.toFixed(0), "/healthz and ingest < 250"]);
  return { timings, stall };
}

/** SQLite in a new data directory, seeded through the store. */
export function sqliteStore(events: number): Store {
  const dataDir = tempDir();
  return { name: "SQLite", args: ["--data-dir", dataDir], seed: () => seed(dataDir, events) };
}
