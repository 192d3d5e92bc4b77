// signalboard copy at size: N events (with two tags each) written straight into an SQLite data
// directory, copied to PostgreSQL and back, each copy a process of its own whose resident memory
// is sampled as it runs. Prints rows a second and the peak RSS of each direction: memory holds a
// page of rows at a time, so the peak should not grow with N.
//   bun test/bench/copy.ts [events=200000]   (SIGNALBOARD_TEST_POSTGRES=URL: that cluster; else a throwaway one)
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { openDatabase } from "../../src/store/sqlite/db.ts";
import { PROGRAM, start } from "../e2e/process.ts";
import { tempDir } from "../helpers.ts";
import { createDatabase, dropDatabase, startCluster } from "../pg-cluster.ts";

const EVENTS = Number(process.argv[2] ?? 200_000);

/** An instance's history, written as the writer would leave it, a hundred thousand events a transaction. */
function fill(dataDir: string): void {
  const { sqlite } = openDatabase(join(dataDir, "signalboard.db"), "normal");
  const now = Date.now();
  sqlite.exec(`INSERT INTO projects (name, created_at) VALUES ('shop', ${now})`);
  for (let c = 0; c < 5; c++)
    sqlite.exec(`INSERT INTO channels (project_id, name, created_at) VALUES (1, 'c${c}', ${now})`);
  const event = sqlite.prepare(
    "INSERT INTO events (project_id, channel_id, event, description, user_id, tags, ts, received_at) VALUES (1, ?, ?, ?, ?, ?, ?, ?)",
  );
  const tag = sqlite.prepare("INSERT INTO event_tags (project_id, key, value, ts, event_id) VALUES (1, ?, ?, ?, ?)");
  for (let at = 0; at < EVENTS; at += 100_000) {
    sqlite.transaction(() => {
      for (let i = at; i < Math.min(EVENTS, at + 100_000); i++) {
        const ts = now - (EVENTS - i) * 1000;
        const plan = i % 3 ? "free" : "pro";
        const { lastInsertRowid } = event.run(
          1 + (i % 5),
          `Order ${i % 50}`,
          `A customer ordered ${i % 7} items, paid with card ending ${1000 + (i % 9000)}`,
          `u${i % 5000}`,
          JSON.stringify({ plan, n: i }),
          ts,
          ts,
        );
        tag.run("plan", plan, ts, lastInsertRowid);
        tag.run("n", String(i), ts, lastInsertRowid);
      }
    })();
  }
  sqlite.close();
}

/** Runs `copy` with `args`; its time, and its resident memory at its peak (sampled every 20 ms). */
async function measure(args: string[]): Promise<{ seconds: number; peakMb: number; rows: number }> {
  const started = performance.now();
  const proc = start(PROGRAM, ["copy", ...args]);
  let peak = 0;
  const sampler = setInterval(() => {
    try {
      const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${proc.pid}/status`, "utf8"))?.[1] ?? 0);
      peak = Math.max(peak, kb);
    } catch {
      // ended between two samples
    }
  }, 20);
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  clearInterval(sampler);
  if (code !== 0) throw new Error(`copy ${args.join(" ")} exited ${code}:\n${stderr}`);
  const rows = Number(/Copied ([\d,]+) rows/.exec(stdout)![1]!.replace(/,/g, ""));
  return { seconds: (performance.now() - started) / 1000, peakMb: peak / 1024, rows };
}

const cluster = process.env.SIGNALBOARD_TEST_POSTGRES ? null : await startCluster();
const clusterUrl = process.env.SIGNALBOARD_TEST_POSTGRES ?? cluster!.url;
const source = tempDir();
const back = tempDir();
const pg = await createDatabase(clusterUrl);
try {
  const filling = performance.now();
  fill(source);
  console.log(
    `${EVENTS.toLocaleString("en-US")} events written in ${((performance.now() - filling) / 1000).toFixed(1)} s`,
  );
  for (const [name, args] of [
    ["SQLite → PostgreSQL", ["--data-dir", source, "--to", pg]],
    ["PostgreSQL → SQLite", ["--database-url", pg, "--to", back]],
  ] as const) {
    const { seconds, peakMb, rows } = await measure([...args]);
    console.log(
      `${name}: ${rows.toLocaleString("en-US")} rows in ${seconds.toFixed(1)} s (${Math.round(rows / seconds).toLocaleString("en-US")} rows/s, the process included), peak RSS ${peakMb.toFixed(0)} MB`,
    );
  }
} finally {
  await dropDatabase(clusterUrl, pg);
  rmSync(source, { recursive: true, force: true });
  rmSync(back, { recursive: true, force: true });
  await cluster?.stop();
}
