// `signalboard alert` as an operator runs it, on a data directory: create, list, pause, resume,
// test and delete, with durations as people write them (1d, 10m, 1h30m) both ways, only the
// command's own messages on its output, and mistakes told plainly with exit code 2.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { databaseFile, tempDir, withDatabase } from "../helpers.ts";
import { PROGRAM, run } from "./process.ts";

const dataDir = tempDir();
const alert = (...args: string[]) => run(PROGRAM, ["alert", ...args, "--data-dir", dataDir]);
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

beforeAll(async () => {
  expect((await run(PROGRAM, ["project", "create", "default", "--data-dir", dataDir, "--init"])).code).toBe(0);
});

test("alert create, list, pause, resume, test and delete", async () => {
  const made = await alert(
    "create",
    "--name",
    "Nightly backup",
    "--kind",
    "absence",
    "--channel",
    "cron",
    "--event",
    "Backup done",
    "--tag",
    "host=db1",
    "--period",
    "1d",
    "--grace",
    "10m",
  );
  expect(made.stderr).toBe("");
  expect(made.code).toBe(0);
  expect(made.stdout).toContain('Created alert rule 1 "Nightly backup" (absence: every 1d, grace 10m).');
  const count = await alert(
    "create",
    "--name",
    "Error burst",
    "--kind",
    "count",
    "--channel",
    "errors",
    "--window",
    "5400",
    "--above",
    "10",
    "--repeat",
    "1h",
  );
  expect(count.stdout).toContain('Created alert rule 2 "Error burst" (count: above 10 in 1h30m).');

  const listed = await alert("list");
  expect(listed.stdout).toMatch(/^ID\s+NAME\s+KIND\s+RULE\s+STATE/);
  expect(listed.stdout).toMatch(/1\s+Nightly backup\s+absence\s+every 1d, grace 10m\s+ok/);
  expect((await alert("pause", "1")).stdout).toContain('Alert rule 1 "Nightly backup" is paused.');
  expect((await alert("list")).stdout).toMatch(/Nightly backup.*paused/);
  expect((await alert("resume", "1")).stdout).toContain("watching again");

  const tested = await alert("test", "2");
  expect(tested.stderr).toBe(""); // no server log line: the command says what it did
  expect(tested.code).toBe(0);
  expect(tested.stdout).toContain('Sent a test notice of "Error burst"');
  const notice = withDatabase(databaseFile(dataDir), (db) =>
    db.query<{ event: string; notify: number }, []>("SELECT event, notify FROM events ORDER BY id DESC LIMIT 1").get(),
  );
  expect(notice).toEqual({ event: "Test: Error burst", notify: 1 });

  expect((await alert("delete", "2")).stdout).toContain('Deleted alert rule 2 "Error burst"');
  expect((await alert("list")).stdout).not.toContain("Error burst");
});

test("mistakes are told plainly, with exit code 2", async () => {
  const noKind = await alert("create", "--name", "x", "--period", "60");
  expect(noKind.code).toBe(2);
  expect(noKind.stderr).toContain("kind");
  const both = await alert(
    "create",
    "--name",
    "x",
    "--kind",
    "count",
    "--window",
    "60",
    "--above",
    "1",
    "--below",
    "0",
  );
  expect(both.code).toBe(2);
  expect(both.stderr).toContain("below: give above or below, not both");
  const badDuration = await alert("create", "--name", "x", "--kind", "absence", "--period", "a day");
  expect(badDuration.code).toBe(2);
  expect(badDuration.stderr).toContain('--period takes seconds or a duration such as 90s, 15m, 12h or 1d; got "a day"');
  const missing = await alert("pause", "99");
  expect(missing.code).toBe(1);
  expect(missing.stderr).toContain("Alert rule 99 does not exist.");
  expect((await alert("frobnicate")).code).toBe(2);
});
