// A throwaway PostgreSQL cluster for tests: initdb into a temporary directory, started on a free
// port of 127.0.0.1 (nothing else listens to it), stopped and deleted afterwards. PostgreSQL
// refuses to run as root, so as root the cluster runs as the `postgres` user Debian's package makes.
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { SQL } from "bun";
import { MIGRATIONS, migrate } from "../src/store/pg/migrate.ts";

export type Cluster = {
  url: string;
  /** Stops the server, keeping its data (a database outage)... */
  pause: () => Promise<void>;
  /** ...and starts it again on the same port. */
  resume: () => Promise<void>;
  /** Kills the server as a power cut would (immediate shutdown: no checkpoint, WAL not flushed); resume() recovers it. */
  crash: () => Promise<void>;
  stop: () => Promise<void>;
  /** The CPU its server has used, in seconds: the postmaster's and its ended backends' (Linux). */
  cpuSeconds: () => number;
};

/** The directory of initdb and pg_ctl, or null when PostgreSQL is not installed. */
export function postgresBin(): string | null {
  const onPath = Bun.which("initdb");
  if (onPath && Bun.which("pg_ctl")) return dirname(onPath);
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? join(root, versions[0]!, "bin") : null;
}

function freePort(): number {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

export async function startCluster(): Promise<Cluster> {
  const bin = postgresBin();
  if (!bin) throw new Error("PostgreSQL is not installed (apt-get install -y postgresql)");
  const dir = mkdtempSync(join(tmpdir(), "signalboard-pg-"));
  const asRoot = process.getuid?.() === 0;
  const owner = asRoot ? Number((await Bun.$`id -u postgres`.text()).trim()) : null;
  if (owner !== null) chownSync(dir, owner, Number((await Bun.$`id -g postgres`.text()).trim()));
  const run = (args: string[]) => (asRoot ? ["runuser", "-u", "postgres", "--", ...args] : args);
  const data = join(dir, "data");
  const init = Bun.spawnSync(
    run([
      join(bin, "initdb"),
      "-D",
      data,
      "-U",
      "signalboard",
      "--auth=trust",
      "-E",
      "UTF8",
      "--locale=C.UTF-8",
      "--no-sync",
    ]),
    { stderr: "pipe", stdout: "ignore" },
  );
  if (init.exitCode !== 0) throw new Error(`initdb failed: ${init.stderr.toString()}`);
  const port = freePort();
  // fsync stays on: the tests check what survives a kill, and that is what an operator runs. What
  // only a machine's crash needs is off: full pages in the WAL after each checkpoint (a killed
  // server leaves no torn page; the kernel holds what it wrote), the WAL a replica would read, and
  // checkpoints every few hundred MB: with them, the server spent twice the CPU on the tests that
  // write a hundred thousand events.
  const options = [
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=400 -c shared_buffers=256MB`,
    "-c full_page_writes=off -c wal_level=minimal -c max_wal_senders=0 -c max_wal_size=4GB -c checkpoint_timeout=30min",
  ].join(" ");
  const start = () => {
    const started = Bun.spawnSync(
      run([join(bin, "pg_ctl"), "-D", data, "-o", options, "-l", join(dir, "log"), "-w", "-t", "60", "start"]),
      { stderr: "pipe", stdout: "ignore" },
    );
    if (started.exitCode !== 0) throw new Error(`pg_ctl start failed: ${started.stderr.toString()}`);
  };
  start();
  const url = `postgres://signalboard@127.0.0.1:${port}/postgres`;
  return {
    url,
    async pause() {
      Bun.spawnSync(run([join(bin, "pg_ctl"), "-D", data, "-m", "fast", "-w", "stop"]), {
        stderr: "ignore",
        stdout: "ignore",
      });
    },
    async resume() {
      start();
    },
    async crash() {
      // SIGQUIT to the postmaster is an immediate shutdown, sent at once (pg_ctl would take a while to start).
      const pid = Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]);
      process.kill(pid, "SIGQUIT");
      while (existsSync(join(data, "postmaster.pid"))) await Bun.sleep(10);
    },
    cpuSeconds() {
      try {
        const pid = readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0];
        // /proc/PID/stat: after the command's closing parenthesis, utime stime cutime cstime are fields 12-15.
        const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
        return fields.slice(11, 15).reduce((n, ticks) => n + Number(ticks), 0) / 100;
      } catch {
        return 0;
      }
    },
    async stop() {
      Bun.spawnSync(run([join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"]), {
        stderr: "ignore",
        stdout: "ignore",
      });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

let made = 0;

/** A new, empty database in the cluster at `clusterUrl`; its URL. */
export async function createDatabase(clusterUrl: string, prefix = "t"): Promise<string> {
  const name = `${prefix}_${process.pid}_${++made}_${Date.now() % 100000}`;
  const admin = new SQL(clusterUrl, { max: 1 });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.close();
  }
  return clusterUrl.replace(/\/[^/]*$/, `/${name}`);
}

/** Drops a database made by createDatabase, ending the connections still open to it. */
export async function dropDatabase(clusterUrl: string, url: string): Promise<void> {
  const name = url.slice(url.lastIndexOf("/") + 1);
  const admin = new SQL(clusterUrl, { max: 1 });
  try {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await admin.close();
  }
}

/** The template of migrated databases: named by the migrations it holds, so a change to them makes another. */
const TEMPLATE = `signalboard_template_${Bun.hash(Object.entries(MIGRATIONS).flat().join("\n")).toString(36)}`;
/** Any number, the same in every process: the lock under which the template is made, once per cluster. */
const TEMPLATE_LOCK = 0x5167_7470;

/**
 * A new database with the schema already migrated: a copy of a template made once per cluster
 * (copying it takes a fraction of what running the migrations takes). For a test server; a test
 * of the migrations themselves uses createDatabase.
 */
export async function createMigratedDatabase(clusterUrl: string): Promise<string> {
  const admin = new SQL(clusterUrl, { max: 1 });
  try {
    const exists = async () =>
      ((await admin`SELECT 1 FROM pg_database WHERE datname = ${TEMPLATE}`) as unknown[]).length > 0;
    if (!(await exists())) {
      await admin`SELECT pg_advisory_lock(${TEMPLATE_LOCK})`;
      try {
        if (!(await exists())) {
          // Made under another name and renamed once whole: a process stopped half-way leaves no template.
          const making = await createDatabase(clusterUrl, "template_making");
          const sql = new SQL(making, { max: 1 });
          try {
            await migrate(sql);
          } finally {
            await sql.close();
          }
          await admin.unsafe(`ALTER DATABASE ${making.slice(making.lastIndexOf("/") + 1)} RENAME TO ${TEMPLATE}`);
        }
      } finally {
        await admin`SELECT pg_advisory_unlock(${TEMPLATE_LOCK})`;
      }
    }
    const name = `t_${process.pid}_${++made}_${Date.now() % 100000}`;
    await admin.unsafe(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE}`);
    return clusterUrl.replace(/\/[^/]*$/, `/${name}`);
  } finally {
    await admin.close();
  }
}
