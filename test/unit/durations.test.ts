// Durations both ways: parseDuration reads what people type, formatDuration writes a duration the
// way they would have typed it, so what the command line and the pages show can be typed back.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { formatDuration, parseDuration, parseSeconds } from "../../src/domain/units.ts";

const S = 1000;
const MIN = 60 * S;
const H = 60 * MIN;
const D = 24 * H;

describe("formatDuration", () => {
  test("writes the largest units, as people do", () => {
    expect(formatDuration(D)).toBe("1d");
    expect(formatDuration(10 * MIN)).toBe("10m");
    expect(formatDuration(H + 30 * MIN)).toBe("1h30m");
    expect(formatDuration(90 * S)).toBe("90s");
    expect(formatDuration(30 * S)).toBe("30s");
    expect(formatDuration(MIN)).toBe("1m");
    expect(formatDuration(2 * MIN + 30 * S)).toBe("2m30s");
    expect(formatDuration(D + 12 * H)).toBe("1d12h");
    expect(formatDuration(7 * D)).toBe("7d");
    expect(formatDuration(D + 10 * MIN)).toBe("1d10m");
    expect(formatDuration(250)).toBe("250ms");
    expect(formatDuration(1500)).toBe("1.5s");
    expect(formatDuration(0)).toBe("0s");
  });

  test("a common form reads back as written", () => {
    for (const written of [
      "1d",
      "10m",
      "1h30m",
      "90s",
      "30s",
      "45s",
      "1m",
      "5m",
      "15m",
      "2h",
      "12h",
      "7d",
      "30d",
      "1d12h",
      "2m30s",
      "1h5m",
      "250ms",
    ])
      expect(formatDuration(parseDuration(written))).toBe(written);
  });

  test("what it writes parses back to the same duration", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 400 * D }), (ms) => {
        expect(parseDuration(formatDuration(ms))).toBe(ms);
      }),
    );
  });
});

describe("parseDuration", () => {
  test("one unit, or several from the largest down", () => {
    expect(parseDuration("30s")).toBe(30 * S);
    expect(parseDuration("12h")).toBe(12 * H);
    expect(parseDuration("1h30m")).toBe(H + 30 * MIN);
    expect(parseDuration("1d 12h")).toBe(D + 12 * H);
    expect(parseDuration("2m30.5s")).toBe(2 * MIN + 30_500);
    expect(parseDuration("1M5S")).toBe(MIN + 5 * S);
    expect(parseDuration("1.5h")).toBe(H + 30 * MIN);
  });

  test("refuses what is not a duration", () => {
    for (const text of ["10", "", "h", "1x", "30m1h", "1h1h", "1h 30", "-5m", "1h-30m"])
      expect(() => parseDuration(text)).toThrow("expected a duration such as");
  });

  test("parseSeconds: a bare number is seconds, else a duration", () => {
    expect(parseSeconds("600")).toBe(600);
    expect(parseSeconds("1h30m")).toBe(5400);
    expect(parseSeconds("10m")).toBe(600);
  });
});
