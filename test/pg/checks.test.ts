// Checks on instances sharing one PostgreSQL database: the same failure pinged to both at once, the
// same success, and silence found by rounds asked on both at the same moment, each give one notice
// per check, whichever instance took the ping or ran the round.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Check } from "../../src/model/check.ts";
import { createDatabase } from "../pg-cluster.ts";
import { call, startTestServer, type TestServer } from "../helpers.ts";

const CLUSTER = process.env.SIGNALBOARD_TEST_POSTGRES;
const CHECKS = 20;

describe.skipIf(!CLUSTER)("checks on instances sharing one database", () => {
  let a: TestServer;
  let b: TestServer;
  const checks: Check[] = [];

  beforeAll(async () => {
    const url = await createDatabase(CLUSTER!);
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
    for (const c of checks) expect((await a.services.checks.get(c.id)).state).toBe("down");
  }, 30_000);

  test("first pings with ?create=1 on both at once make one check", async () => {
    const key = await a.services.checks.pingKey("default");
    const statuses = await Promise.all(
      [a, b, a, b, a, b].map((s) => s.fetch(`/ping/${key}/made-twice?create=1`).then((r) => r.status)),
    );
    expect(statuses).toEqual(Array(6).fill(200));
    expect((await a.services.checks.list("default")).filter((c) => c.slug === "made-twice")).toHaveLength(1);
  });
});
