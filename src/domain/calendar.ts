// Buckets of time in a time zone: hours, days, weeks (from Monday) and months that start where that
// zone's clocks say they do, so a day is 23 or 25 hours long when the clocks change. The store only
// ever sees the instants where buckets start (Unix ms).
import type { Interval } from "../model/analytics.ts";

const HOUR = 3_600_000;
const DAY = 86_400_000;
/** No zone is further than this from UTC. */
const MAX_OFFSET = 15 * HOUR;
/** Longest length of each interval (a day when the clocks go back, a long month): bounds a count before the buckets are made. */
const LONGEST: Record<Interval, number> = {
  hour: 2 * HOUR,
  day: 25 * HOUR,
  week: 7 * DAY + HOUR,
  month: 31 * DAY + HOUR,
};

const formats = new Map<string, Intl.DateTimeFormat>();

function format(tz: string): Intl.DateTimeFormat {
  let f = formats.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: tz,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formats.set(tz, f);
  }
  return f;
}

/** The zone's canonical name (Europe/Paris for europe/paris), or null when there is no such zone. */
export function zoneName(tz: string): string | null {
  try {
    return format(tz).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

/** What the zone's clocks read at `t` (a time after 1970), as if that were UTC (ms). */
export function wallOf(t: number, tz: string): number {
  if (tz === "UTC") return t;
  const p: Record<string, number> = {};
  for (const part of format(tz).formatToParts(t)) p[part.type] = Number(part.value);
  return Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!) + (t % 1000);
}

const offsetAt = (t: number, tz: string) => wallOf(t, tz) - t;

/** When a wall time begins: the earlier instant when it happens twice, and the change itself when the clocks skip it. */
export function instantOf(wall: number, tz: string): number {
  const before = offsetAt(wall - MAX_OFFSET, tz);
  const after = offsetAt(wall + MAX_OFFSET, tz);
  const valid = [wall - before, wall - after].filter((t) => wallOf(t, tz) === wall);
  return valid.length ? Math.min(...valid) : wall - before;
}

/** The wall time a day, week or month starts at, for the bucket holding the wall time `wall`; and the next one's. */
function calendarStart(wall: number, interval: Exclude<Interval, "hour">): number {
  const day = Math.floor(wall / DAY) * DAY;
  if (interval === "day") return day;
  if (interval === "week") return day - ((Math.floor(day / DAY) + 3) % 7) * DAY; // 1970-01-01 was a Thursday
  const d = new Date(day);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

function calendarNext(wall: number, interval: Exclude<Interval, "hour">): number {
  if (interval === "day") return wall + DAY;
  if (interval === "week") return wall + 7 * DAY;
  const d = new Date(wall);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/**
 * The buckets over [from, to) (times after 1970): where each starts, the first at or before
 * `from`; null when there would be more than `max`.
 */
export function bucketStarts(from: number, to: number, interval: Interval, tz: string, max: number): number[] | null {
  if ((to - from) / LONGEST[interval] > max + 1) return null;
  if (interval === "hour") return hours(from, to, tz, max);
  let wall = calendarStart(wallOf(from, tz), interval);
  let start = instantOf(wall, tz);
  let offset = offsetAt(start, tz);
  const starts = [start];
  for (;;) {
    wall = calendarNext(wall, interval);
    // The offset of the last start, unless the clocks changed meanwhile (a few times a year): one look at the clock per bucket.
    start = wall - offset;
    if (wallOf(start, tz) !== wall) {
      start = instantOf(wall, tz);
      offset = offsetAt(start, tz);
    }
    if (start >= to) return starts;
    if (starts.push(start) > max) return null;
  }
}

/** Hours start where the zone's minutes are 0: a day of them at a time, where the clocks do not change within it. */
function hours(from: number, to: number, tz: string, max: number): number[] | null {
  let offset = offsetAt(from, tz);
  let at = from - ((((from + offset) % HOUR) + HOUR) % HOUR);
  const starts = [at];
  while (at + HOUR < to) {
    const later = offsetAt(at + DAY, tz);
    if (later === offset) {
      for (let h = 0; h < 24 && at + HOUR < to; h++) starts.push((at += HOUR));
    } else {
      at += HOUR;
      offset = offsetAt(at, tz);
      // A change of half an hour (Lord Howe Island) moves where hours start.
      at -= (((at + offset) % HOUR) + HOUR) % HOUR;
      if (at >= to) break;
      starts.push(at);
    }
    if (starts.length > max) return null;
  }
  return starts;
}
