// A feed's filters, as they live in the URL so a search can be shared and bookmarked:
//   ?q=kettle plan:pro  &user=alice  &channel=orders  &from=2026-11-01  &to=2026-11-08  &tag=env:prod
//   &tz=60 (the viewer's offset from UTC in minutes: from and to are days where they are)
// In q, a word shaped like key:value is a tag filter; the rest is free text. A value with spaces,
// an empty one, or one that starts with a double quote is written in quotes, with backslash
// escapes inside: key:"a value", key:"", key:"say \"hi\"", key:"C:\\dir\nnext line". Any stored
// value can be written so (tagTerm), and reads back as it was (readSearch).
import { z } from "zod";
import type { EventQuery } from "../domain/feed.ts";
import { param } from "./form.ts";

export type Filters = {
  /** The search as it reads, in the order typed: words as typed, tag filters as tagTerm writes them. */
  q: string;
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

/** A term of q: a word of free text, or a tag filter. */
export type SearchTerm = { word: string } | { tag: [string, string] };

const TAG = /^([a-z0-9-]{1,64}):(.+)$/;
const MAX_TAGS = 8;
const MAX_TEXT = 200;
/** The start of a tag filter in q: its key and the colon. */
const TAG_START = /[a-z0-9-]{1,64}:/y;
const WHITESPACE = /\s/;
/** Characters a quoted value writes as an escape (the rest as they are). */
const ESCAPES: Record<string, string> = { "\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t" };
const UNESCAPES: Record<string, string> = { n: "\n", r: "\r", t: "\t" };

/**
 * How a tag filter is written in q: the value as it is when that reads back the same (no
 * whitespace, not empty, not starting with a quote), else quoted with backslash escapes. A line
 * break is escaped too: a search box drops it.
 */
export function tagTerm(key: string, value: string): string {
  if (value !== "" && !WHITESPACE.test(value) && !value.startsWith('"')) return `${key}:${value}`;
  return `${key}:"${value.replace(/[\\"\n\r\t]/g, (c) => ESCAPES[c]!)}"`;
}

/**
 * q's terms in the order typed. key:"..." reads up to the first quote not escaped by a backslash
 * (\" a quote, \\ a backslash, \n \r \t a line feed, carriage return and tab, \ before anything
 * else that character); key:"" is the empty value. A quote never closed is read as a plain value.
 */
export function readSearch(q: string): SearchTerm[] {
  const terms: SearchTerm[] = [];
  let at = 0;
  while (at < q.length) {
    if (WHITESPACE.test(q[at]!)) {
      at++;
      continue;
    }
    TAG_START.lastIndex = at;
    const key = TAG_START.exec(q)?.[0].slice(0, -1);
    const valueAt = at + (key?.length ?? 0) + 1;
    const quoted = key !== undefined && q[valueAt] === '"' ? readQuoted(q, valueAt + 1) : null;
    if (quoted) {
      terms.push({ tag: [key!, quoted.value] });
      at = quoted.end;
      continue;
    }
    let end = at;
    while (end < q.length && !WHITESPACE.test(q[end]!)) end++;
    const token = q.slice(at, end);
    // key: with nothing after it is a word, as it always was.
    if (key !== undefined && end > valueAt) terms.push({ tag: [key, q.slice(valueAt, end)] });
    else terms.push({ word: token });
    at = end;
  }
  return terms;
}

/** A quoted value from just after its opening quote: the value and where it ends, or null when no quote closes it. */
function readQuoted(q: string, from: number): { value: string; end: number } | null {
  let value = "";
  for (let i = from; i < q.length; i++) {
    const c = q[i]!;
    if (c === '"') return { value, end: i + 1 };
    if (c === "\\" && i + 1 < q.length) {
      const next = q[++i]!;
      value += UNESCAPES[next] ?? next;
    } else value += c;
  }
  return null;
}

/** q written back from its terms, in their order. */
export function searchText(terms: SearchTerm[]): string {
  return terms.map((t) => ("word" in t ? t.word : tagTerm(...t.tag))).join(" ");
}

/** The query parameters a feed's filters are read from (first of each, as a browser's form sends one). */
export const filterFields = {
  q: param,
  tag: z.array(z.string()),
  user: param,
  channel: param,
  from: param,
  to: param,
  tz: param,
};
type FilterInput = {
  q?: string;
  tag: string[];
  user?: string;
  channel?: string;
  from?: string;
  to?: string;
  tz?: string;
};

/** A page's query that holds only filters. */
export const filtersQuery = z.object(filterFields).transform((q) => filtersOf(q));

export function readFilters(params: URLSearchParams): Filters {
  const first = (name: string) => params.get(name) ?? undefined;
  return filtersOf({
    q: first("q"),
    tag: params.getAll("tag"),
    user: first("user"),
    channel: first("channel"),
    from: first("from"),
    to: first("to"),
    tz: first("tz"),
  });
}

export function filtersOf(params: FilterInput): Filters {
  const terms = readSearch(params.q ?? "");
  for (const t of params.tag) {
    const m = TAG.exec(t);
    if (m) terms.push({ tag: [m[1]!, m[2]!] });
  }
  // At most 8 tag filters, and 200 characters of words (spaces between them counted); what is
  // left out is left out of q too.
  const kept: SearchTerm[] = [];
  let tags = 0;
  let room = MAX_TEXT;
  for (const t of terms) {
    if ("tag" in t) {
      if (++tags <= MAX_TAGS) kept.push(t);
      continue;
    }
    const space = room < MAX_TEXT ? 1 : 0; // before every word but the first
    const word = room > space ? t.word.slice(0, room - space) : "";
    if (word) kept.push({ word });
    room -= word ? word.length + space : room;
  }
  const tz = viewerOffset(params.tz);
  const { from, to, errors } = readRange(
    (params.from ?? "").trim().slice(0, 64),
    (params.to ?? "").trim().slice(0, 64),
    tz,
  );
  return {
    q: searchText(kept),
    text: kept.flatMap((t) => ("word" in t ? [t.word] : [])).join(" "),
    tags: kept.flatMap((t) => ("tag" in t ? [t.tag] : [])),
    user: (params.user ?? "").trim().slice(0, 256),
    channel: (params.channel ?? "").trim(),
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
export function viewerOffset(tz: string | undefined): number {
  return Math.max(-14 * 60, Math.min(14 * 60, Math.round(Number(tz ?? null) || 0)));
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
  const dated = Boolean(f.from || f.to);
  return {
    q: f.q || undefined,
    user: f.user || undefined,
    channel: f.channel || undefined,
    from: f.from || undefined,
    to: f.to || undefined,
    tz: dated && f.tz ? String(f.tz) : undefined,
  };
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
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day)
    return undefined;
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
