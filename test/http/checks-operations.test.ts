// What an operator sees of checks: /metrics counts pings by API and status, and the checks each
// round changed; every notice of a check is a log line naming its project, its check, its new
// state and why, whether a ping or the round wrote it, and what held it back when it was quiet.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { setLogLevel } from "../../src/logger.ts";
import { TestClock } from "../clock.ts";
import { call, startTestApp, type TestApp } from "../helpers.ts";

let server: TestApp;
const logs: string[] = [];
const write = process.stderr.write.bind(process.stderr);

beforeAll(async () => {
  server = await startTestApp({ "alert-interval": "3600", "rate-limit-ping": "2/m", metrics: "true" }, undefined, {
    clock: new TestClock(Date.now(), { stopped: true }),
  });
  await server.services.projects.create("ops");
  setLogLevel("info");
  process.stderr.write = ((chunk: string) => {
    logs.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
});
afterAll(async () => {
  process.stderr.write = write;
  setLogLevel("silent");
  await server.close();
});

const round = () => server.services.alerts.runner.round(server.clock.now());
/** The log lines of checks' notices, as objects. */
const noticeLines = () =>
  logs
    .join("")
    .split("\n")
    .filter((l) => l.includes('"msg":"check"'))
    .map((l) => {
      const { time: _, ...rest } = JSON.parse(l) as Record<string, unknown>;
      return rest;
    });
const metric = async (line: string) => {
  const text = (await call(server, { path: "/metrics" })).text;
  return text.split("\n").find((l) => l.startsWith(`${line} `));
};

describe("checks, as an operator sees them", () => {
  test("pings are counted by API and status; every notice is logged, by a ping or by the round", async () => {
    const c = await server.services.checks.create({ project: "ops", name: "Backup", period: 60, grace: 30 });
    expect((await server.fetch(`/ping/${c.uuid}`)).status).toBe(200);
    expect((await server.fetch(`/${c.uuid}/fail`)).status).toBe(200);
    expect((await server.fetch(`/${c.uuid}`)).status).toBe(429);
    expect((await server.fetch("/ping/00000000-0000-4000-8000-000000000000")).status).toBe(404);
    expect((await server.fetch(`/api/push/${c.pushToken}?status=up`)).status).toBe(200);
    expect((await server.fetch(`/api/push/${"x".repeat(32)}`)).status).toBe(404);

    expect(await metric('signalboard_pings_total{api="healthchecks",status="200"}')).toEndWith(" 2");
    expect(await metric('signalboard_pings_total{api="healthchecks",status="429"}')).toEndWith(" 1");
    expect(await metric('signalboard_pings_total{api="healthchecks",status="404"}')).toEndWith(" 1");
    expect(await metric('signalboard_pings_total{api="uptime-kuma",status="200"}')).toEndWith(" 1");
    expect(await metric('signalboard_pings_total{api="uptime-kuma",status="404"}')).toEndWith(" 1");

    // Silence: the round takes it down, and says so in /metrics.
    await server.clock.advance(91_000);
    await round();
    expect((await server.services.checks.get(c.id)).state).toBe("down");
    expect(await metric("signalboard_check_round_changes_total")).toBe("signalboard_check_round_changes_total 1");
    expect(await metric("signalboard_check_round_changes")).toBe("signalboard_check_round_changes 1");

    // Back up inside a maintenance window: recorded, told to nobody, and the log says why.
    const now = server.clock.now() / 1000;
    await server.services.maintenance.create({ project: "ops", starts_at: now - 1, ends_at: now + 600 });
    expect((await server.fetch(`/api/push/${c.pushToken}?status=up`)).status).toBe(200);

    expect(noticeLines()).toEqual([
      {
        level: "info",
        msg: "check",
        project: "ops",
        check: "backup",
        name: "Backup is down",
        state: "down",
        why: "failed",
      },
      {
        level: "info",
        msg: "check",
        project: "ops",
        check: "backup",
        name: "Backup is up",
        state: "up",
        why: "success",
      },
      {
        level: "info",
        msg: "check",
        project: "ops",
        check: "backup",
        name: "Backup is down",
        state: "down",
        why: "silent",
      },
      {
        level: "info",
        msg: "check",
        project: "ops",
        check: "backup",
        name: "Backup is up",
        state: "up",
        why: "success",
        quiet: "maintenance",
      },
    ]);
  });
});
