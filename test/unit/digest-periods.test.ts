// A digest's period: it ends at the chosen hour (on the chosen weekday) of the zone's own clocks,
// so a day across a change of the clocks is 23 or 25 hours long, and is named by its local date.
import { describe, expect, test } from "bun:test";
import { lastPeriod } from "../../src/domain/digests.ts";

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

describe("digest periods", () => {
  test("daily: the last due hour at or before now, and the day before it", () => {
    const p = lastPeriod({ frequency: "daily", hour: 9, weekday: null, timeZone: "UTC" }, at("2026-03-10T08:59:00Z"));
    expect([p.key, iso(p.start), iso(p.end), iso(p.previousStart)]).toEqual([
      "2026-03-09",
      "2026-03-08T09:00:00.000Z",
      "2026-03-09T09:00:00.000Z",
      "2026-03-07T09:00:00.000Z",
    ]);
    expect(
      lastPeriod({ frequency: "daily", hour: 9, weekday: null, timeZone: "UTC" }, at("2026-03-10T09:00:00Z")).key,
    ).toBe("2026-03-10");
  });

  test("in a zone, across the spring change: a day of 23 hours", () => {
    // Europe/Paris moves from +1 to +2 on 2026-03-29 at 02:00.
    const p = lastPeriod(
      { frequency: "daily", hour: 8, weekday: null, timeZone: "Europe/Paris" },
      at("2026-03-29T12:00:00Z"),
    );
    expect([p.key, iso(p.start), iso(p.end)]).toEqual([
      "2026-03-29",
      "2026-03-28T07:00:00.000Z",
      "2026-03-29T06:00:00.000Z",
    ]);
    expect(p.end - p.start).toBe(23 * 3_600_000);
  });

  test("weekly: back to the chosen weekday (1 is Monday), seven local days long", () => {
    // 2026-11-01 is a Sunday, when New York's clocks go back: that week has 169 hours.
    const p = lastPeriod(
      { frequency: "weekly", hour: 0, weekday: 1, timeZone: "America/New_York" },
      at("2026-11-05T12:00:00Z"),
    );
    expect([p.key, iso(p.start), iso(p.end)]).toEqual([
      "2026-11-02",
      "2026-10-26T04:00:00.000Z",
      "2026-11-02T05:00:00.000Z",
    ]);
    expect(
      lastPeriod({ frequency: "weekly", hour: 9, weekday: 4, timeZone: "UTC" }, at("2026-11-05T09:30:00Z")).key,
    ).toBe("2026-11-05");
    expect(
      lastPeriod({ frequency: "weekly", hour: 9, weekday: 4, timeZone: "UTC" }, at("2026-11-05T08:30:00Z")).key,
    ).toBe("2026-10-29");
  });
});
