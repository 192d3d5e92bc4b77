// Benchmark plumbing: processes to measure, wrk to load them, and numbers to print.
import { type Subprocess, spawn, spawnSync } from "bun";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const ROOT = join(import.meta.dir, "../..");
export const BUN = process.execPath;

export function ensureWrk(): string {
  const found = spawnSync(["sh", "-c", "command -v wrk"]).stdout.toString().trim();
  if (found) return found;
  if (process.getuid?.() === 0) {
    console.error("wrk not found; installing it from Debian (apt-get install -y wrk)...");
    spawnSync(["apt-get", "install", "-y", "-qq", "wrk"], { stdout: "inherit", stderr: "inherit" });
    const again = spawnSync(["sh", "-c", "command -v wrk"]).stdout.toString().trim();
    if (again) return again;
  }
  console.error(
    "The benchmark needs wrk (a C load generator; JavaScript ones saturate before Bun does).\nInstall it with: sudo apt-get install -y wrk",
  );
  process.exit(2);
}

export type Proc = { url: string; proc: Subprocess; pid: number; stop: () => Promise<void> };

/** Starts a process and resolves with the URL it prints (`listening URL` or a JSON log line). */
export async function startProcess(cmd: string[], env: Record<string, string> = {}): Promise<Proc> {
  const proc = spawn(cmd, { env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe", cwd: ROOT });
  let seen = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL from ${cmd.join(" ")}:\n${seen}`)), 15_000);
    for (const stream of [proc.stdout, proc.stderr]) {
      void (async () => {
        const decoder = new TextDecoder();
        for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) {
          seen += decoder.decode(chunk);
          const match = /listening (http:\/\/\S+)/.exec(seen) ?? /"msg":"listening","url":"([^"]+)"/.exec(seen);
          if (match) {
            clearTimeout(timer);
            resolve(match[1]!.replace(/\/$/, ""));
          }
        }
      })();
    }
  });
  return {
    url,
    proc,
    pid: proc.pid,
    stop: async () => {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}

/** CPU seconds a process has used so far (user + system). */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Waits (at most `limitMs`) until the process is idle: under 5% of a core over 500 ms. Returns ms waited. */
export async function settle(pid: number, limitMs = 60_000): Promise<number> {
  const start = performance.now();
  for (let before = cpuSeconds(pid); performance.now() - start < limitMs; ) {
    await Bun.sleep(500);
    const now = cpuSeconds(pid);
    if (now - before < 0.025) break;
    before = now;
  }
  return performance.now() - start;
}

export type WrkResult = { rps: number; p50: number; p99: number; errors: number; requests: number };

let scriptDir: string | null = null;

/** A wrk Lua script that POSTs `body` with the given headers (each connection waiting `delayMs` between requests, if given). */
/**
 * A wrk script that POSTs `body`. With `meanDelayMs`, each connection waits before each request a
 * random time with that mean (exponentially distributed), as independent clients do: a fixed wait
 * would march all connections in step once one group commit answers them together.
 */
export function postScript(name: string, body: unknown, headers: Record<string, string>, meanDelayMs?: number): string {
  scriptDir ??= mkdtempSync(join(tmpdir(), "signalboard-bench-"));
  const lines = [`wrk.method = "POST"`, `wrk.body = ${JSON.stringify(JSON.stringify(body))}`];
  if (meanDelayMs !== undefined) {
    lines.push(`function init(args) math.randomseed(os.time() + math.floor(os.clock() * 1000000)) end`);
    lines.push(
      `function delay() return math.floor(-math.log(1 - math.random()) * ${Math.max(0, meanDelayMs).toFixed(3)}) end`,
    );
  }
  for (const [key, value] of Object.entries(headers))
    lines.push(`wrk.headers[${JSON.stringify(key)}] = ${JSON.stringify(value)}`);
  // Count non-2xx answers, so a benchmark can never pass on errors.
  lines.push(
    `errors = 0`,
    `response = function(status, headers, body) if status ~= 200 then errors = errors + 1 end end`,
  );
  const path = join(scriptDir, `${name}.lua`);
  writeFileSync(path, lines.join("\n") + "\n");
  return path;
}

/** `pin`: the CPU to run wrk on (taskset), so the server's threads have the other cores to themselves. */
export function wrk(
  url: string,
  opts: {
    connections: number;
    seconds: number;
    script: string;
    rate?: number;
    threads?: number;
    pin?: number;
    /** Seconds before wrk counts a request as failed (its own default: 2). */
    timeout?: number;
  },
): WrkResult {
  const threads = Math.min(opts.threads ?? 2, opts.connections);
  const args = [
    "wrk",
    `-t${threads}`,
    `-c${opts.connections}`,
    `-d${opts.seconds}s`,
    "--latency",
    ...(opts.timeout ? ["--timeout", `${opts.timeout}s`] : []),
    "-s",
    opts.script,
    url,
  ];
  const out = spawnSync(opts.pin === undefined ? args : ["taskset", "-c", String(opts.pin), ...args]).stdout.toString();
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  const errors =
    Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0) +
    Number(/Socket errors:.*?timeout (\d+)/.exec(out)?.[1] ?? 0);
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
  return { rps, p50: latency(out, "50%"), p99: latency(out, "99%"), errors, requests };
}

function latency(out: string, pct: string): number {
  const m = new RegExp(`${pct.replace("%", "%")}\\s+([\\d.]+)(us|ms|s)`).exec(out);
  if (!m) return NaN;
  const value = Number(m[1]);
  return m[2] === "us" ? value / 1000 : m[2] === "s" ? value * 1000 : value;
}

export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export function table(rows: (string | number)[][]): string {
  const cells = rows.map((r) => r.map(String));
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  const line = (r: string[]) => "| " + r.map((c, i) => c.padEnd(widths[i]!)).join(" | ") + " |";
  return [
    line(cells[0]!),
    "|" + widths.map((w) => "-".repeat(w + 2)).join("|") + "|",
    ...cells.slice(1).map(line),
  ].join("\n");
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "signalboard-bench-data-"));
}

/**
 * CPU time of the PostgreSQL server listening on `port` (its postmaster and every child) from now
 * on: call the returned function for the seconds used since. Counted per process, so a backend
 * that exits meanwhile takes only its own time with it.
 */
export function pgCpu(port: number): () => number {
  const ticks = (pid: string, fields = statOf(pid)) => (fields ? Number(fields[11]) + Number(fields[12]) : 0);
  const children = () => {
    const procs = readdirSync("/proc").filter((d) => /^\d+$/.test(d));
    const postmaster = procs.find((pid) => {
      try {
        const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
        return cmd[0]?.endsWith("/postgres") && cmd[cmd.indexOf("-p") + 1] === String(port);
      } catch {
        return false;
      }
    });
    if (!postmaster) throw new Error(`no PostgreSQL server on port ${port}`);
    const found = new Map<string, number>();
    for (const pid of procs) {
      const fields = statOf(pid);
      if (fields && (pid === postmaster || fields[1] === postmaster)) found.set(pid, ticks(pid, fields));
    }
    return found;
  };
  const before = children();
  return () => {
    let total = 0;
    for (const [pid, now] of children()) total += now - (before.get(pid) ?? 0);
    return total / 100;
  };
}

/**
 * CPU time of process `pid` and its children (a server's reader processes) from now on: call the
 * returned function for the seconds used since. A child that exits meanwhile takes its time with it.
 */
export function treeCpu(pid: number): () => number {
  const ticks = () => {
    const found = new Map<string, number>();
    for (const child of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
      const fields = statOf(child);
      if (fields && (child === String(pid) || fields[1] === String(pid)))
        found.set(child, Number(fields[11]) + Number(fields[12]));
    }
    return found;
  };
  const before = ticks();
  return () => {
    let total = 0;
    for (const [child, now] of ticks()) total += now - (before.get(child) ?? 0);
    return total / 100;
  };
}

function statOf(pid: string): string[] | null {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  } catch {
    return null; // gone
  }
}

/**
 * The most resident memory (MB) of process `pid` alone and of any one of its children (a server's
 * reader processes), sampled every 100 ms from now until the returned function is called.
 */
export function treeRss(pid: number): () => { serverMb: number; childMb: number } {
  const rssOf = (p: string) => {
    try {
      const line = readFileSync(`/proc/${p}/status`, "utf8").match(/VmRSS:\s+(\d+) kB/);
      return line ? Number(line[1]) / 1024 : 0;
    } catch {
      return 0;
    }
  };
  const most = { serverMb: 0, childMb: 0 };
  const sample = () => {
    most.serverMb = Math.max(most.serverMb, rssOf(String(pid)));
    for (const child of readdirSync("/proc").filter((d) => /^\d+$/.test(d)))
      if (statOf(child)?.[1] === String(pid)) most.childMb = Math.max(most.childMb, rssOf(child));
  };
  sample();
  const timer = setInterval(sample, 100);
  return () => {
    clearInterval(timer);
    sample();
    return most;
  };
}
