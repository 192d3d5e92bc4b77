// Alert rules on instances sharing one PostgreSQL database: every instance runs the alert runner,
// one at a time checks the rules, and each change of a rule's state is one notice, whichever
// instance saw it, even when two rounds are asked at the same moment.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createDatabase } from "../pg-cluster.ts";
import { call, eventually, post, startTestServer, type TestServer } from "../helpers.ts";

const CLUSTER = process.env.SIGNALBOARD_TEST_POSTGRES;
const RULES = 20;

describe.skipIf(!CLUSTER)("alert rules on instances sharing one database", () => {
  let a: TestServer;
  let b: TestServer;

  beforeAll(async () => {
    const url = await createDatabase(CLUSTER!);
    [a, b] = (await Promise.all(
      [0, 1].map(() => startTestServer({ "database-url": url, "alert-interval": "0.1" })),
    )) as [TestServer, TestServer];
  });
  afterAll(async () => {
    await Promise.all([a, b].map((s) => s?.close()));
  });

  const notices = async () =>
    ((await call(a, { path: "/v1/events?project=default&channel=alerts&limit=200" })).json.events ?? []) as {
      tags: { alert: number; state: string };
    }[];
  const states = async () =>
    (await call(b, { path: "/v1/alerts?project=default" })).json.alerts.map((r: { state: string }) => r.state);

  test("each change of state is one notice, though both instances check the rules", async () => {
    expect((await post(a, "/send-metric", { title: "Queue depth", value: 10 })).status).toBe(200);
    for (let i = 0; i < RULES; i++)
      expect(
        (
          await call(a, {
            path: "/v1/alerts",
            body: { project: "default", name: `Queue ${i}`, kind: "metric", metric: "Queue depth", above: 100 },
          })
        ).status,
      ).toBe(200);
    expect((await post(b, "/send-metric", { title: "Queue depth", value: 140 })).status).toBe(200);
    // Rounds asked on both at once.
    await Promise.all([
      a.services.alerts.runner.round(),
      b.services.alerts.runner.round(),
      a.services.alerts.runner.round(),
      b.services.alerts.runner.round(),
    ]);
    await eventually(async () => expect(await states()).toEqual(Array(RULES).fill("firing")));
    expect((await post(a, "/send-metric", { title: "Queue depth", value: 80 })).status).toBe(200);
    // The runners' timers follow the tests' clocks, which stand still: the rounds are asked here.
    await eventually(async () => {
      await Promise.all([a.services.alerts.runner.round(), b.services.alerts.runner.round()]);
      expect(await states()).toEqual(Array(RULES).fill("ok"));
    }, 10_000);
    await Promise.all([a.services.alerts.runner.round(), b.services.alerts.runner.round()]);
    const all = await notices();
    const firing = all.filter((n) => n.tags.state === "firing").map((n) => n.tags.alert);
    const resolved = all.filter((n) => n.tags.state === "resolved").map((n) => n.tags.alert);
    expect(firing.length).toBe(RULES);
    expect(new Set(firing).size).toBe(RULES);
    expect(resolved.length).toBe(RULES);
    expect(new Set(resolved).size).toBe(RULES);
  });
});
