// The CLI as a user types it, against a data directory and a running server.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { eventually, post, signedIn, tempDir } from "../helpers.ts";
import { startPushService } from "../push-service.ts";
import { startReceiver } from "../receiver.ts";
import { collect, PROGRAM, lastLine, listen, newToken, run, type ServerProcess, serve, start } from "./process.ts";

let dataDir: string;
let server: ServerProcess;
let token: string;
/** The push service and the receivers listen on 127.0.0.1: allowed for the server and its commands, as on an operator's box. */
const LOCAL = { SIGNALBOARD_OUTBOUND_ALLOW: "127.0.0.1" };
const cli = (...args: string[]) => run(PROGRAM, [...args, "--data-dir", dataDir], { env: LOCAL });
const client = (...args: string[]) =>
  run(PROGRAM, args, { env: { SIGNALBOARD_URL: server.url, SIGNALBOARD_TOKEN: token } });

beforeAll(async () => {
  dataDir = tempDir();
  server = await serve(PROGRAM, ["--data-dir", dataDir], { env: LOCAL });
  token = await newToken(dataDir, "ci");
});
afterAll(async () => {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("signalboard", () => {
  test("--help lists the commands and every setting", async () => {
    const { code, stdout } = await run(PROGRAM, ["--help"]);
    expect(code).toBe(0);
    for (const word of [
      "serve",
      "project",
      "channel",
      "token",
      "device",
      "log",
      "metric",
      "tail",
      "version",
      "--port",
      "DATA_DIR",
      "SIGNALBOARD_SQLITE_SYNC",
    ])
      expect(stdout).toContain(word);
  });

  test("version", async () => {
    const { code, stdout } = await run(PROGRAM, ["version"]);
    expect(code).toBe(0);
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  test("an invalid setting exits 2 and names it", async () => {
    const { code, stderr } = await run(PROGRAM, ["serve", "--port", "eighty"]);
    expect(code).toBe(2);
    expect(stderr).toContain("PORT");
    const env = await run(PROGRAM, ["serve"], { env: { SIGNALBOARD_SQLITE_SYNC: "maybe" } });
    expect(env.code).toBe(2);
    expect(env.stderr).toContain("SIGNALBOARD_SQLITE_SYNC");
    const cidr = await run(PROGRAM, ["serve", "--outbound-allow", "127.0.0.1/32,10.0.0.0/33"]);
    expect(cidr.code).toBe(2);
    expect(cidr.stderr).toContain(
      'error: SIGNALBOARD_OUTBOUND_ALLOW (--outbound-allow) is "127.0.0.1/32,10.0.0.0/33": it must be addresses, CIDR ranges or host names separated by commas',
    );
  });

  test("an unknown command or flag exits 2", async () => {
    expect((await run(PROGRAM, ["frobnicate"])).code).toBe(2);
    expect((await cli("project", "list", "--bogus")).code).toBe(2);
  });

  test("settings may come before the command, as --setting value or --setting=value", async () => {
    const dir = tempDir();
    const created = await run(PROGRAM, ["--data-dir", dir, "token", "create", "--name", "early", "--init"]);
    expect(created.code).toBe(0);
    expect(lastLine(created.stdout)).toMatch(/^sb_[A-Za-z0-9]{40}$/);
    const list = await run(PROGRAM, [`--data-dir=${dir}`, "token", "list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain("early");
    // Given again after the command, the later one wins.
    const other = await run(PROGRAM, ["--data-dir", dir, "token", "list", "--data-dir", tempDir(), "--init"]);
    expect(other.code).toBe(0);
    expect(other.stdout).not.toContain("early");
    rmSync(dir, { recursive: true, force: true });
  });

  test("a command's own option before the command is refused, and the message says what may come first", async () => {
    const bogus = await run(PROGRAM, ["--bogus", "token", "list"]);
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toContain("--bogus is not a setting");
    const misplaced = await run(PROGRAM, ["--name", "x", "token", "create", "--data-dir", dataDir]);
    expect(misplaced.code).toBe(2);
    expect(misplaced.stderr).toContain("--name is not a setting");
    expect(misplaced.stderr).toContain("--data-dir");
    expect(misplaced.stderr).toContain("a command's own options go after it");
    expect((await cli("token", "list")).stdout).not.toMatch(/\bx\b/);
  });

  test("with only settings on the line, the server starts: serve is the default command", async () => {
    const dir = tempDir();
    const started = await listen([...PROGRAM, "--port", "0", "--host=127.0.0.1", "--data-dir", dir]);
    try {
      expect((await fetch(`${started.url}/healthz`)).status).toBe(200);
      expect(started.logs()).toContain(dir);
    } finally {
      await started.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("management commands, while the server runs", () => {
  test("project create and list; a duplicate or bad name is refused", async () => {
    expect((await cli("project", "create", "homelab")).code).toBe(0);
    const dup = await cli("project", "create", "homelab");
    expect(dup.code).toBe(1);
    expect(dup.stderr).toContain("already exists");
    const bad = await cli("project", "create", "Home Lab");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("lowercase");
    const list = await cli("project", "list");
    expect(list.stdout).toContain("homelab");
    expect(list.stdout).toContain("default");
    // the running server sees the new project at once
    const res = await fetch(`${server.url}/v1/log`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ project: "homelab", channel: "nas", event: "Scrub done" }),
    });
    expect(res.status).toBe(200);
  });

  test("the default project cannot be deleted from the shell either", async () => {
    const refused = await cli("project", "delete", "default", "--yes");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("is the default project");
    expect((await cli("project", "list")).stdout).toContain("default");
  });

  test("channel create and list", async () => {
    expect((await cli("channel", "create", "homelab", "backups")).code).toBe(0);
    expect((await cli("channel", "list", "homelab")).stdout).toContain("backups");
    expect((await cli("channel", "create", "nope", "x")).code).toBe(1);
  });

  test("token create prints the token alone on the last line; list never shows it; revoke stops it", async () => {
    const created = await cli(
      "token",
      "create",
      "--name",
      "cron",
      "--public",
      "--project",
      "homelab",
      "--channel",
      "backups",
    );
    expect(created.code).toBe(0);
    const secret = lastLine(created.stdout);
    expect(secret).toMatch(/^sb_[A-Za-z0-9]{40}$/);
    const list = await cli("token", "list");
    expect(list.stdout).toContain("cron");
    expect(list.stdout).toContain("homelab/backups");
    expect(list.stdout).toContain(secret.slice(0, 11));
    expect(list.stdout).not.toContain(secret);
    const post = () =>
      fetch(`${server.url}/v1/log`, {
        method: "POST",
        headers: { Authorization: `Bearer ${secret}`, "Content-Type": "application/json" },
        body: JSON.stringify({ project: "homelab", channel: "backups", event: "ok" }),
      });
    expect((await post()).status).toBe(200);
    expect((await cli("token", "revoke", secret.slice(0, 11))).code).toBe(0);
    expect((await post()).status).toBe(401);
  });

  test("a public token needs a project", async () => {
    const res = await cli("token", "create", "--name", "x", "--public");
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("project");
  });
});

describe("dashboard users from the shell", () => {
  test("user create makes the first user the owner, prints a generated password once; reset-password replaces it", async () => {
    const created = await cli("user", "create", "alice");
    expect(created.code).toBe(0);
    expect(created.stdout).toContain('owner "alice"');
    const password = lastLine(created.stdout);
    expect(password.length).toBeGreaterThanOrEqual(16);
    const login = async (pw: string) => {
      const page = await fetch(`${server.url}/login`);
      const cookie = page.headers.getSetCookie()[0]!.split(";")[0]!;
      const form = /name="_form" value="([^"]+)"/.exec(await page.text())![1]!;
      const res = await fetch(`${server.url}/login`, {
        method: "POST",
        redirect: "manual",
        headers: { Cookie: cookie, "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ _form: form, username: "alice", password: pw, next: "/" }),
      });
      return res.status;
    };
    expect(await login(password)).toBe(303);
    const member = await run(PROGRAM, ["user", "create", "bob", "--password-stdin", "--data-dir", dataDir], {});
    expect(member.code).toBe(2); // empty stdin
    const reset = await cli("user", "reset-password", "alice");
    expect(reset.code).toBe(0);
    expect(await login(password)).toBe(401);
    expect(await login(lastLine(reset.stdout))).toBe(303);
    expect((await cli("user", "list")).stdout).toMatch(/alice\s+owner/);
    expect((await cli("user", "create", "Not Valid!")).code).toBe(2);
    expect((await cli("user", "reset-password", "nobody")).code).toBe(1);
  });
});

describe("push devices from the shell", () => {
  test("device list shows every user's devices, the push service by host only, and the last error; device remove deletes one; an unknown id exits 1, bad usage 2", async () => {
    const push = await startPushService();
    try {
      const password = lastLine((await cli("user", "create", "dana")).stdout);
      const agent = await signedIn(server, { username: "dana", password });
      const sub = push.subscribe();
      const registered = await agent.request("/settings/notifications/devices", {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": await agent.csrf() },
        body: JSON.stringify({ endpoint: sub.endpoint, keys: sub.keys, deviceName: "Dana phone 7" }),
      });
      expect(registered.status).toBe(200);
      const { id } = (await registered.json()) as { id: number };
      // The device misbehaves: its push service refuses what is sent to it.
      push.answerNext(sub.id, { status: 400 });
      const sent = await fetch(`${server.url}/v1/log`, {
        method: "POST",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
        body: JSON.stringify({ project: "default", channel: "c", event: "Refused", notify: true }),
      });
      expect(sent.status).toBe(200);
      const list = await eventually(async () => {
        const result = await cli("device", "list");
        expect(result.stdout).toContain("HTTP 400");
        return result;
      }, 10_000);
      expect(list.code).toBe(0);
      const [header, ...rows] = list.stdout.trim().split("\n");
      expect(header).toMatch(/^ID\s+USER\s+DEVICE\s+PUSH SERVICE\s+CREATED\s+LAST SUCCESS\s+LAST ERROR$/);
      const row = rows.find((r) => r.startsWith(`${id} `));
      expect(row).toMatch(
        new RegExp(
          `^${id}\\s+dana\\s+Dana phone 7\\s+${new URL(push.url).host.replaceAll(".", "\\.")}\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\s+-\\s+\\d{4}-.* HTTP 400 Bad Request$`,
        ),
      );
      // The endpoint is a capability: its path never appears.
      expect(list.stdout).not.toContain(sub.id);

      const removed = await cli("device", "remove", String(id));
      expect(removed.code).toBe(0);
      expect(removed.stdout).toContain(`Removed device ${id} "Dana phone 7" of dana`);
      expect((await cli("device", "list")).stdout).not.toContain("Dana phone 7");
      expect(await (await agent.request("/settings/notifications")).text()).not.toContain("Dana phone 7");

      const again = await cli("device", "remove", String(id));
      expect(again.code).toBe(1);
      expect(again.stderr).toContain(`There is no device ${id}`);
      for (const usage of [
        ["device"],
        ["device", "remove"],
        ["device", "remove", "phone"],
        ["device", "list", "extra"],
        ["device", "unplug", "1"],
      ]) {
        const bad = await cli(...usage);
        expect(bad.code, usage.join(" ")).toBe(2);
        expect(bad.stderr).toContain("usage: signalboard device list | device remove ID");
      }
    } finally {
      push.stop();
    }
  });
});

describe("integrations from the shell", () => {
  test("integration add (a webhook's secret printed once, last), list, test through the running server, remove; a bad config exits 2 naming the field", async () => {
    const hook = await startReceiver();
    try {
      const added = await cli(
        "integration",
        "add",
        "--project",
        "default",
        "--kind",
        "webhook",
        "--name",
        "Shell hook",
        "--config",
        JSON.stringify({ url: `${hook.url}/cli` }),
        "--filter",
        '{"exclude_channels": ["alerts"]}',
        "--title",
        "{{event}}!",
      );
      expect(added.code).toBe(0);
      const secret = lastLine(added.stdout);
      expect(secret).toMatch(/^whsec_\w+$/);
      const id = /id (\d+)/.exec(added.stdout)![1]!;
      const tg = await cli(
        "integration",
        "add",
        "--project",
        "default",
        "--kind",
        "telegram",
        "--name",
        "bot",
        "--config",
        JSON.stringify({ bot_token: "123456789:AAH-secret-token-of-the-bot-0000", chat_id: "-100123" }),
      );
      expect(tg.code).toBe(0);
      expect(tg.stdout).not.toContain("secret-token-of-the-bot");
      const bad = await cli(
        "integration",
        "add",
        "--project",
        "default",
        "--kind",
        "telegram",
        "--name",
        "bad",
        "--config",
        '{"bot_token": "nope", "chat_id": "1"}',
      );
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain("config.bot_token");

      const list = await cli("integration", "list");
      expect(list.code).toBe(0);
      expect(list.stdout).toMatch(/^ID\s+NAME\s+KIND\s+SENDS TO\s+GETS\s+ENABLED/);
      expect(list.stdout).toContain(`${hook.url}/cli`);
      expect(list.stdout).toContain("not #alerts");
      expect(list.stdout).not.toContain(secret);
      expect(list.stdout).not.toContain("secret-token-of-the-bot");

      expect((await cli("integration", "test", id)).code).toBe(0);
      const request = await eventually(() => {
        const r = hook.requests.find((x) => x.path === "/cli");
        expect(r).toBeDefined();
        return r!;
      }, 10_000);
      expect(JSON.parse(request.body).type).toBe("test");

      expect((await cli("integration", "remove", id)).code).toBe(0);
      expect((await cli("integration", "list")).stdout).not.toContain("Shell hook");
      const gone = await cli("integration", "remove", id);
      expect(gone.code).toBe(1);
      // The shell is told of the command that lists them, not only of the API's route.
      expect(gone.stderr).toContain(`There is no integration ${id}; signalboard integration list shows their ids`);
      for (const usage of [
        ["integration"],
        ["integration", "remove"],
        ["integration", "test", "x"],
        ["integration", "add", "--kind", "webhook"],
      ]) {
        const wrong = await cli(...usage);
        expect(wrong.code, usage.join(" ")).toBe(2);
        expect(wrong.stderr).toContain("usage: signalboard integration list");
      }
    } finally {
      hook.stop();
    }
  });
});

describe("client commands", () => {
  test("log sends an event with tags", async () => {
    const res = await client(
      "log",
      "--project",
      "default",
      "--channel",
      "cron",
      "--event",
      "Backup finished",
      "--description",
      "3 GB",
      "--icon",
      ":floppy_disk:",
      "--tag",
      "host=nas",
      "--tag",
      "size=3",
    );
    expect(res.code).toBe(0);
    const list = await fetch(`${server.url}/v1/events?project=default&channel=cron`, {
      headers: { Authorization: `Bearer ${token}` },
    }).then((r) => r.json());
    expect(list.events[0]).toMatchObject({
      event: "Backup finished",
      description: "3 GB",
      icon: "💾",
      tags: { host: "nas", size: 3 },
    });
  });

  test("log --timestamp takes Unix seconds and nothing else; numerals that would change stay text", async () => {
    for (const bad of ["12abc", "now", ""]) {
      const res = await client(
        "log",
        "--project",
        "default",
        "--channel",
        "cron",
        "--event",
        "Bad time",
        "--timestamp",
        bad,
      );
      expect(res.code).toBe(2);
      expect(res.stderr).toContain("Unix seconds");
    }
    const res = await client(
      "log",
      "--project",
      "default",
      "--channel",
      "cron",
      "--event",
      "Back then",
      "--timestamp",
      "1767225600.5",
      "--tag",
      "zip=007",
      "--tag",
      "big=99999999999999999999",
    );
    expect(res.code).toBe(0);
    const list = await fetch(`${server.url}/v1/events?project=default&channel=cron`, {
      headers: { Authorization: `Bearer ${token}` },
    }).then((r) => r.json());
    const stored = list.events.find((e: { event: string }) => e.event === "Back then");
    expect(stored).toMatchObject({ historical: true, tags: { zip: "007", big: "99999999999999999999" } });
    expect(list.events.some((e: { event: string }) => e.event === "Bad time")).toBe(false);
  });

  test("log reports the server's message and exits 1 on a refusal", async () => {
    const res = await client("log", "--project", "missing", "--channel", "c", "--event", "e");
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("does not exist");
  });

  test("metric sets and increments, and says the value it leaves", async () => {
    const set = await client("metric", "--title", "Disk used", "--value", "40");
    expect(set.code).toBe(0);
    expect(set.stdout.trim()).toBe('Set metric "Disk used" in default to 40.');
    const incremented = await client("metric", "--title", "Disk used", "--value", "2", "--increment");
    expect(incremented.code).toBe(0);
    expect(incremented.stdout.trim()).toBe('Incremented metric "Disk used" in default by 2; it is now 42.');
    expect((await client("metric", "--title", "Mood", "--value", "calm")).stdout.trim()).toBe(
      'Set metric "Mood" in default to "calm".',
    );
    const list = await fetch(`${server.url}/v1/metrics`, { headers: { Authorization: `Bearer ${token}` } }).then((r) =>
      r.json(),
    );
    expect(list.metrics.find((m: { title: string }) => m.title === "Disk used").value).toBe(42);
  });

  test("without a token, log explains how to get one", async () => {
    const res = await run(PROGRAM, ["log", "--project", "p", "--channel", "c", "--event", "e"], {
      env: { SIGNALBOARD_TOKEN: "" },
    });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("SIGNALBOARD_TOKEN");
  });

  test("the token can come from a file (SIGNALBOARD_TOKEN_FILE)", async () => {
    const file = `${tempDir()}/token`;
    await Bun.write(file, `${token}\n`);
    const res = await run(PROGRAM, ["log", "--project", "default", "--channel", "cron", "--event", "From a file"], {
      env: { SIGNALBOARD_URL: server.url, SIGNALBOARD_TOKEN: "", SIGNALBOARD_TOKEN_FILE: file },
    });
    expect(res.code).toBe(0);
    const missing = await run(PROGRAM, ["log", "--project", "default", "--channel", "cron", "--event", "x"], {
      env: { SIGNALBOARD_URL: server.url, SIGNALBOARD_TOKEN: "", SIGNALBOARD_TOKEN_FILE: "/nonexistent/token" },
    });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("SIGNALBOARD_TOKEN_FILE");
  });

  test("tail prints events as they arrive", async () => {
    const tail = start(PROGRAM, ["tail", "--project", "default", "--channel", "live"], {
      env: { SIGNALBOARD_URL: server.url, SIGNALBOARD_TOKEN: token },
    });
    try {
      const out = collect(tail.stdout);
      // tail follows from now: it is listening once it prints an event sent after it started.
      await eventually(async () => {
        await post({ url: server.url, token }, "/v1/log", { project: "default", channel: "live", event: "Warm-up" });
        await out.waitFor(/Warm-up/, 250);
      }, 10_000);
      await client("log", "--project", "default", "--channel", "live", "--event", "Door opened", "--tag", "room=hall");
      const [line] = await out.waitFor(/^.*Door opened.*$/m);
      expect(line).toContain("default/live");
      expect(line).toContain("room=hall");
    } finally {
      tail.kill();
    }
  });

  test("log, metric, tail and healthcheck find the server the same way: --url, SIGNALBOARD_URL, else this machine at PORT", async () => {
    const port = new URL(server.url).port;
    const nobody = await freePort(); // where nothing listens
    const dir = tempDir();
    const settings = join(dir, "server.env");
    writeFileSync(settings, `PORT=${port}\nHOST=127.0.0.1\n`);
    const sent = (event: string) => ["log", "--project", "default", "--channel", "found", "--event", event];
    const tries: [string, string[], Record<string, string>][] = [
      ["PORT in the environment", sent("By PORT"), { PORT: port }],
      ["--port", [...sent("By --port"), "--port", port], {}],
      ["PORT in --env-file", [...sent("By env file"), "--env-file", settings], {}],
      ["SIGNALBOARD_URL over PORT", sent("By URL"), { SIGNALBOARD_URL: server.url, PORT: nobody }],
      [
        "--url over SIGNALBOARD_URL",
        [...sent("By --url"), "--url", server.url],
        { SIGNALBOARD_URL: `http://127.0.0.1:${nobody}` },
      ],
      ["metric, by PORT", ["metric", "--title", "Found", "--value", "1"], { PORT: port }],
    ];
    try {
      for (const [how, args, env] of tries) {
        const res = await run(PROGRAM, args, { env: { SIGNALBOARD_URL: "", SIGNALBOARD_TOKEN: token, ...env } });
        expect(res.stderr, how).toBe("");
        expect(res.code, how).toBe(0);
      }
      const list = await fetch(`${server.url}/v1/events?project=default&channel=found`, {
        headers: { Authorization: `Bearer ${token}` },
      }).then((r) => r.json());
      expect(list.events.map((e: { event: string }) => e.event).sort()).toEqual(
        ["By --port", "By --url", "By PORT", "By URL", "By env file"].sort(),
      );
      // healthcheck asks the same place: SIGNALBOARD_URL when it is set.
      const healthy = await run(PROGRAM, ["healthcheck"], { env: { SIGNALBOARD_URL: server.url, PORT: nobody } });
      expect(healthy.stdout).toContain(`answers at ${server.url}/healthz`);
      expect(healthy.code).toBe(0);

      const tail = start(PROGRAM, ["tail", "--project", "default", "--channel", "found"], {
        env: { SIGNALBOARD_URL: "", SIGNALBOARD_TOKEN: token, PORT: port },
      });
      try {
        const out = collect(tail.stdout);
        await eventually(async () => {
          await post({ url: server.url, token }, "/v1/log", { project: "default", channel: "found", event: "Tailed" });
          await out.waitFor(/Tailed/, 250);
        });
      } finally {
        tail.kill();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** A port of 127.0.0.1 nothing listens on (it was free a moment ago). */
async function freePort(): Promise<string> {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return String(port);
}
