// The server as the quick start runs it, through npm: `PORT=N npm start`, `npm start -- --port N`
// and `npx bun src/main.ts serve` listen where they are told, and a SIGTERM to the npm process
// stops the server with it: its port is free again and no process it started is left.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { eventually, tempDir } from "../helpers.ts";
import { listen, ROOT, type RunOptions } from "./process.ts";

const NPM = Bun.which("npm");
if (!NPM) console.warn("npm is not installed: the npm start tests are skipped");

/** What npm needs here: no question to the registry about its own updates. */
const QUIET_NPM = { NO_UPDATE_NOTIFIER: "1", npm_config_update_notifier: "false", npm_config_fund: "false" };

/** The state letter of a process (Z: a zombie, as good as gone), or null when there is none. */
function stateOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  } catch {
    return null;
  }
}

const running = (pid: number) => ![null, "Z", "X"].includes(stateOf(pid));

/** Every process below `pid` (its children, theirs, ...), read from /proc. */
function descendants(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length) {
    const parent = queue.shift()!;
    for (const [child, of] of parents)
      if (of === parent) {
        found.push(child);
        queue.push(child);
      }
  }
  return found;
}

async function freePort(): Promise<number> {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

async function portFree(port: number): Promise<boolean> {
  try {
    const probe = Bun.listen({ hostname: "127.0.0.1", port, socket: { data() {} } });
    probe.stop(true);
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts `argv` (npm, which starts the server), checks it listens on `port` when given, sends
 * SIGTERM to npm alone, and waits for the server's port to be free and every process under npm
 * to be gone. Whatever is left at the deadline is killed, so a failure leaves nothing running.
 */
async function stopsWithNpm(argv: string[], env: Record<string, string>, port?: number): Promise<void> {
  const dir = tempDir();
  const options: RunOptions = { cwd: ROOT, env: { ...QUIET_NPM, HOST: "127.0.0.1", DATA_DIR: dir, ...env } };
  const npm = await listen(argv, options);
  let tree: number[] = [];
  try {
    const listening = Number(new URL(npm.url).port);
    if (port !== undefined) expect(listening).toBe(port);
    const answer = await fetch(`${npm.url}/healthz`);
    expect(answer.status).toBe(200);
    tree = descendants(npm.proc.pid);
    expect(tree.length).toBeGreaterThan(0); // the shell npm runs, and the server under it
    npm.proc.kill("SIGTERM");
    await npm.proc.exited;
    await eventually(async () => {
      expect(tree.filter(running).map((pid) => `${pid} ${stateOf(pid)}`)).toEqual([]);
      expect(await portFree(listening)).toBe(true);
    }, 20_000);
  } finally {
    for (const pid of [npm.proc.pid, ...tree].filter(running)) process.kill(pid, "SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.skipIf(!NPM)("npm start", () => {
  test("PORT=N npm start listens on N; a SIGTERM to npm stops the server", async () => {
    const port = await freePort();
    await stopsWithNpm([NPM!, "start"], { PORT: String(port) }, port);
  });

  test("npm start -- --port N listens on N; a SIGTERM to npm stops the server", async () => {
    const port = await freePort();
    await stopsWithNpm([NPM!, "start", "--", "--port", String(port)], {}, port);
  });

  test("npx bun src/main.ts serve: a SIGTERM to npx stops the server", async () => {
    await stopsWithNpm([Bun.which("npx") ?? "npx", "bun", "src/main.ts", "serve"], { PORT: "0" });
  });
});
