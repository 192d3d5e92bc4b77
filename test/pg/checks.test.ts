// Checks on instances sharing one PostgreSQL database: the same failure pinged to both at once, the
// same success, and silence found by rounds asked on both at the same moment, each give one notice
// per check, whichever instance took the ping or ran the round; and so is a notice held by a
// maintenance window and told at its end, or held until notify_after failures in a row.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import type { Check } from "../../src/model/check.ts";
import { createDatabase } from "../pg-cluster.ts";
import { call, startTestServer, type TestServer } from "../helpers.ts";

const CLUSTER = process.env.SIGNALBOARD_TEST_POSTGRES;
const CHECKS = 20;

describe.skipIf(!CLUSTER)("checks on instances sharing one database", () => {
  let a: TestServer;
  let b: TestServer;
  let url: string;
  const checks: Check[] = [];

  beforeAll(async () => {
    url = await createDatabase(CLUSTER!);
    [a, b] = (await Promise.all(
      [0, 1].map(() => startTestServer({ "database-url": url, "alert-interval": "3600", "rate-limit-ping": "0" })),
    )) as [TestServer, TestServer];
    for (let i = 0; i < CHECKS; i++)
      checks.push(await a.services.checks.create({ project: "default", name: `Job ${i}`, period: 60, grace: 0 }));
  });
  afterAll(async () => {
    await Promise.all([a, b].map((s) => s?.close()));
  });

  const notices = async () =>
    ((await call(a, { path: "/v1/events?project=default&channel=alerts&limit=200" })).json.events ?? []) as {
      tags: { check: string; state: string; why: string };
    }[];
  const both = (path: (c: Check) => string) =>
    Promise.all(checks.flatMap((c) => [a, b, a, b].map((s) => s.fetch(path(c)).then((r) => r.status))));
  const once = async (why: string) => {
    const slugs = (await notices()).filter((n) => n.tags.why === why).map((n) => n.tags.check);
    expect(slugs.length).toBe(CHECKS);
    expect(new Set(slugs).size).toBe(CHECKS);
  };

  test("a failure, a success and silence are one notice each, though both instances see them", async () => {
    expect(new Set(await both((c) => `/ping/${c.uuid}/fail`))).toEqual(new Set([200]));
    await once("failed");
    expect(new Set(await both((c) => `/${c.uuid}`))).toEqual(new Set([200]));
    await once("success");
    const later = Date.now() + 120_000;
    await Promise.all([a, b, a, b].map((s) => s.services.alerts.runner.round(later)));
    await once("silent");
    // Each change counted by the instance whose round made it (its /metrics), none twice.
    expect(a.services.checks.silence.stats.changed + b.services.checks.silence.stats.changed).toBe(CHECKS);
    for (const c of checks) expect((await a.services.checks.get(c.id)).state).toBe("down");
  });

  test("first pings with ?create=1 on both at once make one check", async () => {
    const key = await a.services.checks.pingKey("default");
    const statuses = await Promise.all(
      [a, b, a, b, a, b].map((s) => s.fetch(`/ping/${key}/made-twice?create=1`).then((r) => r.status)),
    );
    expect(statuses).toEqual(Array(6).fill(200));
    expect((await a.services.checks.list("default")).filter((c) => c.slug === "made-twice")).toHaveLength(1);
  });

  const toldIn = async (project: string) =>
    (
      ((await call(a, { path: `/v1/events?project=${project}&channel=alerts&limit=200` })).json.events ?? []) as {
        notify: boolean;
        tags: { check: string; state: string };
      }[]
    )
      .filter((n) => n.notify)
      .map((n) => n.tags.check)
      .sort();

  test("a notice held by a maintenance window is told once at its end, by rounds on both", async () => {
    await a.services.projects.create("quiet");
    const start = Date.now();
    await a.services.maintenance.create({
      project: "quiet",
      starts_at: start / 1000,
      ends_at: (start + 300_000) / 1000,
    });
    const held: Check[] = [];
    for (let i = 0; i < 10; i++)
      held.push(await a.services.checks.create({ project: "quiet", name: `Held ${i}`, period: 60, grace: 0 }));
    for (const c of held) expect((await a.fetch(`/ping/${c.uuid}`)).status).toBe(200);
    const rounds = (at: number) => Promise.all([a, b, a, b].map((s) => s.services.alerts.runner.round(at)));
    await rounds(start + 120_000); // silent inside the window: down, told to nobody
    expect(await toldIn("quiet")).toEqual([]);
    await rounds(start + 300_000); // the window's end: each told once
    expect(await toldIn("quiet")).toEqual(held.map((c) => c.slug).sort());
  });

  test("failures sent to both at once count up to notify_after and notify once", async () => {
    await a.services.projects.create("flappy");
    const flappy: Check[] = [];
    for (let i = 0; i < 10; i++)
      flappy.push(
        await a.services.checks.create({ project: "flappy", name: `Flappy ${i}`, period: 3600, notify_after: 3 }),
      );
    const statuses = await Promise.all(
      flappy.flatMap((c) => [a, b, a, b].map((s) => s.fetch(`/ping/${c.uuid}/fail`).then((r) => r.status))),
    );
    expect(new Set(statuses)).toEqual(new Set([200]));
    expect(await toldIn("flappy")).toEqual(flappy.map((c) => c.slug).sort());
    for (const c of flappy) expect(await a.services.checks.get(c.id)).toMatchObject({ streak: 3, notified: "down" });
  });

  test("an instance killed in the middle of a round leaves its checks to the other: each down once", async () => {
    await a.services.projects.create("killed");
    const jobs: Check[] = [];
    for (let i = 0; i < 5; i++)
      jobs.push(await a.services.checks.create({ project: "killed", name: `Killed ${i}`, period: 60, grace: 0 }));
    for (const c of jobs) expect((await a.fetch(`/ping/${c.uuid}`)).status).toBe(200);
    // The dying instance: the rounds' lock taken, and half a round written, not committed.
    const dying = new SQL(url, { max: 1 });
    const [{ pid }] = await dying`SELECT pg_backend_pid() AS pid`;
    await dying`SELECT pg_advisory_lock(hashtext('alerts'))`;
    await dying`BEGIN`;
    await dying`UPDATE checks SET state = 'down' WHERE id = ${jobs[0]!.id}`;
    const later = Date.now() + 120_000;
    await b.services.alerts.runner.round(later); // its turn is taken: nothing done
    expect(await toldIn("killed")).toEqual([]);
    // Killed: its connection ends, its transaction is undone and its lock let go.
    const other = new SQL(url, { max: 1 });
    await other`SELECT pg_terminate_backend(${pid})`;
    await other.close();
    await dying.close().catch(() => {});
    await Promise.all([b, a, b].map((s) => s.services.alerts.runner.round(later)));
    expect(await toldIn("killed")).toEqual(jobs.map((c) => c.slug).sort());
    for (const c of jobs) expect((await b.services.checks.get(c.id)).state).toBe("down");
  });
});
