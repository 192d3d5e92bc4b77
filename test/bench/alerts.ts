// Alert rules beside ingest at full load (BENCH_ONLY=alerts): 1,000 rules (400 absence rules over 20
// channels, some matching the events being posted; 400 count rules; 200 metric rules) checked every
// second, while wrk posts events at 64 connections. In alternating rounds, the same server with its
// rules paused (no rule checked: as if there were none) and resumed; printed: ingest's rate each
// way, and how long the slowest round of checks took meanwhile (from /metrics). Both stores.
import { EVENT } from "./ingest.ts";
import { cpuSeconds, median, postScript, startProcess, tempDir, wrk } from "./lib.ts";

const RULES = { absence: 400, count: 400, metric: 200 };

export type AlertsResult = {
  store: string;
  rules: number;
  without: number;
  withRules: number;
  roundMs: number;
  roundsRun: number;
  cpuWithout: number;
  cpuWith: number;
};

/** The rules, as the API takes them: every tenth absence rule watches the channel wrk posts to. */
function rules(): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < RULES.absence; i++)
    out.push({
      project: "default",
      name: `beat ${i}`,
      kind: "absence",
      filter: i % 10 ? { channel: `host-${i % 20}`, ...(i % 3 ? { event: "beat" } : {}) } : { channel: EVENT.channel },
      period: 3600,
    });
  for (let i = 0; i < RULES.count; i++)
    out.push({
      project: "default",
      name: `burst ${i}`,
      kind: "count",
      filter: i % 4 ? { channel: `errors-${i % 20}` } : { channel: EVENT.channel, tags: { env: "prod" } },
      window: 300,
      above: 1e9,
    });
  for (let i = 0; i < RULES.metric; i++)
    out.push({ project: "default", name: `queue ${i}`, kind: "metric", metric: `queue-${i % 10}`, above: 1e9 });
  return out;
}

export async function alertsBenchmark(
  binary: string[],
  store: { name: string; args: string[] },
  opts: { rounds: number; seconds: number },
): Promise<AlertsResult> {
  const dataDir = tempDir();
  const args = ["--data-dir", dataDir, ...store.args];
  const token = Bun.spawnSync([...binary, "token", "create", "--init", "--name", "alerts", ...args])
    .stdout.toString()
    .trim()
    .split("\n")
    .at(-1)!;
  const server = await startProcess(
    [...binary, "serve", "--port", "0", "--host", "127.0.0.1", "--alert-interval", "1", "--metrics", "true", ...args],
    { SIGNALBOARD_LOG_LEVEL: "info" },
  );
  const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
  const api = async (path: string, body?: unknown, method = body ? "POST" : "GET") => {
    const res = await fetch(server.url + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`);
    return res.json() as Promise<Record<string, unknown>>;
  };
  try {
    for (let i = 0; i < 10; i++) await api("/send-metric", { title: `queue-${i}`, value: 1 });
    const ids: number[] = [];
    for (const rule of rules()) ids.push(((await api("/v1/alerts", rule)).alert as { id: number }).id);
    const setPaused = async (paused: boolean) => {
      for (let i = 0; i < ids.length; i += 50)
        await Promise.all(ids.slice(i, i + 50).map((id) => api(`/v1/alerts/${id}`, { paused }, "PATCH")));
    };
    const gauge = async (name: string) => {
      const text = await (await fetch(`${server.url}/metrics`, { headers })).text();
      return Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1] ?? NaN);
    };
    const script = postScript("alerts-log", EVENT, headers);
    wrk(`${server.url}/v1/log`, { connections: 64, seconds: 2, script }); // warm up
    const without: number[] = [];
    const withRules: number[] = [];
    const cpuWithout: number[] = [];
    const cpuWith: number[] = [];
    let slowest = 0;
    const roundsBefore = await gauge("signalboard_alert_rounds_total");
    for (let round = 0; round < opts.rounds; round++) {
      for (const active of [false, true]) {
        await setPaused(!active);
        await Bun.sleep(1500); // a round with the change in it
        let watching = active;
        const watch = (async () => {
          while (watching) {
            slowest = Math.max(slowest, await gauge("signalboard_alert_round_seconds"));
            await Bun.sleep(300);
          }
        })();
        const cpu = cpuSeconds(server.pid);
        const r = wrk(`${server.url}/v1/log`, { connections: 64, seconds: opts.seconds, script });
        if (r.errors)
          throw new Error(`${r.errors} requests failed while alert rules were ${active ? "checked" : "paused"}`);
        (active ? cpuWith : cpuWithout).push(((cpuSeconds(server.pid) - cpu) * 1e6) / r.requests);
        watching = false;
        await watch;
        (active ? withRules : without).push(r.rps);
      }
    }
    const roundsRun = (await gauge("signalboard_alert_rounds_total")) - roundsBefore;
    return {
      store: store.name,
      rules: ids.length,
      without: median(without),
      withRules: median(withRules),
      roundMs: slowest * 1000,
      roundsRun,
      cpuWithout: median(cpuWithout),
      cpuWith: median(cpuWith),
    };
  } finally {
    await server.stop();
  }
}

export function alertsRows(results: AlertsResult[]): (string | number)[][] {
  const rows: (string | number)[][] = [
    [
      "store",
      "rules",
      "POST /v1/log req/s, rules paused",
      "with 1,000 rules checked every second",
      "ratio",
      "server CPU µs/event (paused / checked)",
      "slowest round of checks (ms)",
      "rounds run",
    ],
  ];
  for (const r of results)
    rows.push([
      r.store,
      r.rules,
      Math.round(r.without),
      Math.round(r.withRules),
      (r.withRules / r.without).toFixed(2),
      `${r.cpuWithout.toFixed(1)} / ${r.cpuWith.toFixed(1)}`,
      r.roundMs.toFixed(0),
      r.roundsRun,
    ]);
  return rows;
}
