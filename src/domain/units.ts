// Human-friendly sizes, durations and rates ("64KiB", "30d", "1h30m", "60/m"), read and written.

const BYTE_UNITS: Record<string, number> = {
  "": 1,
  b: 1,
  k: 1024,
  kb: 1000,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1000 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1000 ** 3,
  gib: 1024 ** 3,
};
const TIME_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export type Rate = { limit: number; windowMs: number };

export function parseByteSize(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  const unit = BYTE_UNITS[m?.[2]?.toLowerCase() ?? "?"];
  if (!m || unit === undefined) throw new Error(`expected a size such as 65536, 64KiB or 1MiB`);
  const value = Math.floor(Number(m[1]) * unit);
  if (value < 1) throw new Error("must be at least 1 byte");
  return value;
}

const NOT_A_DURATION = "expected a duration such as 30s, 15m, 12h, 1d or 1h30m";

/** A duration in ms from a number and a unit (30s, 12h), or several from the largest unit down (1h30m, 1d 12h). */
export function parseDuration(text: string): number {
  const t = text.trim().toLowerCase();
  const part = /(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*/y;
  let total = 0;
  let previous = Number.POSITIVE_INFINITY;
  let m: RegExpExecArray | null;
  while ((m = part.exec(t))) {
    const unit = TIME_UNITS[m[2]!]!;
    // 30m1h or 1h1h is more likely a slip than a sum.
    if (unit >= previous) throw new Error(NOT_A_DURATION);
    previous = unit;
    total += Number(m[1]) * unit;
    if (part.lastIndex === t.length) return Math.round(total);
  }
  throw new Error(NOT_A_DURATION);
}

/** "100/s", "60/m", "1000/h"; "0" or "off" disables the limit (null). */
export function parseRate(text: string): Rate | null {
  const t = text.trim().toLowerCase();
  if (t === "0" || t === "off") return null;
  const m = /^(\d+)\s*\/\s*(s|m|h)$/.exec(t);
  const unit = TIME_UNITS[m?.[2] ?? "?"];
  if (!m || unit === undefined || Number(m[1]) < 1)
    throw new Error(`expected a rate such as 100/s, 60/m or 1000/h, or 0 to turn it off`);
  return { limit: Number(m[1]), windowMs: unit };
}

/**
 * A duration as people write it, in its largest units: 1d, 12h, 1h30m, 10m, 2m30s; under two
 * minutes, one that is not whole minutes in seconds (90s, 45s); under a second, in ms. It parses
 * back to the same duration, so what the command line and the pages show can be typed in again.
 */
export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.round(ms));
  if (total === 0) return "0s";
  if (total < 1000) return `${total}ms`;
  if (total < 2 * TIME_UNITS.m! && total % TIME_UNITS.m! !== 0) return `${total / 1000}s`;
  let rest = total;
  let out = "";
  for (const unit of ["d", "h", "m"]) {
    const n = Math.floor(rest / TIME_UNITS[unit]!);
    if (n) out += `${n}${unit}`;
    rest -= n * TIME_UNITS[unit]!;
  }
  return rest ? `${out}${rest / 1000}s` : out;
}

/** A measured time (how long something has been silent, a median), to the minute past the first. */
export function formatElapsed(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  return formatDuration((seconds < 60 ? seconds : seconds - (seconds % 60)) * 1000);
}

/** Seconds as people type them: a number of seconds, or a duration with its unit (90s, 15m, 12h, 1d). */
export function parseSeconds(text: string): number {
  const t = text.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t);
  return parseDuration(t) / 1000;
}
