// The command line as an operator meets it on a server: settings from a file (--env-file), a data
// directory without a database refused unless --init, and mistakes said in plain words.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir, withDatabase } from "../helpers.ts";
import { startReceiver } from "../receiver.ts";
import { PROGRAM, lastLine, listen, run, type ServerProcess, serve } from "./process.ts";

let dataDir: string;
let server: ServerProcess;
let files: string;

beforeAll(async () => {
  dataDir = tempDir();
  files = tempDir();
  server = await serve(PROGRAM, ["--data-dir", dataDir]);
});
afterAll(async () => {
  await server.stop();
  for (const dir of [dataDir, files]) rmSync(dir, { recursive: true, force: true });
});

function envFile(name: string, text: string): string {
  const path = join(files, name);
  writeFileSync(path, text);
  return path;
}

describe("--env-file", () => {
  test("management commands read the server's settings from it, before or after the command", async () => {
    const file = envFile(
      "server.env",
      `# as install.sh writes it\nPORT=8080\nHOST=0.0.0.0\nDATA_DIR=${dataDir}\nBASE_URL="https://sb.example.com"\n\n`,
    );
    const created = await run(PROGRAM, ["token", "create", "--name", "from-env-file", "--env-file", file], {
      cwd: files,
    });
    expect(created.stderr).toBe("");
    expect(created.code).toBe(0);
    const token = lastLine(created.stdout);
    const posted = await fetch(`${server.url}/v1/log`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ project: "default", channel: "c", event: "e" }),
    });
    expect(posted.status).toBe(200); // the token is the running server's
    const listed = await run(PROGRAM, ["--env-file", file, "token", "list"], { cwd: files });
    expect(listed.stdout).toContain("from-env-file");
    // A flag still wins over the file.
    const elsewhere = await run(PROGRAM, ["token", "list", "--env-file", file, "--data-dir", join(files, "none")]);
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.stderr).toContain(`there is no database in ${join(files, "none")}`);
  });

  test("serve and healthcheck read it too", async () => {
    const dir = tempDir();
    const file = envFile("serve.env", `PORT=0\nHOST=127.0.0.1\nDATA_DIR=${dir}\nSIGNALBOARD_LOG_LEVEL=info\n`);
    const started = await listen([...PROGRAM, "serve", "--env-file", file]);
    try {
      expect(started.logs()).toContain(`"dataDir":"${dir}"`);
      const port = new URL(started.url).port;
      const healthy = await run(PROGRAM, [
        "healthcheck",
        "--env-file",
        envFile("check.env", `PORT=${port}\nHOST=127.0.0.1\n`),
      ]);
      expect(healthy.code).toBe(0);
      expect(healthy.stdout).toContain(`answers at http://127.0.0.1:${port}/healthz`);
    } finally {
      await started.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("client commands take their URL and token from it", async () => {
    const token = lastLine((await run(PROGRAM, ["token", "create", "--name", "client", "--data-dir", dataDir])).stdout);
    const file = envFile("client.env", `SIGNALBOARD_URL=${server.url}\nSIGNALBOARD_TOKEN='${token}'\n`);
    const logged = await run(
      PROGRAM,
      ["log", "--env-file", file, "--project", "default", "--channel", "env", "--event", "From a file of settings"],
      { env: { SIGNALBOARD_TOKEN: "", SIGNALBOARD_URL: "" } },
    );
    expect(logged.stderr).toBe("");
    expect(logged.code).toBe(0);
  });

  test("a file that cannot be read, or a line that is not a setting, is refused (exit 2) with what is wrong", async () => {
    const missing = await run(PROGRAM, ["token", "list", "--env-file", join(files, "nope.env")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(
      `error: The settings file ${join(files, "nope.env")} (--env-file) cannot be read: there is no such file or directory (ENOENT).`,
    );
    const bad = await run(PROGRAM, [
      "token",
      "list",
      "--env-file",
      envFile("bad.env", `DATA_DIR=${dataDir}\nthis is not a setting\n`),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("line 2, is not a NAME=value setting");
  });
});

describe("a data directory without a database", () => {
  test("management commands refuse it, say what to do, and leave nothing behind; --init makes the database", async () => {
    const empty = join(files, "empty-data");
    for (const command of [
      ["token", "create", "--name", "stray"],
      ["user", "create", "alice"],
      ["project", "list"],
      ["backup"],
      ["import", "-"],
      ["alert", "list"],
    ]) {
      const refused = await run(PROGRAM, [...command, "--data-dir", empty]);
      expect(refused.code, command.join(" ")).toBe(2);
      expect(refused.stderr).toContain(`there is no database in ${empty}`);
      expect(refused.stderr).toContain("--env-file");
      expect(refused.stderr).toContain("--init");
      expect(refused.stdout).toBe("");
      expect(existsSync(empty), command.join(" ")).toBe(false);
    }
    const made = await run(PROGRAM, ["token", "create", "--name", "first", "--data-dir", empty, "--init"]);
    expect(made.code).toBe(0);
    expect(made.stderr).toContain(`Made a new, empty database in ${empty} (--init).`);
    expect(lastLine(made.stdout)).toMatch(/^sb_/);
    // Once it is there, --init changes nothing and is not needed.
    const again = await run(PROGRAM, ["token", "list", "--data-dir", empty, "--init"]);
    expect(again.stderr).toBe("");
    expect((await run(PROGRAM, ["token", "list", "--data-dir", empty])).stdout).toContain("first");
  });

  test("serve makes its database, as on a first start", async () => {
    const dir = join(files, "first-start");
    const started = await serve(PROGRAM, ["--data-dir", dir]);
    await started.stop();
    expect(existsSync(join(dir, "signalboard.db"))).toBe(true);
  });
});

describe("mistakes, in plain words", () => {
  test("a data directory that cannot be one", async () => {
    const file = envFile("not-a-directory", "");
    const cases: [string, string][] = [
      [
        "/proc/nope",
        "the data directory /proc/nope (--data-dir / DATA_DIR) does not exist and cannot be made there. Choose a directory this user may write to",
      ],
      [file, `the data directory ${file} (--data-dir / DATA_DIR) is a file, not a directory.`],
      [
        join(file, "data"),
        `the data directory ${join(file, "data")} (--data-dir / DATA_DIR) cannot be made: a part of its path is a file, not a directory.`,
      ],
    ];
    for (const [dir, said] of cases) {
      const result = await run(PROGRAM, ["serve", "--port", "0", "--host", "127.0.0.1", "--data-dir", dir]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`error: ${said}`);
      expect(result.stderr).not.toMatch(/: E[A-Z]+\s*$/m); // not ending in a bare error code
    }
  });

  test("a setting's bad value says what it must be", async () => {
    const port = await run(PROGRAM, ["serve", "--port", "abc"]);
    expect(port.code).toBe(2);
    expect(port.stderr.trim()).toBe(
      'error: PORT (--port) is "abc": it must be a whole number from 0 to 65535 (0 picks a free port).',
    );
    const several = await run(PROGRAM, ["serve"], {
      env: { PORT: "80.5", SIGNALBOARD_SQLITE_SYNC: "maybe", SIGNALBOARD_METRICS: "perhaps" },
    });
    expect(several.code).toBe(2);
    expect(several.stderr).toContain("error: 3 settings are wrong:");
    expect(several.stderr).toContain('SIGNALBOARD_SQLITE_SYNC (--sqlite-sync) is "maybe": it must be full or normal.');
    expect(several.stderr).toContain('SIGNALBOARD_METRICS (--metrics) is "perhaps": it must be true or false.');
    expect(several.stderr).not.toContain("Invalid");
  });

  test("an unknown flag or command suggests the nearest one", async () => {
    const prot = await run(PROGRAM, ["serve", "--prot", "9000"]);
    expect(prot.code).toBe(2);
    expect(prot.stderr).toContain("error: unknown option --prot; did you mean --port?");
    const before = await run(PROGRAM, ["--prot", "9000", "token", "list"]);
    expect(before.code).toBe(2);
    expect(before.stderr).toContain("--prot is not a setting; did you mean --port?");
    const own = await run(PROGRAM, ["token", "create", "--nmae", "x", "--data-dir", dataDir]);
    expect(own.stderr).toContain("unknown option --nmae; did you mean --name?");
    const command = await run(PROGRAM, ["tokn", "list"]);
    expect(command.code).toBe(2);
    expect(command.stderr).toContain('unknown command "tokn"; did you mean token?');
    const far = await run(PROGRAM, ["token", "list", "--zzzzzz"]);
    expect(far.stderr).toContain("unknown option --zzzzzz");
    expect(far.stderr).not.toContain("did you mean");
  });

  test("backup DIR/ writes a dated file inside the directory", async () => {
    const into = join(files, "backups");
    mkdirSync(into);
    for (const target of [`${into}/`, into]) {
      const result = await run(PROGRAM, ["backup", target, "--data-dir", dataDir]);
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(lastLine(result.stdout)).toMatch(new RegExp(`^${into}/signalboard-\\d{8}-\\d{6}\\.db$`));
      await Bun.sleep(1100); // the next one gets another second in its name
    }
    expect(readdirSync(into).filter((f) => f.endsWith(".db"))).toHaveLength(2);
    // A directory that does not exist yet is made when the name ends in /.
    const fresh = await run(PROGRAM, ["backup", join(files, "new-backups") + "/", "--data-dir", dataDir]);
    expect(fresh.code).toBe(0);
    expect(readdirSync(join(files, "new-backups"))).toHaveLength(1);
  });

  test("a database a newer version migrated: one line, naming both versions, for the server and commands", async () => {
    const dir = join(files, "newer");
    expect((await run(PROGRAM, ["project", "list", "--data-dir", dir, "--init"])).code).toBe(0);
    withDatabase(
      join(dir, "signalboard.db"),
      (db) => {
        db.query("INSERT INTO __migrations (tag, applied_at) VALUES ('0099_future', 0)").run();
        db.query("UPDATE meta SET value = '9.1.0' WHERE key = 'schema.migrated_by'").run();
        db.query("UPDATE meta SET value = '9.0.0' WHERE key = 'schema.oldest_compatible'").run();
      },
      { write: true },
    );
    for (const command of [
      ["serve", "--port", "0", "--host", "127.0.0.1"],
      ["token", "list"],
    ]) {
      const refused = await run(PROGRAM, [...command, "--data-dir", dir]);
      expect(refused.code).toBe(1);
      expect(refused.stderr.trim().split("\n")).toEqual([
        expect.stringMatching(
          /^error: the database was migrated by Signalboard 9\.1\.0, which runs with versions 9\.0\.0 and later only \(migrations 0099_future\); this binary is \d+\.\d+\.\d+: run 9\.1\.0 or later, or restore the backup taken before the upgrade to go back$/,
        ),
      ]);
    }
    // A newer version whose migrations only added to the schema lets this one run, and it says so.
    withDatabase(
      join(dir, "signalboard.db"),
      (db) => db.query("UPDATE meta SET value = '0.0.1' WHERE key = 'schema.oldest_compatible'").run(),
      { write: true },
    );
    const runs = await run(PROGRAM, ["token", "list", "--data-dir", dir]);
    expect(runs.code).toBe(0);
    // A sentence, as the command's own messages are; JSON lines are the server's.
    expect(runs.stderr).toStartWith("warning: the database was migrated by Signalboard 9.1.0; this binary");
    expect(runs.stderr.trim().split("\n")).toHaveLength(1);
  });

  test("healthcheck says when nothing answers, and exits 1", async () => {
    const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const port = probe.port;
    probe.stop(true);
    const result = await run(PROGRAM, ["healthcheck", "--port", String(port), "--host", "127.0.0.1"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`http://127.0.0.1:${port}/healthz does not answer: nothing listens there`);
  });
});

describe("what commands print", () => {
  test("each command prints its own messages only: no log line of the server's, on either output", async () => {
    // The receiver is on this machine: allowed as an operator would (SIGNALBOARD_OUTBOUND_ALLOW).
    const at = ["--data-dir", dataDir, "--outbound-allow", "127.0.0.1"];
    const token = lastLine((await run(PROGRAM, ["token", "create", "--name", "quiet-cli", ...at])).stdout);
    const exported = join(files, "quiet.ndjson");
    const client = { SIGNALBOARD_URL: server.url, SIGNALBOARD_TOKEN: token };
    const hook = await startReceiver();
    const webhook = JSON.stringify({ url: `${hook.url}/quiet` });
    const commands: [string[], Record<string, string>?][] = [
      [["project", "create", "quiet", ...at]],
      [["channel", "create", "quiet", "jobs", ...at]],
      [["token", "list", ...at]],
      [["user", "create", "quiet-owner", ...at]],
      [["user", "list", ...at]],
      [["device", "list", ...at]],
      [["integration", "add", "--project", "quiet", "--kind", "webhook", "--name", "hook", "--config", webhook, ...at]],
      [["integration", "list", "--project", "quiet", ...at]],
      [["integration", "test", "1", ...at]],
      [["alert", "create", "--project", "quiet", "--name", "Quiet", "--kind", "absence", "--period", "1d", ...at]],
      [["alert", "test", "1", ...at]],
      [["alert", "list", "--project", "quiet", ...at]],
      [["log", "--project", "quiet", "--channel", "jobs", "--event", "Ran", "--notify"], client],
      [["metric", "--title", "Runs", "--value", "1", "--project", "quiet"], client],
      [["export", "--project", "quiet", "--out", exported, ...at]],
      [["import", exported, "--project", "quiet", ...at]],
      [["backup", join(files, "quiet.db"), ...at]],
      [["project", "retention", "quiet", "30", ...at]],
      [["token", "revoke", "quiet-cli", ...at]],
    ];
    try {
      for (const [command, env] of commands) {
        const result = await run(PROGRAM, command, { env });
        expect(result.code, `${command.join(" ")}: ${result.stderr}`).toBe(0);
        for (const line of `${result.stdout}\n${result.stderr}`.split("\n"))
          expect(line, command.join(" ")).not.toMatch(/^\s*\{.*"level":/);
      }
    } finally {
      hook.stop();
    }
  });
});
