// Reading at scale: one million stored events (85% in one channel), then the first page of that
// channel's feed (dashboard HTML and API), tag searches, a full-text search and the activity
// chart, each timed over sequential requests on loopback.
import { median, startProcess, tempDir } from "./lib.ts";
import { benchSession, seed } from "./seed.ts";

export type FeedResult = { rows: (string | number)[][]; seedSeconds: number };

async function time(fn: () => Promise<Response>, samples: number): Promise<{ p50: number; p95: number }> {
  for (let i = 0; i < 3; i++) await (await fn()).arrayBuffer();
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const started = performance.now();
    const response = await fn();
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`benchmark request failed: ${response.status}`);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50: median(times), p95: times[Math.floor(times.length * 0.95)]! };
}

/**
 * `store`: the flags naming the database, and how to fill it (by default SQLite in a new data
 * directory, seeded through the store).
 */
export async function feedBenchmark(
  events: number,
  samples: number,
  binary: string[],
  store?: { args: string[]; seed: () => Promise<{ seconds: number }> },
): Promise<FeedResult> {
  const dataDir = tempDir();
  const args = store?.args ?? ["--data-dir", dataDir];
  console.error(`seeding ${events.toLocaleString("en-US")} events...`);
  const { seconds } = store ? await store.seed() : await seed(dataDir, events);
  const token = Bun.spawnSync([...binary, "token", "create", "--init", "--name", "bench", ...args])
    .stdout.toString()
    .trim()
    .split("\n")
    .at(-1)!;
  const server = await startProcess(
    [...binary, "serve", "--port", "0", "--host", "127.0.0.1", "--data-dir", dataDir, ...args],
    { SIGNALBOARD_LOG_LEVEL: "info" },
  );
  try {
    const cookie = await benchSession(server.url);
    const page = (path: string) => () => fetch(server.url + path, { headers: { Cookie: cookie } });
    const api = (path: string) => () => fetch(server.url + path, { headers: { Authorization: `Bearer ${token}` } });
    const cases: [string, () => Promise<Response>, string][] = [
      ["channel feed, first page (dashboard HTML)", page("/p/bench/c/big"), "< 20 ms"],
      ["channel feed, first page (API, 50 events)", api("/v1/events?project=bench&channel=big&limit=50"), "< 20 ms"],
      [
        "project feed, page 100 deep (API, by cursor)",
        api(`/v1/events?project=bench&limit=50&cursor=${await deepCursor(server.url, token)}`),
        "",
      ],
      ["tag search plan:pro (API)", api("/v1/events?project=bench&tag=plan:pro&limit=50"), "< 100 ms"],
      [
        "tag search plan:pro + region:eu + channel (API)",
        api("/v1/events?project=bench&channel=payments&tag=plan:pro&tag=region:eu&limit=50"),
        "< 100 ms",
      ],
      ["tag search in the dashboard (HTML)", page("/p/bench?q=plan%3Ateam"), "< 100 ms"],
      ["user timeline (API)", api("/v1/events?project=bench&user_id=user-42&limit=50"), ""],
      ["full-text, rare words (API)", api("/v1/events?project=bench&q=request%20424242&limit=50"), ""],
      ["full-text, a word in 1 of 7 events (API)", api("/v1/events?project=bench&q=payment&limit=50"), ""],
      ["activity chart, 30 days (JSON)", page("/p/bench/activity.json?days=30"), ""],
      ["activity chart, 30 days, tag plan:pro (JSON)", page("/p/bench/activity.json?days=30&q=plan%3Apro"), ""],
      ["activity chart, 30 days, a word in 1 of 7 (JSON)", page("/p/bench/activity.json?days=30&q=payment"), ""],
    ];
    const rows: (string | number)[][] = [
      ["at " + events.toLocaleString("en-US") + " events", "p50 ms", "p95 ms", "target"],
    ];
    for (const [name, fn, target] of cases) {
      const t = await time(fn, samples);
      rows.push([name, t.p50.toFixed(1), t.p95.toFixed(1), target]);
    }
    return { rows, seedSeconds: seconds };
  } finally {
    await server.stop();
  }
}

async function deepCursor(url: string, token: string): Promise<string> {
  let cursor = "";
  for (let i = 0; i < 100; i++) {
    const page = (await fetch(`${url}/v1/events?project=bench&limit=50${cursor ? `&cursor=${cursor}` : ""}`, {
      headers: { Authorization: `Bearer ${token}` },
    }).then((r) => r.json())) as { next_cursor: string };
    cursor = page.next_cursor;
  }
  return cursor;
}
