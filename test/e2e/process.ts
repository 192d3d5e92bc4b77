// Running Signalboard as a user does: as a process (from source or the compiled binary), with its
// CLI, reading what it prints.
import { type Subprocess, spawn } from "bun";
import { join } from "node:path";

export const ROOT = join(import.meta.dir, "../..");
export const FROM_SOURCE = [process.execPath, join(ROOT, "src/main.ts")];

export type Result = { code: number; stdout: string; stderr: string };

export async function run(command: string[], args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<Result> {
  const proc = spawn([...command, ...args], { cwd: options.cwd, env: { ...process.env, ...options.env }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

export type ServerProcess = { url: string; proc: Subprocess<"ignore", "pipe", "pipe">; logs: () => string; stop: (signal?: NodeJS.Signals) => Promise<number> };

/** Starts `serve` on an ephemeral port and resolves once it logs that it listens. */
export function serve(command: string[], args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<ServerProcess> {
  return listen([...command, "serve", "--port", "0", "--host", "127.0.0.1", ...args], options);
}

/** Runs `argv`, a command line that starts the server, and resolves once it logs that it listens. */
export async function listen(argv: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<ServerProcess> {
  const proc = spawn(argv, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdout: "pipe",
    stderr: "pipe",
  });
  let logs = "";
  const reader = proc.stderr.getReader();
  const decoder = new TextDecoder();
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${logs}`)), 10_000);
    void (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        logs += decoder.decode(value);
        const match = /"msg":"listening","url":"([^"]+)"/.exec(logs);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      }
      clearTimeout(timer);
      reject(new Error(`server exited:\n${logs}`));
    })().catch(() => {});
  });
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) break;
      logs += decoder.decode(value);
    }
  })();
  return {
    url,
    proc,
    logs: () => logs,
    stop: async (signal = "SIGTERM") => {
      proc.kill(signal);
      return proc.exited;
    },
  };
}

export const lastLine = (text: string) => text.trim().split("\n").at(-1)!.trim();
