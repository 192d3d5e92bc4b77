// Settings files (--env-file, and an installed server's own): the format install.sh writes and
// systemd reads, and when the installed server's file is read without being named.
import { afterAll, describe, expect, spyOn, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../../src/config.ts";
import { environment, readEnvFile } from "../../src/env-file.ts";
import { tempDir } from "../helpers.ts";

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const installed = join(dir, "signalboard.env");
writeFileSync(installed, "# the service's settings\nPORT=8081\nDATA_DIR=/var/lib/signalboard\n");

describe("readEnvFile", () => {
  test("NAME=value lines; comments, blank lines, export and quotes as systemd and shells write them", () => {
    const file = join(dir, "format.env");
    writeFileSync(
      file,
      [
        "# comment",
        "; also a comment",
        "",
        "  PORT = 9000  ",
        "export HOST=127.0.0.1",
        'BASE_URL="https://sb.example.com"',
        "SIGNALBOARD_TOKEN='sb_x y'",
        'QUOTED="say \\"hi\\""',
        "EMPTY=",
        "HASH=a#b",
      ].join("\n"),
    );
    expect(readEnvFile(file)).toEqual({
      PORT: "9000",
      HOST: "127.0.0.1",
      BASE_URL: "https://sb.example.com",
      SIGNALBOARD_TOKEN: "sb_x y",
      QUOTED: 'say "hi"',
      EMPTY: "",
      HASH: "a#b",
    });
  });

  test("a line that is not a setting is refused with its number", () => {
    const file = join(dir, "bad.env");
    writeFileSync(file, "PORT=1\nPORT 2\n");
    expect(() => readEnvFile(file)).toThrow(ConfigError);
    expect(() => readEnvFile(file)).toThrow("line 2");
  });
});

describe("environment", () => {
  const options = (env: Record<string, string>) => ({ installed: true, env, installedFile: installed });

  test("a command on the data reads the installed server's file when nothing names a database", () => {
    expect(environment({}, options({ PATH: "/bin" }))).toMatchObject({
      PORT: "8081",
      DATA_DIR: "/var/lib/signalboard",
      PATH: "/bin",
    });
  });

  test("not when a database is named (flag or variable), nor for commands that do not work on the data", () => {
    const named: Record<string, string>[] = [
      { DATA_DIR: "/elsewhere" },
      { DATABASE_URL: "postgres://db/x" },
      { DATABASE_URL_FILE: "/run/secrets/db" },
    ];
    for (const env of named) expect(environment({}, options(env))).toEqual(env);
    expect(environment({ "data-dir": "/elsewhere" }, options({}))).toEqual({});
    expect(environment({ "database-url": "postgres://db/x" }, options({}))).toEqual({});
    expect(environment({}, { env: {}, installedFile: installed })).toEqual({}); // installed: false
    expect(environment({}, { installed: true, env: {}, installedFile: join(dir, "absent.env") })).toEqual({});
  });

  test("--env-file is read for any command; the environment wins over it", () => {
    const file = join(dir, "named.env");
    writeFileSync(file, "PORT=7000\nHOST=127.0.0.1\n");
    expect(environment({ "env-file": file }, { env: { PORT: "7001", HOST: "" }, installedFile: installed })).toEqual({
      PORT: "7001",
      HOST: "127.0.0.1",
    });
  });

  test("an installed server's file that is there but cannot be read is said, not passed over", () => {
    const unreadable = join(dir, "a-directory.env");
    mkdirSync(unreadable);
    expect(() => environment({}, { installed: true, env: {}, installedFile: unreadable })).toThrow(
      `The installed server's settings, ${unreadable}, cannot be read`,
    );
    expect(() => environment({}, { installed: true, env: {}, installedFile: unreadable })).toThrow(
      "sudo -u signalboard",
    );
  });
});

describe("the commands that work on the data", () => {
  test("each reads the installed server's file, integration as token and alert do", async () => {
    const envFile = await import("../../src/env-file.ts");
    const commands = {
      token: (await import("../../src/cli/token.ts")).token,
      alert: (await import("../../src/cli/alert.ts")).alert,
      integration: (await import("../../src/cli/integration.ts")).integration,
    };
    const seen: Record<string, boolean> = {};
    const spy = spyOn(envFile, "environment").mockImplementation((flags, opts) => {
      seen.installed = opts?.installed === true;
      throw new ConfigError("stop here");
    });
    try {
      for (const [name, command] of Object.entries(commands)) {
        seen.installed = false;
        await command.run(["list"]).catch(() => {}); // stopped where the settings are read
        expect({ name, installed: seen.installed }).toEqual({ name, installed: true });
      }
    } finally {
      spy.mockRestore();
    }
  });
});
