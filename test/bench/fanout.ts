// Live fan-out: one event delivered to 1,000 and to 10,000 SSE subscribers (p50/p99 from the
// POST to each subscriber's receipt, measured by a separate client process), the server's resident
// memory idle and with them, and ingest throughput while 1,000 dashboards watch.
import { type Subprocess, spawn } from "bun";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { EVENT } from "./ingest.ts";
import { BUN, cpuSeconds, median, postScript, ROOT, startProcess, tempDir, wrk } from "./lib.ts";
import { BENCH_OWNER, benchSession } from "./seed.ts";

export function rssOf(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) * 1024;
}

/** Starts the subscriber process and waits until all its streams are open. */
async function subscribers(
  url: string,
  path: string,
  header: string,
  count: number,
  mode: "measure" | "hold" | "markers",
  token = "",
) {
  // Bun's fetch allows 256 requests at once unless told otherwise.
  const proc = spawn([BUN, join(ROOT, "test/bench/subscribers.ts"), url, path, header, String(count), mode], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "inherit",
    env: { ...process.env, BUN_CONFIG_MAX_HTTP_REQUESTS: "65000", BENCH_TOKEN: token },
  });
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let out = "";
  while (!out.includes("connected")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the subscriber process exited");
    out += decoder.decode(value);
  }
  return {
    proc,
    /** Tells it to go on; returns the last line it prints. */
    async go(): Promise<string> {
      proc.stdin.write("go\n");
      proc.stdin.flush();
      while (!/\n\{.*\}\s*$/s.test(out)) {
        const { value, done } = await reader.read();
        if (done) break;
        out += decoder.decode(value);
      }
      return out.trim().split("\n").at(-1)!;
    },
    async stop(): Promise<void> {
      (proc as Subprocess).kill();
      await proc.exited;
    },
  };
}

export async function fanoutBenchmark(
  binary: string[],
  opts: { rounds: number; seconds: number },
): Promise<(string | number)[][]> {
  const dataDir = tempDir();
  const token = Bun.spawnSync([...binary, "token", "create", "--init", "--name", "bench", "--data-dir", dataDir])
    .stdout.toString()
    .trim()
    .split("\n")
    .at(-1)!;
  Bun.spawnSync(
    [...binary, "user", "create", "--init", BENCH_OWNER.username, "--password-stdin", "--data-dir", dataDir],
    {
      stdin: new TextEncoder().encode(BENCH_OWNER.password),
    },
  );
  const server = await startProcess([...binary, "serve", "--port", "0", "--host", "127.0.0.1", "--data-dir", dataDir], {
    SIGNALBOARD_LOG_LEVEL: "info",
  });
  const bare = await startProcess([BUN, join(ROOT, "test/bench/bare.ts")], { BENCH_TOKEN: token });
  const rows: (string | number)[][] = [["live", "delivered", "p50 ms", "p99 ms", "max ms", "server RSS MB", "target"]];
  try {
    await fetch(`${server.url}/healthz`);
    await Bun.sleep(1000);
    rows.push(["idle, no subscribers", "", "", "", "", (rssOf(server.pid) / 1048576).toFixed(0), "< 80 MB"]);
    for (const count of [1000, 10000]) {
      const subs = await subscribers(
        server.url,
        "/v1/stream?project=default&channel=fanout",
        `Authorization: Bearer ${token}`,
        count,
        "measure",
      );
      await Bun.sleep(500);
      const rss = rssOf(server.pid);
      const result = JSON.parse(await subs.go()) as { delivered: number; p50: number; p99: number; max: number };
      rows.push([
        `one event to ${count.toLocaleString("en-US")} SSE subscribers`,
        `${result.delivered}/${count}`,
        result.p50.toFixed(1),
        result.p99.toFixed(1),
        result.max.toFixed(1),
        (rss / 1048576).toFixed(0),
        count === 10000 ? "p99 < 150 ms, RSS < 200 MB" : "",
      ]);
      await subs.stop();
      await Bun.sleep(1000);
    }

    // Ingest while dashboards watch the project's live feed (every event is theirs): none, one, a
    // thousand, in alternating rounds with the bare baseline. Dashboards flush at a fixed interval,
    // so their cost should not grow with their number.
    const cookie = await benchSession(server.url);
    const script = postScript("log-watched", EVENT, {
      "Content-Type": "application/json",
      Authorization: `Bearer ${token}`,
    });
    const cpu = { none: [] as number[], one: [] as number[], thousand: [] as number[] };
    const load = (key: keyof typeof cpu) => {
      const before = cpuSeconds(server.pid);
      const r = wrk(`${server.url}/v1/log`, { connections: 64, seconds: opts.seconds, script });
      cpu[key].push(((cpuSeconds(server.pid) - before) * 1e6) / r.requests);
      return r.rps;
    };
    const runs = { bare: [] as number[], none: [] as number[], one: [] as number[], thousand: [] as number[] };
    for (let round = 0; round < opts.rounds; round++) {
      runs.bare.push(wrk(`${bare.url}/`, { connections: 64, seconds: opts.seconds, script }).rps);
      runs.none.push(load("none"));
      for (const [count, key] of [
        [1, "one"],
        [1000, "thousand"],
      ] as const) {
        const dashboards = await subscribers(
          server.url,
          "/p/default/live?metrics=1",
          `Cookie: ${cookie}`,
          count,
          "hold",
        );
        runs[key].push(load(key));
        await dashboards.stop();
      }
    }
    const none = median(runs.none);
    const bareRps = median(runs.bare);
    for (const [label, key, target] of [
      ["no dashboard open", "none", ""],
      ["1 dashboard open", "one", "≥ 0.97 of none"],
      ["1,000 dashboards open", "thousand", "≥ 0.90 of none"],
    ] as const) {
      const rps = median(runs[key]);
      rows.push([
        `POST /v1/log, 64 connections, ${label}: ${Math.round(rps)} req/s, ${(rps / none).toFixed(2)} of none, ${(rps / bareRps).toFixed(2)} of bare (${Math.round(bareRps)}); server CPU ${median(cpu[key]).toFixed(1)} µs per event`,
        "",
        "",
        "",
        "",
        (rssOf(server.pid) / 1048576).toFixed(0),
        target,
      ]);
    }

    // How soon a dashboard shows an event while ingest runs flat out: 1,000 dashboards showing the
    // channel "latency", markers posted to it every 200 ms while wrk loads another channel.
    await fetch(`${server.url}/v1/log`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ project: "default", channel: "latency", event: "the channel exists" }),
    });
    const watching = await subscribers(
      server.url,
      "/p/default/live?channel=latency",
      `Cookie: ${cookie}`,
      1000,
      "markers",
      token,
    );
    const measured = watching.go();
    wrk(`${server.url}/v1/log`, { connections: 64, seconds: 5, script });
    const lat = JSON.parse(await measured) as {
      expected: number;
      arrived: number;
      p50: number;
      p99: number;
      max: number;
    };
    rows.push([
      "an event to 1,000 dashboards while ingest runs at full load",
      `${lat.arrived}/${lat.expected}`,
      lat.p50.toFixed(1),
      lat.p99.toFixed(1),
      lat.max.toFixed(1),
      (rssOf(server.pid) / 1048576).toFixed(0),
      "p99 < 400 ms",
    ]);
    await watching.stop();
  } finally {
    await server.stop();
    await bare.stop();
  }
  return rows;
}
