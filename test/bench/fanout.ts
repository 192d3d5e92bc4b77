// Live fan-out: one event delivered to 1,000 and to 10,000 SSE subscribers (p50/p99 from the
// POST to each subscriber's receipt), and the server's resident memory idle and with them.
import { spawn } from "bun";
import { join } from "node:path";
import { BUN, ROOT, startProcess, tempDir } from "./lib.ts";

export function rssOf(pid: number): number {
  const status = require("node:fs").readFileSync(`/proc/${pid}/status`, "utf8") as string;
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

export async function fanoutBenchmark(binary: string[]): Promise<(string | number)[][]> {
  const dataDir = tempDir();
  const token = Bun.spawnSync([...binary, "token", "create", "--name", "bench", "--data-dir", dataDir]).stdout.toString().trim().split("\n").at(-1)!;
  const server = await startProcess([...binary, "serve", "--port", "0", "--host", "127.0.0.1", "--data-dir", dataDir], { SIGNALBOARD_RATE_LIMIT_FULL: "0", SIGNALBOARD_LOG_LEVEL: "info" });
  const rows: (string | number)[][] = [["live fan-out", "delivered", "p50 ms", "p99 ms", "max ms", "server RSS MB", "target"]];
  try {
    await fetch(`${server.url}/healthz`);
    await Bun.sleep(1000);
    Bun.gc?.(true);
    rows.push(["idle (no subscribers)", "-", "", "", "", (rssOf(server.pid) / 1048576).toFixed(0), "< 80 MB"]);
    for (const count of [1000, 10000]) {
      // Bun's fetch allows 256 requests at once unless told otherwise.
      const client = spawn([BUN, join(ROOT, "test/bench/subscribers.ts"), server.url, token, String(count)], { stdin: "pipe", stdout: "pipe", stderr: "inherit", env: { ...process.env, BUN_CONFIG_MAX_HTTP_REQUESTS: "65000" } });
      const reader = client.stdout.getReader();
      const decoder = new TextDecoder();
      let out = "";
      while (!out.includes("connected")) out += decoder.decode((await reader.read()).value);
      await Bun.sleep(500);
      const rss = rssOf(server.pid);
      client.stdin.write("go\n");
      client.stdin.flush();
      while (!out.includes("p99")) {
        const { value, done } = await reader.read();
        if (done) break;
        out += decoder.decode(value);
      }
      const result = JSON.parse(out.trim().split("\n").at(-1)!) as { delivered: number; p50: number; p99: number; max: number };
      rows.push([`one event to ${count.toLocaleString("en-US")} subscribers`, `${result.delivered}/${count}`, result.p50.toFixed(1), result.p99.toFixed(1), result.max.toFixed(1), (rss / 1048576).toFixed(0), count === 10000 ? "p99 < 150 ms; RSS < 200 MB" : ""]);
      client.kill();
      await client.exited;
      await Bun.sleep(1000);
    }
  } finally {
    await server.stop();
  }
  return rows;
}
