// The lines people put in crontabs, run as they are (curl, through a shell) against a listening
// server: a Healthchecks URL with only the host changed (with and without /ping), a start/finish
// pair, a shell's exit status as `/$?`, and an Uptime Kuma push URL. The check goes up, starts,
// fails, goes down by silence and comes back, each notice once.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Check } from "../../src/model/check.ts";
import { TestClock } from "../clock.ts";
import { call, startTestServer, type TestServer } from "../helpers.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ "alert-interval": "3600" }, undefined, {
    clock: new TestClock(Date.now(), { stopped: true }),
  });
  await server.services.projects.create("ops");
});
afterAll(() => server.close());

/** Runs `line` in a shell, as cron does; its exit code. */
async function sh(line: string): Promise<number> {
  const proc = Bun.spawn(["sh", "-c", line], { stdout: "ignore", stderr: "inherit" });
  return proc.exited;
}
const curl = (url: string) => `curl -fsS -m 10 --retry 5 -o /dev/null ${url}`;
const stateOf = async (c: Check) => (await server.services.checks.get(c.id)).state;
const eventsOf = async (channel: string, slug: string) =>
  (
    (await call(server, { path: `/v1/events?project=ops&channel=${channel}&limit=200` })).json.events as {
      id: number;
      event: string;
      tags: Record<string, unknown>;
    }[]
  )
    .filter((e) => e.tags.check === slug)
    .sort((a, b) => a.id - b.id);

test("a Healthchecks crontab line with only the host changed", async () => {
  const c = await server.services.checks.create({ project: "ops", name: "Nightly backup", period: 60, grace: 30 });
  expect(await sh(`true && ${curl(`${server.url}/${c.uuid}`)}`)).toBe(0);
  expect(await stateOf(c)).toBe("up");

  // A start/finish pair around the job, with /ping this time.
  expect(
    await sh(`${curl(`${server.url}/ping/${c.uuid}/start`)} && true && ${curl(`${server.url}/ping/${c.uuid}`)}`),
  ).toBe(0);
  const finished = (await eventsOf("checks", c.slug)).at(-1)!;
  expect(finished.tags).toMatchObject({ kind: "success" });
  expect(typeof finished.tags.duration).toBe("number");

  // The job's exit status, whatever it was: down at once.
  expect(await sh(`sh -c 'exit 3'; ${curl(`${server.url}/ping/${c.uuid}/$?`)}`)).toBe(0);
  expect(await stateOf(c)).toBe("down");
  expect((await eventsOf("checks", c.slug)).at(-1)!.event).toBe("Nightly backup: exit 3");

  // Back up, then silent past its period and grace: down by the round, then up by the next run.
  expect(await sh(curl(`${server.url}/${c.uuid}/0`))).toBe(0);
  await server.clock.advance(91_000);
  await server.services.alerts.runner.round(server.clock.now());
  expect(await stateOf(c)).toBe("down");
  expect(await sh(curl(`${server.url}/${c.uuid}`))).toBe(0);
  expect((await eventsOf("alerts", c.slug)).map((e) => [e.tags.state, e.tags.why])).toEqual([
    ["down", "failed"],
    ["up", "success"],
    ["down", "silent"],
    ["up", "success"],
  ]);

  // curl -f fails on an unknown check: cron's mail says so.
  expect(await sh(`curl -fsS -m 10 -o /dev/null ${server.url}/ping/${crypto.randomUUID()}`)).not.toBe(0);
});

test("an Uptime Kuma push URL with only the host changed", async () => {
  const c = await server.services.checks.create({ project: "ops", name: "Web", period: 60, grace: 0 });
  expect(await sh(curl(`"${server.url}/api/push/${c.pushToken}?status=up&msg=OK&ping=12"`))).toBe(0);
  expect(await stateOf(c)).toBe("up");
  expect(await sh(curl(`"${server.url}/api/push/${c.pushToken}?status=down&msg=refused"`))).toBe(0);
  expect(await stateOf(c)).toBe("down");
});
