// When silence becomes a problem for an absence rule on a cron schedule, across the nights Berlin
// changes its clocks: a time the spring change skips is due when the clocks jump, a time the
// autumn change repeats is due once (its first), and a plain period is a period, whatever the clocks.
import { describe, expect, test } from "bun:test";
import { deadline } from "../../src/domain/alert-runner.ts";
import type { AlertOf } from "../../src/model/alert.ts";
import { type AlertRow, alertOfRow } from "../../src/model/alert-row.ts";

const MIN = 60_000;
const row = (over: Partial<AlertRow>): AlertRow => ({
  id: 1,
  projectId: 1,
  kind: "absence",
  name: "r",
  filter: "{}",
  period: null,
  cron: null,
  tz: null,
  grace: 10 * MIN,
  window: null,
  metric: null,
  above: null,
  below: null,
  repeat: null,
  notifyAfter: 1,
  paused: false,
  state: "ok",
  streak: 0,
  notified: "ok",
  since: 0,
  lastChecked: null,
  lastNotified: null,
  createdAt: 0,
  updatedAt: 0,
  ...over,
});
const rule = (over: Partial<AlertRow>) => alertOfRow(row(over)) as AlertOf<"absence">;
const utc = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString().replace(".000", "");

describe("an absence rule's deadline", () => {
  const nightly = rule({ cron: "30 2 * * *", tz: "Europe/Berlin" });

  test("on a cron schedule: the next scheduled time after the last event, plus the grace", () => {
    // A run at 02:31 in winter (01:31 UTC): due the next night at 02:30 (01:30 UTC), late at 01:40.
    expect(iso(deadline(nightly, utc("2026-01-10T01:31:00Z")))).toBe("2026-01-11T01:40:00Z");
    // In summer 02:30 is 00:30 UTC.
    expect(iso(deadline(nightly, utc("2026-06-10T00:31:00Z")))).toBe("2026-06-11T00:40:00Z");
  });

  test("the night the clocks go forward (02:30 does not happen): due when they jump, at 03:00", () => {
    expect(iso(deadline(nightly, utc("2026-03-28T01:31:00Z")))).toBe("2026-03-29T01:10:00Z");
    // And the night after, at 02:30 summer time again.
    expect(iso(deadline(nightly, utc("2026-03-29T01:05:00Z")))).toBe("2026-03-30T00:40:00Z");
  });

  test("the night the clocks go back (02:30 happens twice): due once, at the first", () => {
    expect(iso(deadline(nightly, utc("2026-10-24T00:31:00Z")))).toBe("2026-10-25T00:40:00Z");
    // A run at the first 02:31 is that night's: the next is due the night after, not an hour later.
    expect(iso(deadline(nightly, utc("2026-10-25T00:31:00Z")))).toBe("2026-10-26T01:40:00Z");
  });

  test("a period counts real time, however the clocks change", () => {
    const daily = rule({ period: 86_400_000 });
    expect(deadline(daily, utc("2026-03-28T12:00:00Z")) - utc("2026-03-28T12:00:00Z")).toBe(86_400_000 + 10 * MIN);
  });
});
