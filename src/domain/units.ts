// Human-friendly sizes, durations and rates for configuration values ("64KiB", "30d", "60/m").

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

export function parseDuration(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$/i.exec(text);
  const unit = TIME_UNITS[m?.[2]?.toLowerCase() ?? "?"];
  if (!m || unit === undefined) throw new Error(`expected a duration such as 30s, 15m, 12h or 30d`);
  return Math.round(Number(m[1]) * unit);
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
 * A duration in words, from its largest unit down to minutes ("1 d 0 h 10 min", "3 h 5 min"), or
 * in seconds when under a minute ("45 s"): how notices and pages say how long something lasted.
 */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  const [d, h, m] = [Math.floor(minutes / 1440), Math.floor((minutes % 1440) / 60), minutes % 60];
  if (d) return `${d} d ${h} h ${m} min`;
  if (h) return `${h} h ${m} min`;
  return `${m} min`;
}

/** Seconds as people type them: a number of seconds, or a duration with its unit (90s, 15m, 12h, 1d). */
export function parseSeconds(text: string): number {
  const t = text.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t);
  return parseDuration(t) / 1000;
}
