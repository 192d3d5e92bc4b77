// The stall test: expensive reads must not hold the process that acknowledges writes. 1,500 users
// with 100 properties of 600 characters each (through /v1/identify, as a public token could); 12
// users searches at once whose words match only the last property; meanwhile /healthz every 20 ms
// on new connections (and /readyz on PostgreSQL) and an event POSTed every 100 ms. Printed: the
// longest answer of each, and what the searches got. Against the compiled binary, on SQLite and,
// when a cluster is given, on PostgreSQL.
import { BENCH_OWNER, benchSession } from "./seed.ts";
import { median, startProcess, tempDir } from "./lib.ts";

const USERS = 1500;
const SEARCHES = 12;

export type StallResult = {
  store: string;
  healthMs: number;
  readyMs: number | null;
  ingestMs: number;
  searchesOk: number;
  searchesTimedOut: number;
  searchMs: number;
  aloneMs: number;
};

export async function stallBenchmark(binary: string[], store: { name: string; args: string[] }): Promise<StallResult> {
  const dataDir = tempDir();
  const args = ["--data-dir", dataDir, ...store.args];
  const token = Bun.spawnSync([...binary, "token", "create", "--init", "--name", "stall", ...args])
    .stdout.toString()
    .trim()
    .split("\n")
    .at(-1)!;
  Bun.spawnSync([...binary, "user", "create", "--init", BENCH_OWNER.username, "--owner", "--password-stdin", ...args], {
    stdin: new TextEncoder().encode(BENCH_OWNER.password),
  });
  const server = await startProcess([...binary, "serve", "--port", "0", "--host", "127.0.0.1", ...args], {
    SIGNALBOARD_LOG_LEVEL: "info",
  });
  try {
    const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
    console.error(`  seeding ${USERS} users of 100 properties x 600 characters (${store.name})...`);
    const filler = "lorem ipsum dolor sit amet ".repeat(23).slice(0, 600);
    for (let batch = 0; batch < USERS; batch += 25) {
      await Promise.all(
        Array.from({ length: 25 }, async (_, i) => {
          const n = batch + i;
          const properties: Record<string, string> = {};
          for (let p = 0; p < 99; p++) properties[`p${p}`] = filler;
          properties.p99 = `${filler.slice(0, 580)} ${n % 100 === 0 ? "needle" : "hay"}`;
          const res = await fetch(`${server.url}/v1/identify`, {
            method: "POST",
            headers,
            body: JSON.stringify({ project: "default", user_id: `user-${n}`, properties }),
          });
          if (!res.ok) throw new Error(`identify answered ${res.status}`);
        }),
      );
    }
    const cookie = await benchSession(server.url);
    const search = async () => {
      const started = performance.now();
      const res = await fetch(`${server.url}/p/default/users?q=needle`, { headers: { Cookie: cookie } });
      await res.text();
      return { status: res.status, ms: performance.now() - started };
    };
    await search();
    const alone = median(await Promise.all([search(), search(), search()].map(async (p) => (await p).ms)));

    let running = true;
    const longest = { health: 0, ready: 0, ingest: 0 };
    const probe = (path: "/healthz" | "/readyz", key: "health" | "ready") =>
      (async () => {
        while (running) {
          const started = performance.now();
          const res = await fetch(server.url + path, { headers: { Connection: "close" } });
          await res.text();
          longest[key] = Math.max(longest[key], performance.now() - started);
          await Bun.sleep(20);
        }
      })();
    const writes = (async () => {
      while (running) {
        const started = performance.now();
        const res = await fetch(`${server.url}/v1/log`, {
          method: "POST",
          headers,
          body: JSON.stringify({ project: "default", channel: "stall", event: "meanwhile" }),
        });
        await res.text();
        if (!res.ok) throw new Error(`an event during the searches answered ${res.status}`);
        longest.ingest = Math.max(longest.ingest, performance.now() - started);
        await Bun.sleep(100);
      }
    })();
    const probes = [probe("/healthz", "health"), ...(store.name === "PostgreSQL" ? [probe("/readyz", "ready")] : [])];
    await Bun.sleep(200);
    const results = await Promise.all(Array.from({ length: SEARCHES }, search));
    running = false;
    await Promise.all([...probes, writes]);
    return {
      store: store.name,
      healthMs: longest.health,
      readyMs: store.name === "PostgreSQL" ? longest.ready : null,
      ingestMs: longest.ingest,
      searchesOk: results.filter((r) => r.status === 200).length,
      searchesTimedOut: results.filter((r) => r.status === 503).length,
      searchMs: Math.max(...results.map((r) => r.ms)),
      aloneMs: alone,
    };
  } finally {
    await server.stop();
  }
}

export function stallRows(results: StallResult[]): (string | number)[][] {
  const rows: (string | number)[][] = [
    [
      "store",
      "one search alone (ms)",
      "12 at once: slowest (ms)",
      "answered / query_timeout",
      "longest /healthz (ms)",
      "longest /readyz (ms)",
      "longest ingest (ms)",
      "target",
    ],
  ];
  for (const r of results) {
    const target = r.store === "PostgreSQL" ? "ingest < 500, /readyz answers" : "/healthz and ingest < 250";
    rows.push([
      r.store,
      r.aloneMs.toFixed(0),
      r.searchMs.toFixed(0),
      `${r.searchesOk} / ${r.searchesTimedOut}`,
      r.healthMs.toFixed(0),
      r.readyMs === null ? "" : r.readyMs.toFixed(0),
      r.ingestMs.toFixed(0),
      target,
    ]);
  }
  return rows;
}
