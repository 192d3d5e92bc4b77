// `signalboard maintenance` as an operator runs it, on a data directory: create (one-off, with
// times as Unix seconds or ISO 8601, and recurring, with a duration as people write it), list,
// delete; and `alert create --notify-after`. Mistakes are told plainly, with exit code 2.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { tempDir } from "../helpers.ts";
import { PROGRAM, run } from "./process.ts";

const dataDir = tempDir();
const maintenance = (...args: string[]) => run(PROGRAM, ["maintenance", ...args, "--data-dir", dataDir]);
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

beforeAll(async () => {
  expect((await run(PROGRAM, ["project", "create", "default", "--data-dir", dataDir, "--init"])).code).toBe(0);
});

test("maintenance create, list and delete", async () => {
  const once = await maintenance(
    "create",
    "--name",
    "Upgrade",
    "--start",
    "2030-01-01T03:00:00Z",
    "--end",
    String(Date.UTC(2030, 0, 1, 5) / 1000),
  );
  expect(once.stderr).toBe("");
  expect(once.code).toBe(0);
  expect(once.stdout).toContain(
    'Created maintenance window 1 "Upgrade": 2030-01-01 03:00:00 UTC to 2030-01-01 05:00:00 UTC (next 2030-01-01 03:00:00).',
  );
  const nightly = await maintenance("create", "--cron", "0 3 * * *", "--tz", "Europe/Berlin", "--length", "1h30m");
  expect(nightly.code).toBe(0);
  expect(nightly.stdout).toContain("Created maintenance window 2: “0 3 * * *” (Europe/Berlin) for 1h30m");

  const listed = await maintenance("list");
  expect(listed.stdout).toMatch(/^ID\s+NAME\s+WHEN\s+STATUS/);
  expect(listed.stdout).toMatch(/1\s+Upgrade\s+2030-01-01 03:00:00 UTC to 2030-01-01 05:00:00 UTC\s+next 2030-01-01/);
  expect(listed.stdout).toMatch(/2\s+-\s+“0 3 \* \* \*” \(Europe\/Berlin\) for 1h30m\s+(next|now)/);

  expect((await maintenance("delete", "1")).stdout).toContain("Deleted maintenance window 1.");
  expect((await maintenance("list")).stdout).not.toContain("Upgrade");
});

test("alert create --notify-after keeps the rule quiet for that many rounds", async () => {
  const made = await run(PROGRAM, [
    "alert",
    "create",
    "--name",
    "Flappy",
    "--kind",
    "metric",
    "--metric",
    "Queue",
    "--above",
    "10",
    "--notify-after",
    "3",
    "--data-dir",
    dataDir,
  ]);
  expect(made.stderr).toBe("");
  expect(made.stdout).toContain("(metric: Queue above 10), notifies after 3 rounds firing.");
  const bad = await run(PROGRAM, [
    "alert",
    "create",
    "--name",
    "x",
    "--kind",
    "metric",
    "--metric",
    "Q",
    "--above",
    "1",
    "--notify-after",
    "0",
    "--data-dir",
    dataDir,
  ]);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain("notify_after: must be at least 1");
});

test("mistakes are told plainly, with exit code 2", async () => {
  const nothing = await maintenance("create");
  expect(nothing.code).toBe(2);
  expect(nothing.stderr).toContain("starts_at: a window needs starts_at and ends_at");
  const backwards = await maintenance("create", "--start", "2030-01-02T00:00:00Z", "--end", "2030-01-01T00:00:00Z");
  expect(backwards.code).toBe(2);
  expect(backwards.stderr).toContain("ends_at: must be after starts_at");
  const badTime = await maintenance("create", "--start", "next tuesday", "--end", "2030-01-01T00:00:00Z");
  expect(badTime.code).toBe(2);
  expect(badTime.stderr).toContain("--start takes Unix seconds or an ISO 8601 time");
  const badZone = await maintenance("create", "--cron", "0 3 * * *", "--tz", "Mars/Olympus", "--length", "1h");
  expect(badZone.code).toBe(2);
  expect(badZone.stderr).toContain("tz:");
  const missing = await maintenance("delete", "99");
  expect(missing.code).toBe(1);
  expect(missing.stderr).toContain("Maintenance window 99 does not exist.");
  expect((await maintenance("frobnicate")).code).toBe(2);
});
