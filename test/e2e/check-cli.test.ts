// `signalboard check` as an operator runs it, on a data directory: create (a period or a cron
// schedule, a UUID and push token kept from Healthchecks or Uptime Kuma), which prints the URLs to
// ping; list, pause, resume, delete; the project's ping key, shown and made anew. Mistakes are told
// plainly, with exit code 2, and make nothing.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { tempDir } from "../helpers.ts";
import { PROGRAM, run } from "./process.ts";

const dataDir = tempDir();
const BASE = "https://sb.example.com";
const check = (...args: string[]) => run(PROGRAM, ["check", ...args, "--data-dir", dataDir, "--base-url", BASE]);
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

beforeAll(async () => {
  expect((await run(PROGRAM, ["project", "create", "default", "--data-dir", dataDir, "--init"])).code).toBe(0);
});

test("check create prints its ping URLs; list, pause, resume and delete", async () => {
  const nightly = await check("create", "--name", "Nightly backup", "--cron", "0 3 * * *", "--tz", "Europe/Berlin");
  expect(nightly.stderr).toBe("");
  expect(nightly.code).toBe(0);
  expect(nightly.stdout).toContain(
    'Created check 1 "Nightly backup" (nightly-backup: when “0 3 * * *” says (Europe/Berlin), grace 1h).',
  );
  const uuid = /Ping URL: https:\/\/sb\.example\.com\/ping\/([0-9a-f-]{36})\n/.exec(nightly.stdout)?.[1];
  expect(uuid).toBeDefined();
  expect(nightly.stdout).toMatch(/By slug: +https:\/\/sb\.example\.com\/ping\/[A-Za-z0-9_-]{22}\/nightly-backup\n/);
  expect(nightly.stdout).toMatch(
    /Push URL: https:\/\/sb\.example\.com\/api\/push\/[A-Za-z0-9]{32}\?status=up&msg=OK&ping=/,
  );

  const kept = await check(
    "create",
    "--name",
    "Web",
    "--slug",
    "web-monitor",
    "--period",
    "60",
    "--grace",
    "30s",
    "--channel",
    "uptime",
    "--notify-after",
    "3",
    "--uuid",
    "5B0B7C32-8F4E-4A43-9D8E-2F0C3C1E9A61",
    "--push-token",
    "Qm9zdG9uVGVhUGFydHkxNzczQm9zdG9u",
    "--paused",
  );
  expect(kept.code).toBe(0);
  expect(kept.stdout).toContain(
    'Created check 2 "Web" (web-monitor: every 1m, grace 30s), notifies after 3 failures in a row, paused.',
  );
  expect(kept.stdout).toContain(`Ping URL: ${BASE}/ping/5b0b7c32-8f4e-4a43-9d8e-2f0c3c1e9a61\n`);
  expect(kept.stdout).toContain(`Push URL: ${BASE}/api/push/Qm9zdG9uVGVhUGFydHkxNzczQm9zdG9u?status=up&msg=OK&ping=`);

  const listed = await check("list");
  expect(listed.stdout).toMatch(/^ID\s+NAME\s+SLUG\s+SCHEDULE\s+STATE\s+LAST PING\s+UUID/);
  expect(listed.stdout).toMatch(new RegExp(`1\\s+Nightly backup\\s+nightly-backup\\s+.*\\s+new\\s+-\\s+${uuid}`));
  expect(listed.stdout).toMatch(/2\s+Web\s+web-monitor\s+every 1m, grace 30s\s+paused/);

  expect((await check("pause", "1")).stdout).toContain('Check 1 "Nightly backup" is paused');
  expect((await check("list")).stdout).toMatch(/1\s+Nightly backup.*paused/);
  expect((await check("resume", "1")).stdout).toContain('Check 1 "Nightly backup" is watched again');
  expect((await check("delete", "2")).stdout).toContain('Deleted check 2 "Web"');
  expect((await check("list")).stdout).not.toContain("web-monitor");
});

test("check ping-key shows the project's key, and --regenerate makes it anew", async () => {
  const shown = await check("ping-key");
  const key = /Ping key of default: ([A-Za-z0-9_-]{22})\n/.exec(shown.stdout)?.[1];
  expect(key).toBeDefined();
  expect(shown.stdout).toContain(`Slug URLs: ${BASE}/ping/${key}/<slug>`);
  expect((await check("ping-key")).stdout).toContain(key!);
  const made = await check("ping-key", "--regenerate");
  expect(made.code).toBe(0);
  expect(made.stdout).not.toContain(key!);
  expect(made.stdout).toContain("made anew");
});

test("mistakes are told plainly, with exit code 2, and make nothing", async () => {
  for (const [args, said] of [
    [["create", "--name", "x", "--period", "1"], "period: must be at least 5"],
    [["create", "--name", "x", "--period", "soon"], "--period takes seconds or a duration"],
    [["create", "--name", "x", "--notify-after", "many"], "--notify-after takes a number"],
    [["create", "--name", "x", "--notify-after", "0"], "notify_after: must be at least 1"],
    [["create", "--name", "x", "--cron", "0 3 * * *", "--tz", "Mars/Olympus"], "tz:"],
    [["create", "--name", "Nightly backup"], 'slug: "nightly-backup" is another check\'s'],
    [["create", "--project", "nope", "--name", "x"], 'project: "nope" does not exist'],
    [["pause", "abc"], "expected list, create, ping-key, or pause|resume|delete"],
    [["frob", "1"], "expected list, create, pause, resume, delete or ping-key"],
  ] as const) {
    const res = await check(...args);
    expect({ args, code: res.code }).toEqual({ args, code: 2 });
    expect(res.stderr).toContain(said);
  }
  expect((await check("delete", "99")).code).not.toBe(0);
  expect((await check("list")).stdout.trim().split("\n")).toHaveLength(2);
});
