// Running Signalboard as a user does: as a process (from source or the compiled binary), with its
// CLI, reading what it prints.
import { type Subprocess, spawn } from "bun";
import { join } from "node:path";

export const ROOT = join(import.meta.dir, "../..");
const FROM_SOURCE = [process.execPath, join(ROOT, "src/main.ts")];
/**
 * Signalboard as the tests run it: the binary `npm test` compiles once from this source before the
 * files start (SIGNALBOARD_TEST_BINARY; a quarter of the source's start-up, and the CLI starts
 * hundreds of times), or the source itself when a file runs alone.
 */
export const PROGRAM = process.env.SIGNALBOARD_TEST_BINARY ? [process.env.SIGNALBOARD_TEST_BINARY] : FROM_SOURCE;

export type Result = { code: number; stdout: string; stderr: string };

export type RunOptions = {
  cwd?: string;
  env?: Record<string, string> /** written to its stdin (else it has none) */;
  stdin?: string;
};

/** Starts `command` with `args`, its output piped; `env` is added to this process's environment. */
export function start(
  command: string[],
  args: string[],
  options: RunOptions = {},
): Subprocess<"ignore", "pipe", "pipe"> {
  return spawn([...command, ...args], {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
}

/** Runs `command` with `args` to its end. */
export async function run(command: string[], args: string[], options: RunOptions = {}): Promise<Result> {
  const proc =
    options.stdin === undefined
      ? start(command, args, options)
      : spawn([...command, ...args], {
          cwd: options.cwd,
          env: { ...process.env, ...options.env },
          stdin: new Blob([options.stdin]),
          stdout: "pipe",
          stderr: "pipe",
        });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

/** A new API token, made with the CLI in `dataDir` (and the database with it, if there is none yet: --init). */
export async function newToken(dataDir: string, name: string): Promise<string> {
  return lastLine((await run(PROGRAM, ["token", "create", "--name", name, "--data-dir", dataDir, "--init"])).stdout);
}

/** What a process writes on one of its pipes, collected as it comes. */
export function collect(stream: ReadableStream<Uint8Array>) {
  let text = "";
  let ended = false;
  const waiting = new Set<() => void>();
  const wake = () => {
    for (const resolve of waiting) resolve();
  };
  void (async () => {
    const reader = stream.getReader();
    const decoder = new TextDecoder();
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true as const }));
      if (done) break;
      text += decoder.decode(value, { stream: true });
      wake();
    }
    ended = true;
    wake();
  })();
  return {
    text: () => text,
    /** The first match of `pattern` in what was written; rejects if the pipe closes first, or after `timeoutMs`. */
    async waitFor(pattern: RegExp, timeoutMs = 30_000): Promise<RegExpExecArray> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const match = pattern.exec(text);
        if (match) return match;
        if (ended) throw new Error(`closed without ${pattern}:\n${text}`);
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no ${pattern} within ${timeoutMs} ms:\n${text}`);
        let wakeMe = () => {};
        const timer = setTimeout(() => wakeMe(), left);
        await new Promise<void>((resolve) => waiting.add((wakeMe = resolve)));
        clearTimeout(timer);
        waiting.delete(wakeMe);
      }
    },
  };
}

export type ServerProcess = {
  url: string;
  proc: Subprocess<"ignore", "pipe", "pipe">;
  logs: () => string;
  stop: (signal?: NodeJS.Signals) => Promise<number>;
};

/** Starts `serve` on an ephemeral port and resolves once it logs that it listens. */
export function serve(command: string[], args: string[], options: RunOptions = {}): Promise<ServerProcess> {
  return listen([...command, "serve", "--port", "0", "--host", "127.0.0.1", ...args], options);
}

/** Runs `argv`, a command line that starts the server, and resolves once it logs that it listens. */
export async function listen(argv: string[], options: RunOptions = {}): Promise<ServerProcess> {
  const proc = start(argv, [], options);
  const logs = collect(proc.stderr);
  // A start takes a second here, and tens of seconds on a machine busy with much else.
  const [, url] = await logs.waitFor(/"msg":"listening","url":"([^"]+)"/, 60_000).catch((error: Error) => {
    proc.kill();
    throw new Error(`server did not start: ${error.message}`);
  });
  return {
    url: url!,
    proc,
    logs: logs.text,
    stop: async (signal = "SIGTERM") => {
      proc.kill(signal);
      return proc.exited;
    },
  };
}

export const lastLine = (text: string) => text.trim().split("\n").at(-1)!.trim();
