// Alert rules beside an import and beside the analytics loop (BENCH_ONLY=alerts-loop): 200,000
// events (seed.ts), 1,000 count rules over 366-day windows checked every second, and the server run
// from source with loop-hold.ts preloaded. Three runs: idle (the rules checked, nothing else), an
// import of 60,000 events by `signalboard import` (another process writing the server's database),
// and the analytics benchmark's four questions in a loop. Meanwhile /healthz every 20 ms on new
// connections. Printed: the event loop's longest hold (the most CPU its main thread used between
// two 10 ms ticks), /healthz's longest, and the rounds of checks run. SQLite only: the import
// writes the database file from another process.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { BUN, ROOT, startProcess, tempDir } from "./lib.ts";
import { seed } from "./seed.ts";

const DAY = 86_400;

export type AlertsLoopRow = {
  run: string;
  rules: number;
  seconds: number;
  heldMs: number;
  stalledMs: number;
  healthMs: number;
  probes: number;
  rounds: number;
};

type LoopLine = { t: number; held: number; gap: number; gapHeld: number; stalled: number };

/** `n` count rules over 366 days, spread over the seeded channels and names, that never fire. */
function countRules(n: number): Record<string, unknown>[] {
  const channels = ["big", "payments", "signups", "deploys"];
  const names = ["Page viewed", "Checkout started", "Payment received"];
  return Array.from({ length: n }, (_, i) => ({
    project: "bench",
    name: `yearly ${i}`,
    kind: "count",
    filter: { channel: channels[i % 4], ...(i % 3 ? { event: names[i % 3] } : {}) },
    window: 366 * DAY,
    above: 1e9,
  }));
}

/** NDJSON of `n` historical events for `signalboard import`, spread over the last 300 days. */
function importFile(n: number): string {
  const now = Math.floor(Date.now() / 1000);
  const lines: string[] = [];
  for (let i = 0; i < n; i++)
    lines.push(
      JSON.stringify({
        project: "bench",
        channel: i % 2 ? "imported" : "big",
        event: i % 5 ? "Page viewed" : "Imported",
        description: `imported ${i}`,
        user_id: `user-${i % 5000}`,
        tags: { plan: i % 3 ? "pro" : "free" },
        timestamp: now - 300 * DAY + Math.floor((i / n) * 300 * DAY),
      }),
    );
  const file = join(tempDir(), "import.ndjson");
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

export async function alertsLoopBenchmark(options: {
  events: number;
  rules: number;
  imported: number;
  seconds: number;
}): Promise<AlertsLoopRow[]> {
  const dataDir = tempDir();
  console.error(`  seeding ${options.events.toLocaleString("en-US")} events...`);
  await seed(dataDir, options.events);
  const args = ["--data-dir", dataDir];
  const main = join(ROOT, "src/main.ts");
  const token = Bun.spawnSync([BUN, main, "token", "create", "--init", "--name", "bench", ...args])
    .stdout.toString()
    .trim()
    .split("\n")
    .at(-1)!;
  const file = importFile(options.imported);
  const holds = join(tempDir(), "loop-hold.jsonl");
  const server = await startProcess(
    [
      BUN,
      "--preload",
      join(ROOT, "test/bench/loop-hold.ts"),
      main,
      "serve",
      "--port",
      "0",
      "--host",
      "127.0.0.1",
      "--alert-interval",
      "1",
      "--metrics",
      "true",
      ...args,
    ],
    { SIGNALBOARD_LOG_LEVEL: "info", LOOP_HOLD_FILE: holds },
  );
  const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
  const rounds = async () => {
    const text = await (await fetch(`${server.url}/metrics`, { headers })).text();
    return Number(/^signalboard_alert_rounds_total (\S+)$/m.exec(text)?.[1] ?? 0);
  };
  /** `work` beside /healthz every 20 ms; the loop's longest hold over the seconds it ran. */
  const measure = async (run: string, work: () => Promise<void>): Promise<AlertsLoopRow> => {
    const [from, roundsBefore] = [Date.now(), await rounds()];
    let running = true;
    const health: number[] = [];
    const probe = (async () => {
      while (running) {
        const start = performance.now();
        await (await fetch(`${server.url}/healthz`, { headers: { Connection: "close" } })).text();
        health.push(performance.now() - start);
        await Bun.sleep(20);
      }
    })();
    await work();
    running = false;
    await probe;
    await Bun.sleep(1100); // the loop probe writes a line a second
    const to = Date.now();
    const lines = readFileSync(holds, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as LoopLine)
      .filter((l) => l.t > from + 1000 && l.t <= to);
    const row = {
      run,
      rules: options.rules,
      seconds: (to - from) / 1000,
      heldMs: Math.max(0, ...lines.map((l) => l.held)),
      stalledMs: Math.max(0, ...lines.map((l) => l.stalled)),
      healthMs: Math.max(0, ...health),
      probes: health.length,
      rounds: (await rounds()) - roundsBefore,
    };
    console.error(
      `  ${run}: event loop held at most ${row.heldMs.toFixed(1)} ms (CPU), stalled at most ${row.stalledMs.toFixed(1)} ms (running or blocked); /healthz longest ${row.healthMs.toFixed(0)} ms of ${row.probes}; ${row.rounds} rounds of checks`,
    );
    return row;
  };
  try {
    console.error(`  ${options.rules} count rules...`);
    const rules = countRules(options.rules);
    for (let i = 0; i < rules.length; i += 50)
      await Promise.all(
        rules.slice(i, i + 50).map(async (rule) => {
          const res = await fetch(`${server.url}/v1/alerts`, { method: "POST", headers, body: JSON.stringify(rule) });
          if (!res.ok) throw new Error(`POST /v1/alerts answered ${res.status}: ${await res.text()}`);
        }),
      );
    const rows: AlertsLoopRow[] = [];
    rows.push(await measure("idle, rules checked", () => Bun.sleep(options.seconds * 1000)));
    rows.push(
      await measure(`import of ${options.imported.toLocaleString("en-US")} events`, async () => {
        const imported = Bun.spawn([BUN, main, "import", file, ...args], { stdout: "pipe", stderr: "pipe" });
        if ((await imported.exited) !== 0)
          throw new Error(`signalboard import failed: ${await new Response(imported.stderr).text()}`);
      }),
    );
    const now = Math.floor(Date.now() / 1000);
    const range = `project=bench&from=${now - 30 * DAY}&to=${now}`;
    const paths = [
      `/v1/analytics/series?${range}`,
      `/v1/analytics/series?${range}&group_by=tag:plan`,
      `/v1/analytics/series?${range}&measure=users`,
      `/v1/analytics/funnel?${range}&step=Page%20viewed&step=Checkout%20started&step=Payment%20received&window=${14 * DAY}`,
    ];
    for (const path of paths) await (await fetch(server.url + path, { headers })).text();
    rows.push(
      await measure("the analytics loop (four questions)", async () => {
        let running = true;
        const loops = paths.map(async (path) => {
          while (running) await (await fetch(server.url + path, { headers })).text();
        });
        await Bun.sleep(options.seconds * 1000);
        running = false;
        await Promise.all(loops);
      }),
    );
    return rows;
  } finally {
    await server.stop();
    for (const dir of [dataDir, dirname(holds), dirname(file)]) rmSync(dir, { recursive: true, force: true });
  }
}

export function alertsLoopRows(rows: AlertsLoopRow[]): (string | number)[][] {
  return [
    [
      `beside ${(rows[0]?.rules ?? 0).toLocaleString("en-US")} count rules`,
      "seconds",
      "event loop held at most (ms CPU)",
      "loop stalled at most (ms, running or blocked)",
      "longest /healthz (ms)",
      "rounds of checks",
      "target",
    ],
    ...rows.map((r) => [
      r.run,
      r.seconds.toFixed(0),
      r.heldMs.toFixed(1),
      r.stalledMs.toFixed(1),
      r.healthMs.toFixed(0),
      r.rounds,
      "loop < 50",
    ]),
  ];
}
