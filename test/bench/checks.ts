// Checks (BENCH_ONLY=checks), on each store. Pings: GET /ping/<uuid> over 1,000 checks (a random one
// per request, the per-URL rate limit off) against POST /v1/log, at 64 connections in alternating
// rounds against the compiled binary. Then 1,000 checks on the same cron schedule, pinged once, all
// due at the same moment: the server run from source with loop-hold.ts preloaded and rounds every
// second; how long until every one is down, the loop's longest hold meanwhile, the same when all are
// pinged back up at once, and the notices written (one per check and change, no more).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { tmpdir } from "node:os";
import { EVENT } from "./ingest.ts";
import { BUN, median, postScript, ROOT, startProcess, tempDir, wrk } from "./lib.ts";

/** `args`: the store's settings, a new database each time it is called. */
export type Store = { name: string; args: () => Promise<string[]> };
export type ChecksResult = {
  store: string;
  pingRps: number;
  logRps: number;
  pingP99: number;
  logP99: number;
  down: LoopRun;
  up: LoopRun;
  notices: { down: number; up: number };
};
type LoopRun = { seconds: number; heldMs: number; stalledMs: number; healthMs: number };
type LoopLine = { t: number; held: number; stalled: number };

const CHECKS = 1000;

/** Resolves once `ok` holds, looked at every 50 ms; fails after 5 minutes (a hang). */
async function until(ok: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (const limit = Date.now() + 300_000; !(await ok()); await Bun.sleep(50))
    if (Date.now() > limit) throw new Error(`no ${what} in 5 minutes`);
}

function tokenFor(cmd: string[], args: string[]): string {
  const made = Bun.spawnSync([...cmd, "token", "create", "--init", "--name", "bench", ...args]);
  if (made.exitCode !== 0) throw new Error(`token create failed: ${made.stderr}`);
  return made.stdout.toString().trim().split("\n").at(-1)!;
}

/** `n` checks on `schedule` in project default; their UUIDs. */
async function makeChecks(url: string, token: string, n: number, schedule: Record<string, unknown>) {
  const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
  const uuids: string[] = [];
  for (let i = 0; i < n; i += 50)
    await Promise.all(
      Array.from({ length: Math.min(50, n - i) }, async (_, j) => {
        const body = { project: "default", name: `job ${i + j}`, ...schedule };
        const res = await fetch(`${url}/v1/checks`, { method: "POST", headers, body: JSON.stringify(body) });
        if (!res.ok) throw new Error(`POST /v1/checks answered ${res.status}: ${await res.text()}`);
        uuids.push(((await res.json()) as { check: { uuid: string } }).check.uuid);
      }),
    );
  return uuids;
}

/** A wrk script that GETs /ping/<uuid> of a random one of `uuids` per request. */
function pingScript(uuids: string[]): string {
  const path = join(mkdtempSync(join(tmpdir(), "signalboard-bench-")), "ping.lua");
  writeFileSync(
    path,
    [
      `uuids = {${uuids.map((u) => JSON.stringify(u)).join(",")}}`,
      `function init(args) math.randomseed(os.time() + math.floor(os.clock() * 1000000)) end`,
      `request = function() return wrk.format("GET", "/ping/" .. uuids[math.random(#uuids)]) end`,
    ].join("\n") + "\n",
  );
  return path;
}

/** Pings each of `uuids` once, 32 at a time. */
async function pingAll(url: string, uuids: string[]) {
  for (let i = 0; i < uuids.length; i += 32)
    await Promise.all(
      uuids.slice(i, i + 32).map(async (uuid) => {
        const res = await fetch(`${url}/ping/${uuid}`);
        if ((await res.text()) !== "OK") throw new Error(`/ping answered ${res.status}`);
      }),
    );
}

async function pingRates(binary: string[], store: Store, opts: { rounds: number; seconds: number }) {
  const dataDir = tempDir();
  const args = ["--data-dir", dataDir, ...(await store.args())];
  const token = tokenFor(binary, args);
  const server = await startProcess([...binary, "serve", "--port", "0", "--host", "127.0.0.1", ...args], {
    SIGNALBOARD_RATE_LIMIT_PING: "0",
  });
  try {
    const uuids = await makeChecks(server.url, token, CHECKS, { period: 86_400, grace: 3600 });
    const ping = pingScript(uuids);
    const log = postScript("log", EVENT, { "Content-Type": "application/json", Authorization: `Bearer ${token}` });
    wrk(`${server.url}/v1/log`, { connections: 64, seconds: 2, script: log });
    wrk(server.url, { connections: 64, seconds: 2, script: ping });
    const pings: ReturnType<typeof wrk>[] = [];
    const logs: ReturnType<typeof wrk>[] = [];
    for (let round = 0; round < opts.rounds; round++) {
      logs.push(wrk(`${server.url}/v1/log`, { connections: 64, seconds: opts.seconds, script: log }));
      pings.push(wrk(server.url, { connections: 64, seconds: opts.seconds, script: ping }));
    }
    for (const r of [...pings, ...logs]) if (r.errors) throw new Error(`${r.errors} requests failed`);
    return {
      pingRps: median(pings.map((r) => r.rps)),
      logRps: median(logs.map((r) => r.rps)),
      pingP99: median(pings.map((r) => r.p99)),
      logP99: median(logs.map((r) => r.p99)),
    };
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function dueAtOnce(store: Store): Promise<Pick<ChecksResult, "down" | "up" | "notices">> {
  const dataDir = tempDir();
  const main = join(ROOT, "src/main.ts");
  const args = ["--data-dir", dataDir, ...(await store.args())];
  const token = tokenFor([BUN, main], args);
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
    { SIGNALBOARD_LOG_LEVEL: "info", LOOP_HOLD_FILE: holds, SIGNALBOARD_RATE_LIMIT_PING: "0" },
  );
  const headers = { Authorization: `Bearer ${token}` };
  const metric = async (name: string) => {
    const text = await (await fetch(`${server.url}/metrics`, { headers })).text();
    return Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1] ?? 0);
  };
  const lastId = () => metric("signalboard_events_last_id");
  const holdLines = () =>
    readFileSync(holds, "utf8")
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as LoopLine);
  /** Waits until `n` more events are written (the notices), with /healthz probed every 20 ms. */
  const measure = async (n: number, from: number, start: () => Promise<void>): Promise<LoopRun> => {
    const before = await lastId();
    let running = true;
    const health: number[] = [];
    const probe = (async () => {
      while (running) {
        const t = performance.now();
        await (await fetch(`${server.url}/healthz`, { headers: { Connection: "close" } })).text();
        health.push(performance.now() - t);
        await Bun.sleep(20);
      }
    })();
    await start();
    await until(async () => (await lastId()) >= before + n, `${n} notices`);
    const to = Date.now();
    running = false;
    await probe;
    // The loop probe writes a line a second: the one that covers `to`.
    await until(() => holdLines().some((l) => l.t > to), "the loop probe's line");
    const lines = holdLines().filter((l) => l.t > from && l.t <= to + 1000);
    return {
      seconds: (to - from) / 1000,
      heldMs: Math.max(0, ...lines.map((l) => l.held)),
      stalledMs: Math.max(0, ...lines.map((l) => l.stalled)),
      healthMs: Math.max(0, ...health),
    };
  };
  try {
    const uuids = await makeChecks(server.url, token, CHECKS, { cron: "* * * * *", tz: "UTC", grace: 5 });
    // Pinged well inside one minute, so that each is due at the next minute's start plus the grace.
    await until(() => new Date().getUTCSeconds() >= 2 && new Date().getUTCSeconds() <= 30, "a minute's first half");
    await pingAll(server.url, uuids);
    const due = (Math.floor(Date.now() / 60_000) + 1) * 60_000 + 5000;
    console.error(`  ${store.name}: ${CHECKS} checks up, all due at ${new Date(due).toISOString()}`);
    const down = await measure(CHECKS, due, () => until(() => Date.now() >= due, "the due moment"));
    console.error(
      `  ${store.name}: all down ${down.seconds.toFixed(1)} s after; loop held at most ${down.heldMs.toFixed(1)} ms`,
    );
    const upFrom = Date.now();
    // Each ping is an event and each change back up a notice: two events a check.
    const up = await measure(2 * CHECKS, upFrom, () => pingAll(server.url, uuids));
    console.error(
      `  ${store.name}: all up again in ${up.seconds.toFixed(1)} s; loop held at most ${up.heldMs.toFixed(1)} ms`,
    );
    // One notice per check and change: none more come on later rounds (three more are run).
    const rounds = await metric("signalboard_alert_rounds_total");
    await until(async () => (await metric("signalboard_alert_rounds_total")) >= rounds + 3, "three rounds");
    const notices = { down: 0, up: 0 };
    let cursor: string | null = null;
    do {
      const res = await fetch(
        `${server.url}/v1/events?project=default&channel=alerts&limit=100${cursor ? `&cursor=${cursor}` : ""}`,
        { headers },
      );
      const page = (await res.json()) as { events: { tags: Record<string, unknown> }[]; next_cursor: string | null };
      for (const e of page.events) if (e.tags.state === "down" || e.tags.state === "up") notices[e.tags.state]++;
      cursor = page.next_cursor;
    } while (cursor);
    return { down, up, notices };
  } finally {
    await server.stop();
    for (const dir of [dataDir, dirname(holds)]) rmSync(dir, { recursive: true, force: true });
  }
}

export async function checksBenchmark(
  binary: string[],
  store: Store,
  opts: { rounds: number; seconds: number },
): Promise<ChecksResult> {
  const rates = await pingRates(binary, store, opts);
  console.error(
    `  ${store.name}: /ping ${Math.round(rates.pingRps)}/s, /v1/log ${Math.round(rates.logRps)}/s (${(rates.pingRps / rates.logRps).toFixed(2)})`,
  );
  return { store: store.name, ...rates, ...(await dueAtOnce(store)) };
}

export function checksRows(results: ChecksResult[]): (string | number)[][] {
  const rows: (string | number)[][] = [["store", "measured", "value", "target"]];
  for (const r of results) {
    rows.push(
      [
        r.store,
        "GET /ping/<uuid>, 64 connections (req/s, p99 ms)",
        `${Math.round(r.pingRps)}, ${r.pingP99.toFixed(1)}`,
        "",
      ],
      [r.store, "POST /v1/log, 64 connections (req/s, p99 ms)", `${Math.round(r.logRps)}, ${r.logP99.toFixed(1)}`, ""],
      [r.store, "pings over events (ratio)", (r.pingRps / r.logRps).toFixed(2), "≥ 0.8"],
    );
    for (const [what, run] of [
      [`${CHECKS} checks due at once: all down after (s)`, r.down],
      [`${CHECKS} checks pinged back up at once: all up after (s)`, r.up],
    ] as const) {
      rows.push(
        [r.store, what, run.seconds.toFixed(1), ""],
        [r.store, "  event loop held at most (ms CPU)", run.heldMs.toFixed(1), "< 50"],
        [r.store, "  loop stalled at most (ms, running or blocked)", run.stalledMs.toFixed(1), ""],
        [r.store, "  longest /healthz (ms)", run.healthMs.toFixed(0), ""],
      );
    }
    rows.push([r.store, "notices written (down, up)", `${r.notices.down}, ${r.notices.up}`, `${CHECKS}, ${CHECKS}`]);
  }
  return rows;
}
