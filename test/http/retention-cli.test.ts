// `signalboard project retention NAME`: the setting, and when retention last ran with what it
// deleted of the project then, recorded by the run itself in the database. Runs on PostgreSQL too.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { PROGRAM, run } from "../e2e/process.ts";
import { post, startTestApp, storeArgs, type TestApp } from "../helpers.ts";

let server: TestApp;
beforeAll(async () => {
  server = await startTestApp();
  await server.services.projects.create("shop");
});
afterAll(() => server.close());

const retention = (...args: string[]) => run(PROGRAM, ["project", "retention", ...args, ...storeArgs(server)]);

test("without days, it shows the setting and that retention has not run yet", async () => {
  const shown = await retention("shop");
  expect(shown.code).toBe(0);
  expect(shown.stdout).toBe(
    'Project "shop" keeps events forever.\nRetention has not run on this database yet: a running server runs it 30 seconds after it starts, then every hour.\n',
  );
});

test("after a run, when it ran and what it deleted of that project", async () => {
  expect((await retention("shop", "3")).code).toBe(0);
  const now = Math.floor(Date.now() / 1000);
  for (const days of [10, 5, 1])
    await post(server, "/v1/log", {
      project: "shop",
      channel: "c",
      event: `${days} days old`,
      timestamp: now - days * 86400,
    });
  const before = Date.now();
  await server.services.housekeep();
  const shown = await retention("shop");
  expect(shown.code).toBe(0);
  const [setting, ran] = shown.stdout.trim().split("\n");
  expect(setting).toBe('Project "shop" keeps events for 3 days; older ones are deleted hourly.');
  const at =
    /^Retention last ran at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC and deleted 2 of its events; it runs every hour while a server runs\.$/.exec(
      ran!,
    );
  expect(at).not.toBeNull();
  expect(Math.abs(Date.parse(`${at![1]!.replace(" ", "T")}Z`) - before)).toBeLessThan(5000);
  // A project that keeps everything shows when the last run was, with nothing deleted to speak of.
  expect((await retention("default")).stdout).toMatch(
    /^Project "default" keeps events forever\.\nRetention last ran at [\d: -]+ UTC; it runs every hour while a server runs\.\n$/,
  );
  expect((await retention("nope")).code).toBe(1);
});
