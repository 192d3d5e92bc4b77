// install.sh, the production installer, run for real into a staging root (--root): the files it
// writes, re-runs that keep the operator's settings, the pre-upgrade backup (with the old binary on
// SQLite, pg_dump on PostgreSQL), uninstalling, and its command line. (The systemd half, users and systemctl, needs a real
// host; --root mode only prints it.)
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { tempDir, withDatabase } from "../helpers.ts";
import { type Cluster, createDatabase, dropDatabase, postgresBin, startCluster } from "../pg-cluster.ts";
import { ROOT, type Result, run } from "./process.ts";

const INSTALL = join(ROOT, "install.sh");
const BIN = "usr/local/bin/signalboard";
const DATA = "var/lib/signalboard";
const ENV_FILE = "etc/signalboard/signalboard.env";
const UNIT = "etc/systemd/system/signalboard.service";

let buildDir: string;
let binary: string;
let version: string;
const roots: string[] = [];

beforeAll(async () => {
  buildDir = tempDir("signalboard-install-build-");
  binary = join(buildDir, "signalboard");
  const built = await run([process.execPath, join(ROOT, "scripts/build.ts")], [binary], { cwd: ROOT });
  if (built.code !== 0) throw new Error(`build failed:\n${built.stdout}\n${built.stderr}`);
  version = (await run([binary], ["version"])).stdout.trim();
});

afterAll(() => {
  for (const dir of [buildDir, ...roots]) if (dir) rmSync(dir, { recursive: true, force: true });
});

function stagingRoot(): string {
  const dir = tempDir("signalboard-root-");
  roots.push(dir);
  return dir;
}

/** Runs install.sh from a neutral directory, so nothing depends on the working directory. */
function install(args: string[]): Promise<Result> {
  return run(["bash", INSTALL], args, { cwd: buildDir });
}

function expectOk(result: Result): void {
  if (result.code !== 0)
    throw new Error(`install.sh exited ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
}

const mode = (path: string) => statSync(path).mode & 0o777;
const lines = (text: string) => text.split("\n").map((l) => l.trim());

/** KEY=value lines of an environment file, comments and blanks left out. */
function assignments(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of lines(text)) {
    if (!line || line.startsWith("#")) continue;
    const eq = line.indexOf("=");
    out[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return out;
}

/** Every path under dir with its mode, and for files a hash of the contents. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (path: string) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const full = join(path, entry.name);
      const rel = relative(dir, full);
      if (entry.isDirectory()) {
        out[rel] = `dir ${mode(full).toString(8)}`;
        walk(full);
      } else {
        out[rel] = `file ${mode(full).toString(8)} ${createHash("sha256").update(readFileSync(full)).digest("hex")}`;
      }
    }
  };
  walk(dir);
  return out;
}

const HARDENING = [
  "NoNewPrivileges=yes",
  "ProtectSystem=strict",
  "ReadWritePaths=/var/lib/signalboard",
  "ProtectHome=yes",
  "PrivateTmp=yes",
  "PrivateDevices=yes",
  "ProtectKernelTunables=yes",
  "ProtectKernelModules=yes",
  "ProtectKernelLogs=yes",
  "ProtectControlGroups=yes",
  "ProtectClock=yes",
  "ProtectHostname=yes",
  "RestrictNamespaces=yes",
  "RestrictRealtime=yes",
  "RestrictSUIDSGID=yes",
  "LockPersonality=yes",
  "SystemCallArchitectures=native",
  "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX",
  "UMask=0027",
];
const SERVICE = [
  "[Unit]",
  "After=network-online.target",
  "Wants=network-online.target",
  "[Service]",
  "Type=simple",
  "User=signalboard",
  "Group=signalboard",
  "EnvironmentFile=/etc/signalboard/signalboard.env",
  "ExecStart=/usr/local/bin/signalboard serve",
  "WorkingDirectory=/var/lib/signalboard",
  "Restart=on-failure",
  "RestartSec=2",
  "KillSignal=SIGTERM",
  "TimeoutStopSec=10",
  "LimitNOFILE=65536",
  "[Install]",
  "WantedBy=multi-user.target",
];

describe("install.sh --root: a staged install, re-run, upgraded and removed", () => {
  let root: string;
  const args = () => [
    "--root",
    root,
    "--binary",
    binary,
    "--no-start",
    "--port",
    "8080",
    "--base-url",
    "https://sb.example.com",
  ];

  beforeAll(() => {
    root = stagingRoot();
  });

  test("installs the binary, the settings file and the unit", async () => {
    const result = await install(args());
    expectOk(result);
    expect(result.stdout).toContain("signalboard-install:");
    expect(result.stdout).toContain("would run: systemctl daemon-reload");
    expect(result.stdout).not.toContain("would run: systemctl restart"); // --no-start

    // The binary: executable, and it runs.
    const staged = join(root, BIN);
    expect(mode(staged)).toBe(0o755);
    const ran = await run([staged], ["version"]);
    expect(ran.code).toBe(0);
    expect(ran.stdout.trim()).toBe(version);
    expect(readdirSync(join(root, "usr/local/bin"))).toEqual(["signalboard"]); // no temp files left

    // Directories.
    expect(mode(join(root, DATA))).toBe(0o750);
    expect(mode(join(root, "etc/signalboard"))).toBe(0o750);

    // The settings file: exactly these settings, private to root and the service's group.
    const env = readFileSync(join(root, ENV_FILE), "utf8");
    expect(mode(join(root, ENV_FILE))).toBe(0o640);
    expect(assignments(env)).toEqual({
      PORT: "8080",
      HOST: "0.0.0.0",
      DATA_DIR: "/var/lib/signalboard",
      BASE_URL: "https://sb.example.com",
    });
    for (const name of [
      "SIGNALBOARD_TRUST_PROXY",
      "SIGNALBOARD_LOG_LEVEL",
      "SIGNALBOARD_SQLITE_SYNC",
      "SIGNALBOARD_VAPID_SUBJECT",
    ]) {
      expect(env).toMatch(new RegExp(`^# ${name}=`, "m"));
    }

    // The unit: every directive, the real paths (not the staging root), no MemoryDenyWriteExecute.
    const unit = readFileSync(join(root, UNIT), "utf8");
    expect(mode(join(root, UNIT))).toBe(0o644);
    const unitLines = lines(unit);
    for (const line of [...SERVICE, ...HARDENING, "CapabilityBoundingSet="]) expect(unitLines).toContain(line);
    expect(unit).not.toMatch(/^\s*MemoryDenyWriteExecute/m);
    expect(unit).not.toMatch(/^\s*AmbientCapabilities/m);
    expect(unit).toContain("systemctl edit signalboard");
    expect(unit).not.toContain(root);
    expect(env).not.toContain(root);
  });

  // Shown as skipped where systemd-analyze is not installed.
  test.skipIf(!Bun.which("systemd-analyze"))(
    "the unit passes systemd-analyze verify",
    async () => {
      // verify also checks that ExecStart exists: check a copy that points at the staged binary.
      const dir = stagingRoot();
      const unit = readFileSync(join(root, UNIT), "utf8").replace(
        "ExecStart=/usr/local/bin/signalboard",
        `ExecStart=${join(root, BIN)}`,
      );
      const verify = async (text: string) => {
        writeFileSync(join(dir, "signalboard.service"), text);
        const result = await run(["systemd-analyze"], ["verify", join(dir, "signalboard.service")]);
        const about = result.stderr.split("\n").filter((l) => l.includes("signalboard.service"));
        return { code: result.code, about, stderr: result.stderr };
      };
      const good = await verify(unit);
      expect(good.about).toEqual([]);
      expect(good.code).toBe(0);
      // The check is real: an unknown key or a bad value in the same file is reported.
      const bad = await verify(unit.replace("RestartSec=2", "RestartSec=2\nNoSuchKey=yes\nTimeoutStopSec=soon"));
      expect(bad.stderr).toContain("NoSuchKey");
      expect(bad.stderr).toContain("soon");
    },
    60_000,
  );

  test("running it again changes nothing", async () => {
    const before = snapshot(root);
    const again = await install(args());
    expectOk(again);
    expect(again.stdout).toContain("kept the existing settings");
    expect(snapshot(root)).toEqual(before);
  });

  test("a re-run never overwrites the operator's settings", async () => {
    const envPath = join(root, ENV_FILE);
    const edited =
      readFileSync(envPath, "utf8").replace("BASE_URL=https://sb.example.com", "BASE_URL=https://edited.example.com") +
      "SIGNALBOARD_TRUST_PROXY=127.0.0.1\n";
    writeFileSync(envPath, edited);
    const again = await install([
      "--root",
      root,
      "--binary",
      binary,
      "--no-start",
      "--port",
      "9090",
      "--base-url",
      "https://other.example.com",
    ]);
    expectOk(again);
    expect(again.stdout).toContain("kept the existing settings");
    expect(again.stderr).toContain("--port 9090 ignored");
    expect(readFileSync(envPath, "utf8")).toBe(edited);
    expect(assignments(edited).SIGNALBOARD_TRUST_PROXY).toBe("127.0.0.1");
    expect(mode(envPath)).toBe(0o640);
    // The unit follows the settings file's port (8080: no capability needed).
    expect(lines(readFileSync(join(root, UNIT), "utf8"))).toContain("CapabilityBoundingSet=");
  });

  test("an upgrade first backs the database up with the installed binary", async () => {
    const dataDir = join(root, DATA);
    const created = await run([join(root, BIN)], ["token", "create", "--name", "x", "--data-dir", dataDir, "--init"]);
    expect(created.code).toBe(0);
    expect(existsSync(join(dataDir, "signalboard.db"))).toBe(true);
    expect(existsSync(join(dataDir, "backups"))).toBe(false);

    const upgrade = await install(args());
    expectOk(upgrade);
    const backups = readdirSync(join(dataDir, "backups"));
    expect(backups).toHaveLength(1);
    const name = backups[0]!;
    expect(name).toMatch(new RegExp(`^pre-upgrade-${version.replace(/\./g, "\\.")}-\\d{8}T\\d{6}Z\\.db$`));
    expect(upgrade.stdout).toContain(name);
    expect(mode(join(dataDir, "backups"))).toBe(0o750);

    withDatabase(join(dataDir, "backups", name), (db) => {
      expect(db.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
      expect(db.query("SELECT count(*) AS n FROM api_tokens").get()).toEqual({ n: 1 });
      expect(db.query("SELECT name FROM api_tokens").get()).toEqual({ name: "x" });
    });
    // The live database is untouched, and the new binary still reads it.
    const list = await run([join(root, BIN)], ["token", "list", "--data-dir", dataDir]);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain("x");
  });

  test("--uninstall removes the binary and the unit, keeps data and settings", async () => {
    const result = await install(["--uninstall", "--root", root]);
    expectOk(result);
    expect(existsSync(join(root, BIN))).toBe(false);
    expect(existsSync(join(root, UNIT))).toBe(false);
    expect(existsSync(join(root, ENV_FILE))).toBe(true);
    expect(existsSync(join(root, DATA, "signalboard.db"))).toBe(true);
    expect(readdirSync(join(root, DATA, "backups"))).toHaveLength(1);
    expect(result.stdout).toContain("kept");
    // Again: nothing left to remove is not an error.
    expectOk(await install(["--uninstall", "--root", root]));
  });

  test("--uninstall --purge asks first: without a terminal to ask at, nothing is removed unless --yes", async () => {
    expectOk(await install(args())); // installed again, on the kept data
    const before = snapshot(root);
    const refused = await install(["--uninstall", "--purge", "--root", root]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain(`--purge deletes for good: ${join(root, DATA)}`);
    expect(refused.stdout).toContain("1 backup file(s)");
    expect(refused.stderr).toContain(
      "nothing was removed: --purge asks before deleting, and there is no terminal to ask at; add --yes to confirm",
    );
    expect(snapshot(root)).toEqual(before);
  });

  // Shown as skipped where util-linux's script (a terminal for the installer to ask at) is missing.
  test.skipIf(!Bun.which("script"))(
    "--uninstall --purge at a terminal deletes only when told yes",
    async () => {
      const before = snapshot(root);
      const atTerminal = (answer: string) =>
        run(["script"], ["-qefc", `bash ${INSTALL} --uninstall --purge --root ${root}`, "/dev/null"], {
          cwd: buildDir,
          stdin: `${answer}\n`,
        });
      const no = await atTerminal("no");
      expect(no.code).toBe(1);
      expect(no.stdout).toContain("type yes to delete them:");
      expect(no.stdout).toContain("nothing was removed (the answer was 'no', not yes)");
      expect(snapshot(root)).toEqual(before);
      const yes = await atTerminal("yes");
      expect(yes.code).toBe(0);
      expect(yes.stdout).toContain("uninstalled and purged");
      expect(existsSync(join(root, DATA))).toBe(false);
      expectOk(await install(args())); // for the next test
    },
    60_000,
  );

  test("--uninstall --purge --yes deletes data and settings", async () => {
    const result = await install(["--uninstall", "--purge", "--yes", "--root", root]);
    expectOk(result);
    for (const path of [BIN, UNIT, ENV_FILE, DATA, "etc/signalboard"]) expect(existsSync(join(root, path))).toBe(false);
    expect(result.stdout).toContain("purged");
  });
});

describe("install.sh options", () => {
  test("a port below 1024 gets CAP_NET_BIND_SERVICE; the base URL defaults to the host name", async () => {
    const root = stagingRoot();
    expectOk(await install(["--root", root, "--binary", binary, "--port", "80"]));
    const unitLines = lines(readFileSync(join(root, UNIT), "utf8"));
    expect(unitLines).toContain("AmbientCapabilities=CAP_NET_BIND_SERVICE");
    expect(unitLines).toContain("CapabilityBoundingSet=CAP_NET_BIND_SERVICE");
    expect(unitLines).not.toContain("CapabilityBoundingSet=");
    const env = assignments(readFileSync(join(root, ENV_FILE), "utf8"));
    expect(env.PORT).toBe("80");
    expect(env.BASE_URL).toMatch(/^http:\/\/[^\s/:]+:80$/);
  });

  test("a binary that does not run is refused before anything is installed", async () => {
    const root = stagingRoot();
    const fake = stagingRoot();
    writeFileSync(join(fake, "signalboard"), "#!/bin/sh\nexit 1\n", { mode: 0o755 });
    const result = await install(["--root", root, "--binary", join(fake, "signalboard"), "--no-start"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("signalboard-install: error:");
    expect(result.stderr).toContain("does not run");
    expect(existsSync(join(root, BIN))).toBe(false);
    expect(existsSync(join(root, UNIT))).toBe(false);
  });

  test("--help prints the usage and exits 0", async () => {
    const result = await install(["--help"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("usage: install.sh");
    for (const option of [
      "--binary",
      "--root",
      "--port",
      "--base-url",
      "--no-start",
      "--no-backup",
      "--uninstall",
      "--purge",
      "--yes",
    ])
      expect(result.stdout).toContain(option);
  });

  test("--root warns that BASE_URL names the build host, and that HOST=0.0.0.0 is plain HTTP on every interface", async () => {
    const named = await install(["--root", stagingRoot(), "--binary", binary, "--no-start"]);
    expectOk(named);
    expect(named.stderr).toMatch(
      /signalboard-install: warning: BASE_URL=http:\/\/\S+:8080 names this build host, not the machine the image will run on/,
    );
    expect(named.stderr).toContain(
      "signalboard-install: warning: HOST=0.0.0.0: the server answers plain HTTP on every interface",
    );
    const given = await install([
      "--root",
      stagingRoot(),
      "--binary",
      binary,
      "--no-start",
      "--base-url",
      "https://sb.example.com",
    ]);
    expectOk(given);
    expect(given.stderr).not.toContain("BASE_URL=");
    expect(given.stderr).toContain("HOST=0.0.0.0");
  });

  test("--no-backup upgrades without the backup, and says so", async () => {
    const root = stagingRoot();
    expectOk(await install(["--root", root, "--binary", binary, "--no-start", "--base-url", "https://sb.example.com"]));
    expect(
      (await run([join(root, BIN)], ["token", "create", "--name", "x", "--data-dir", join(root, DATA), "--init"])).code,
    ).toBe(0);
    const upgraded = await install(["--root", root, "--binary", binary, "--no-start", "--no-backup"]);
    expectOk(upgraded);
    expect(upgraded.stderr).toContain("not backing up /var/lib/signalboard/signalboard.db first (--no-backup)");
    expect(existsSync(join(root, DATA, "backups"))).toBe(false);
  });

  test("an unknown option or a bad value exits 2 with a message", async () => {
    const unknown = await install(["--frobnicate"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("signalboard-install: unknown option: --frobnicate");
    const root = stagingRoot();
    for (const bad of [
      ["--port", "http"],
      ["--port", "70000"],
      ["--base-url", "sb.example.com"],
      ["--purge"],
      ["--yes"],
      ["--uninstall", "--yes"],
      ["--binary"],
    ]) {
      const result = await install(["--root", root, ...bad]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain("signalboard-install:");
    }
    expect(readdirSync(root)).toEqual([]); // nothing written
  });

  // Shown as skipped where shellcheck is not installed.
  test.skipIf(!Bun.which("shellcheck"))(
    "is shellcheck clean",
    async () => {
      const result = await run(["shellcheck"], [INSTALL]);
      expect(result.stdout + result.stderr).toBe("");
      expect(result.code).toBe(0);
    },
    60_000,
  );
});

// Shown as skipped where PostgreSQL is not installed (apt-get install -y postgresql).
describe.skipIf(!postgresBin())("install.sh upgrading a service on PostgreSQL", () => {
  let cluster: Cluster | null = null;
  let database: string;
  let root: string;
  let clusterUrl: string;

  beforeAll(async () => {
    clusterUrl = process.env.SIGNALBOARD_TEST_POSTGRES || (cluster = await startCluster()).url;
    database = await createDatabase(clusterUrl);
    root = stagingRoot();
    expectOk(await install(["--root", root, "--binary", binary, "--no-start", "--base-url", "https://sb.example.com"]));
    // As docs/scale-out.md says: the URL (a password in it, percent-encoded) in a file the settings name.
    const withPassword = database.replace("postgres://signalboard@", "postgres://signalboard:p%40ss@");
    writeFileSync(join(root, "etc/signalboard/database-url"), `${withPassword}\n`, { mode: 0o640 });
    writeFileSync(
      join(root, ENV_FILE),
      `${readFileSync(join(root, ENV_FILE), "utf8")}DATABASE_URL_FILE=/etc/signalboard/database-url\n`,
    );
    expect(
      (await run([join(root, BIN)], ["token", "create", "--name", "on-postgres", "--database-url", database])).code,
    ).toBe(0);
  });
  afterAll(async () => {
    await dropDatabase(clusterUrl, database).catch(() => {});
    await cluster?.stop();
  });

  test("an upgrade first backs the database up with pg_dump, into the data directory's backups", async () => {
    const upgrade = await install(["--root", root, "--binary", binary, "--no-start"]);
    expectOk(upgrade);
    const backups = readdirSync(join(root, DATA, "backups"));
    expect(backups).toHaveLength(1);
    expect(backups[0]).toMatch(new RegExp(`^pre-upgrade-${version.replace(/\./g, "\\.")}-\\d{8}T\\d{6}Z\\.dump$`));
    expect(upgrade.stdout).toContain("backing up the PostgreSQL database with pg_dump");
    expect(upgrade.stdout).toContain(`backup: ${join(root, DATA, "backups", backups[0]!)}`);
    expect(mode(join(root, DATA, "backups", backups[0]!)) & 0o007).toBe(0);
    // A real dump of that database: pg_restore reads its table of contents, the tokens' rows in it.
    const listed = await run(["pg_restore"], ["--list", join(root, DATA, "backups", backups[0]!)]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain("TABLE DATA public api_tokens");
    expect(upgrade.stdout + upgrade.stderr).not.toContain("p%40ss");
  });

  test("without pg_dump it stops before changing anything and says how to go on; --no-backup goes on", async () => {
    // This host's programs, less pg_dump.
    const bin = stagingRoot();
    for (const dir of ["/usr/bin", "/usr/sbin"]) {
      for (const name of readdirSync(dir))
        if (name !== "pg_dump" && !existsSync(join(bin, name))) symlinkSync(join(dir, name), join(bin, name));
    }
    const env = { PATH: bin };
    const before = snapshot(root);
    const stopped = await run(["/bin/bash", INSTALL], ["--root", root, "--binary", binary, "--no-start"], {
      cwd: buildDir,
      env,
    });
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toContain(
      "the service uses PostgreSQL, and pg_dump is not installed here to back it up before the upgrade",
    );
    expect(stopped.stderr).toContain("apt-get install postgresql-client");
    expect(stopped.stderr).toContain("re-run with --no-backup. Nothing was changed.");
    expect(snapshot(root)).toEqual(before);
    const going = await run(["/bin/bash", INSTALL], ["--root", root, "--binary", binary, "--no-start", "--no-backup"], {
      cwd: buildDir,
      env,
    });
    expectOk(going);
    expect(going.stderr).toContain("not backing up the PostgreSQL database first (--no-backup)");
  });
});
