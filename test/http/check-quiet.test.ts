// Checks stay quiet when they should (domain/quiet.ts, as alert rules do): a check that goes down
// inside one of its project's maintenance windows records it (its state, and a notice without
// notify) and notifies when the window ends if it is still down; one back up inside the window
// told nothing and tells nothing; notify_after N waits for N failures in a row, failure pings or
// deadlines missed; a recovery notifies only if the failure was told. What was told and the streak
// are the check's, so a new runner on the same database decides the same. Rounds run at chosen
// times on the test's clock; each test has a project of its own, so windows do not meet.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Check } from "../../src/model/check.ts";
import { TestClock } from "../clock.ts";
import { call, startTestApp, type TestApp } from "../helpers.ts";

const MIN = 60_000;
let server: TestApp;
let made = 0;

beforeAll(async () => {
  server = await startTestApp({ "alert-interval": "3600" }, undefined, {
    clock: new TestClock(Date.now(), { stopped: true }),
  });
});
afterAll(() => server.close());

type Ev = { id: number; event: string; tags: Record<string, unknown>; notify: boolean };

/** A project of its own with one check (a period of a minute, a grace of 30 s, unless told). */
async function check(more: Record<string, unknown> = {}): Promise<Check> {
  const project = `quiet-${++made}`;
  await server.services.projects.create(project);
  return server.services.checks.create({ project, name: "Backup", period: 60, grace: 30, ...more });
}
const projectOf = async (c: Check) => (await server.services.checks.projectOf(c)).name;
/** A one-off maintenance window of the check's project, from `from` for `length` ms. */
async function maintenance(c: Check, from: number, length: number): Promise<void> {
  const res = await call(server, {
    path: `/v1/maintenance?project=${await projectOf(c)}`,
    body: { project: await projectOf(c), name: "Upgrade", starts_at: from / 1000, ends_at: (from + length) / 1000 },
  });
  expect(res.status).toBe(200);
}
const ping = async (c: Check, what = "") => {
  const res = await server.fetch(`/ping/${c.uuid}${what}`);
  expect(res.status).toBe(200);
};
/** The check's notices in its project's alerts channel, in order: [state, notify, quiet]. */
async function noticesOf(c: Check): Promise<[unknown, boolean, unknown][]> {
  const page = await call(server, { path: `/v1/events?project=${await projectOf(c)}&channel=alerts&limit=200` });
  return (page.json.events as Ev[])
    .filter((e) => e.tags.check === c.slug)
    .sort((a, b) => a.id - b.id)
    .map((e) => [e.tags.state, e.notify, e.tags.quiet ?? null]);
}
const stateOf = (c: Check) => server.services.checks.get(c.id);
const round = (at: number) => server.services.alerts.runner.round(at);
/** Moves the test's clock on to `at`. */
const to = (at: number) => server.clock.advance(at - server.clock.now());
/** Moves the test's clock on to `at`, and runs a round there. */
async function roundAt(at: number): Promise<void> {
  await to(at);
  await round(at);
}

test("a check failing inside a window records it without notify, and notifies when the window ends if still down", async () => {
  const t0 = server.clock.now();
  const c = await check();
  await maintenance(c, t0, 10 * MIN);
  await ping(c);
  await to(t0 + MIN);
  await ping(c, "/fail");
  expect(await stateOf(c)).toMatchObject({ state: "down", notified: "up" });
  expect(await noticesOf(c)).toEqual([["down", false, "maintenance"]]);
  // The round looks at it again when the window ends, not before.
  expect((await stateOf(c)).nextDue).toBe(t0 + 10 * MIN);
  await roundAt(t0 + 5 * MIN);
  expect(await noticesOf(c)).toHaveLength(1);
  await roundAt(t0 + 10 * MIN);
  expect(await noticesOf(c)).toEqual([
    ["down", false, "maintenance"],
    ["down", true, null],
  ]);
  expect(await stateOf(c)).toMatchObject({ state: "down", notified: "down", nextDue: null });
  await roundAt(t0 + 20 * MIN);
  expect(await noticesOf(c)).toHaveLength(2);
  // Its recovery, told down, notifies.
  await ping(c);
  expect((await noticesOf(c)).at(-1)).toEqual(["up", true, null]);
});

test("a check silent inside a window, and back up before it ends, tells nothing", async () => {
  const t0 = server.clock.now();
  const c = await check();
  await ping(c);
  await maintenance(c, t0, 10 * MIN);
  await roundAt(t0 + 2 * MIN); // 90 s without a success: down, quietly
  expect(await stateOf(c)).toMatchObject({ state: "down", notified: "up" });
  await to(t0 + 3 * MIN);
  await ping(c);
  await roundAt(t0 + 4 * MIN);
  expect(await noticesOf(c)).toEqual([
    ["down", false, "maintenance"],
    ["up", false, "untold"],
  ]);
  expect(await stateOf(c)).toMatchObject({ state: "up", notified: "up", nextDue: t0 + 4.5 * MIN });
});

test("a recovery inside a window from a down told before it is told when the window ends", async () => {
  const t0 = server.clock.now();
  const c = await check();
  await ping(c, "/fail");
  await maintenance(c, t0 + MIN, 5 * MIN);
  await to(t0 + 2 * MIN);
  await ping(c);
  expect(await stateOf(c)).toMatchObject({ state: "up", notified: "down", nextDue: t0 + 3.5 * MIN });
  // Pinged on time, it stays up; the round at the window's end tells it.
  await to(t0 + 3 * MIN);
  await ping(c);
  expect((await stateOf(c)).nextDue).toBe(t0 + 4.5 * MIN);
  await to(t0 + 4 * MIN);
  await ping(c);
  await to(t0 + 5 * MIN);
  await ping(c);
  expect((await stateOf(c)).nextDue).toBe(t0 + 6 * MIN);
  await roundAt(t0 + 6 * MIN);
  expect(await noticesOf(c)).toEqual([
    ["down", true, null],
    ["up", false, "maintenance"],
    ["up", true, null],
  ]);
  expect(await stateOf(c)).toMatchObject({ state: "up", notified: "up", nextDue: t0 + 6.5 * MIN });
});

test("notify_after 3: failure pings notify at the third in a row; a success before it tells nothing", async () => {
  const c = await check({ notify_after: 3 });
  expect(c.notifyAfter).toBe(3);
  await ping(c, "/fail");
  await ping(c, "/1");
  expect(await noticesOf(c)).toEqual([["down", false, "notify_after"]]);
  expect(await stateOf(c)).toMatchObject({ state: "down", streak: 2, notified: "up" });
  await ping(c);
  expect((await noticesOf(c)).at(-1)).toEqual(["up", false, "untold"]);
  for (const what of ["/fail", "/fail", "/2"]) await ping(c, what);
  expect((await noticesOf(c)).slice(2)).toEqual([
    ["down", false, "notify_after"],
    ["down", true, null],
  ]);
  expect(await stateOf(c)).toMatchObject({ state: "down", streak: 3, notified: "down" });
  await ping(c, "/fail"); // told already: nothing more
  await ping(c);
  expect((await noticesOf(c)).slice(4)).toEqual([["up", true, null]]);
});

test("notify_after 3: silence counts each deadline missed, and notifies at the third", async () => {
  const t0 = server.clock.now();
  const c = await check({ notify_after: 3 });
  await ping(c);
  await roundAt(t0 + 1.5 * MIN);
  expect(await stateOf(c)).toMatchObject({ state: "down", streak: 1, nextDue: t0 + 3 * MIN });
  await roundAt(t0 + 2 * MIN);
  expect(await noticesOf(c)).toEqual([["down", false, "notify_after"]]);
  await roundAt(t0 + 3 * MIN);
  expect(await stateOf(c)).toMatchObject({ state: "down", streak: 2, nextDue: t0 + 4.5 * MIN });
  await roundAt(t0 + 4.5 * MIN);
  expect(await noticesOf(c)).toEqual([
    ["down", false, "notify_after"],
    ["down", true, null],
  ]);
  expect(await stateOf(c)).toMatchObject({ state: "down", streak: 3, notified: "down", nextDue: null });
  await roundAt(t0 + 60 * MIN);
  expect(await noticesOf(c)).toHaveLength(2);
});

test("notify_after is checked and changed like the other fields", async () => {
  const c = await check();
  expect(c.notifyAfter).toBe(1);
  for (const bad of [0, 1.5, "2", 1001])
    await expect(server.services.checks.update(c.id, { notify_after: bad as number })).rejects.toThrow(/notify_after/);
  expect((await server.services.checks.update(c.id, { notify_after: 2 })).notifyAfter).toBe(2);
});
