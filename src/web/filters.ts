// A feed's filters, as they live in the URL so a search can be shared and bookmarked:
//   ?q=kettle plan:pro  &user=alice  &channel=orders  &from=2026-11-01  &to=2026-11-08  &tag=env:prod
//   &tz=60 (the viewer's offset from UTC in minutes: from and to are days where they are)
// In q, a word shaped like key:value (or key:"a value with spaces") is a tag filter; the rest is
// free text.
import type { EventQuery } from "../domain/feed.ts";

export type Filters = {
  text: string;
  tags: [string, string][];
  user: string;
  channel: string;
  from: string;
  to: string;
  /** Minutes east of UTC of the viewer's time zone; date-only from/to are their local days. */
  tz: number;
  /**
   * Dates that could not be used, by field: what was sent and why. Such a date is left out of
   * from/to (the rest of the filters still apply), and the page says so next to its field.
   */
  errors?: FilterErrors;
};

export type FilterErrors = Partial<Record<"from" | "to", { value: string; message: string }>>;

const TAG = /^([a-z0-9-]{1,64}):(.+)$/;
/** In q: a tag filter (its value quoted, or up to the next space), or a word. */
const TOKEN = /(?<![^\s])([a-z0-9-]{1,64}):(?:"([^"]+)"|(\S+))|(\S+)/g;

/** How a tag filter is written in q: quoted when its value has spaces. */
export function tagTerm(key: string, value: string): string {
  return /\s/.test(value) && !value.includes('"') ? `${key}:"${value}"` : `${key}:${value}`;
}

export function readFilters(params: URLSearchParams): Filters {
  const words: string[] = [];
  const tags: [string, string][] = [];
  for (const [, key, quoted, plain, word] of (params.get("q") ?? "").matchAll(TOKEN)) {
    if (key !== undefined) tags.push([key, quoted ?? plain!]);
    else words.push(word!);
  }
  for (const t of params.getAll("tag")) {
    const m = TAG.exec(t);
    if (m) tags.push([m[1]!, m[2]!]);
  }
  const tz = viewerOffset(params);
  const { from, to, errors } = readRange((params.get("from") ?? "").trim().slice(0, 64), (params.get("to") ?? "").trim().slice(0, 64), tz);
  return {
    text: words.join(" ").slice(0, 200),
    tags: tags.slice(0, 8),
    user: (params.get("user") ?? "").trim().slice(0, 256),
    channel: (params.get("channel") ?? "").trim(),
    from,
    to,
    tz,
    ...(errors.from || errors.to ? { errors } : {}),
  };
}

/** from and to as sent, checked: a date that is not one, or a `to` before `from`, becomes an error. */
function readRange(from: string, to: string, tz: number): { from: string; to: string; errors: FilterErrors } {
  const errors: FilterErrors = {};
  const notDate = (value: string) => ({ value, message: `“${value}” is not a date: use YYYY-MM-DD.` });
  if (from && parseDate(from, false, tz) === undefined) errors.from = notDate(from);
  if (to && parseDate(to, true, tz) === undefined) errors.to = notDate(to);
  if (from && to && !errors.from && !errors.to && parseDate(to, true, tz)! <= parseDate(from, false, tz)!) {
    errors.to = { value: to, message: `“To” (${to}) is before “From” (${from}).` };
  }
  return { from: errors.from ? "" : from, to: errors.to ? "" : to, errors };
}

/** `tz`: the viewer's offset from UTC in minutes (east positive), as the pages send it. */
export function viewerOffset(params: URLSearchParams): number {
  return Math.max(-14 * 60, Math.min(14 * 60, Math.round(Number(params.get("tz")) || 0)));
}

export function isFiltered(f: Filters): boolean {
  return Boolean(f.text || f.tags.length || f.user || f.channel || f.from || f.to);
}

/** The page was asked for a search: filters, or dates it could not use. */
export function isSearch(f: Filters): boolean {
  return isFiltered(f) || Boolean(f.errors);
}

/** The URL query for these filters (q carries text and tags together, as typed). */
export function filterParams(f: Filters): Record<string, string | undefined> {
  const q = [f.text, ...f.tags.map(([k, v]) => tagTerm(k, v))].filter(Boolean).join(" ");
  const dated = Boolean(f.from || f.to);
  return { q: q || undefined, user: f.user || undefined, channel: f.channel || undefined, from: f.from || undefined, to: f.to || undefined, tz: dated && f.tz ? String(f.tz) : undefined };
}

/** A day as YYYY-MM-DD, or a date and time in ISO 8601 (with seconds, a fraction and a zone optional). */
const DATE = /^(\d{4})-(\d{2})-(\d{2})(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:\d{2})?)?$/;

/**
 * Dates from the form (YYYY-MM-DD, or an ISO 8601 date and time) to Unix ms; undefined for
 * anything else, or a day the calendar does not have (2024-02-30). A day is the viewer's (`tz`
 * minutes east of UTC), and `to` covers its whole day.
 */
function parseDate(text: string, endOfDay: boolean, tz: number): number | undefined {
  const m = DATE.exec(text);
  if (!m) return undefined;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const midnight = Date.UTC(year, month - 1, day);
  const check = new Date(midnight);
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) return undefined;
  const dayOnly = text.length === 10;
  const ms = dayOnly ? midnight - tz * 60_000 : Date.parse(text);
  if (!Number.isFinite(ms)) return undefined;
  return dayOnly && endOfDay ? ms + 86_400_000 : ms;
}

export function toEventQuery(project: string, f: Filters, channel?: string): EventQuery {
  return {
    project,
    channel: channel ?? (f.channel || undefined),
    userId: f.user || undefined,
    tags: f.tags.map(([k, v]) => `${k}:${v}`),
    q: f.text || undefined,
    from: parseDate(f.from, false, f.tz),
    to: parseDate(f.to, true, f.tz),
  };
}
