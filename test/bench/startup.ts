// Start-up: from spawning the compiled binary to its first 200 on /healthz, on an empty data
// directory (the first start creates and migrates the database) and on an existing one.
import { spawn } from "bun";
import { rmSync } from "node:fs";
import { median, tempDir } from "./lib.ts";

async function timeToFirst200(binary: string, dataDir: string, port: number): Promise<number> {
  const started = performance.now();
  const proc = spawn([binary, "serve", "--port", String(port), "--host", "127.0.0.1", "--data-dir", dataDir], {
    stdout: "ignore",
    stderr: "ignore",
    env: { ...process.env, SIGNALBOARD_LOG_LEVEL: "warn" },
  });
  try {
    for (;;) {
      const ok = await fetch(`http://127.0.0.1:${port}/healthz`)
        .then((r) => r.status === 200)
        .catch(() => false);
      if (ok) return performance.now() - started;
      if (performance.now() - started > 10_000) throw new Error("the binary did not answer within 10 s");
      await Bun.sleep(2);
    }
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
  }
}

export async function startupBenchmark(binary: string, runs = 7): Promise<(string | number)[][]> {
  const cold: number[] = [];
  const warm: number[] = [];
  for (let i = 0; i < runs; i++) {
    const dir = tempDir();
    cold.push(await timeToFirst200(binary, dir, 18900 + i));
    warm.push(await timeToFirst200(binary, dir, 18950 + i));
    rmSync(dir, { recursive: true, force: true });
  }
  return [
    ["start-up of the compiled binary", "median ms", "slowest ms", "target"],
    [
      "to the first 200, empty data directory (creates and migrates the database)",
      median(cold).toFixed(0),
      Math.max(...cold).toFixed(0),
      "< 300 ms",
    ],
    ["to the first 200, existing database", median(warm).toFixed(0), Math.max(...warm).toFixed(0), "< 300 ms"],
  ];
}
