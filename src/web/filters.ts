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
};

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
  return {
    text: words.join(" ").slice(0, 200),
    tags: tags.slice(0, 8),
    user: (params.get("user") ?? "").trim().slice(0, 256),
    channel: (params.get("channel") ?? "").trim(),
    from: (params.get("from") ?? "").trim(),
    to: (params.get("to") ?? "").trim(),
    tz: viewerOffset(params),
  };
}

/** `tz`: the viewer's offset from UTC in minutes (east positive), as the pages send it. */
export function viewerOffset(params: URLSearchParams): number {
  return Math.max(-14 * 60, Math.min(14 * 60, Math.round(Number(params.get("tz")) || 0)));
}

export function isFiltered(f: Filters): boolean {
  return Boolean(f.text || f.tags.length || f.user || f.from || f.to);
}

/** The URL query for these filters (q carries text and tags together, as typed). */
export function filterParams(f: Filters): Record<string, string | undefined> {
  const q = [f.text, ...f.tags.map(([k, v]) => tagTerm(k, v))].filter(Boolean).join(" ");
  const dated = Boolean(f.from || f.to);
  return { q: q || undefined, user: f.user || undefined, channel: f.channel || undefined, from: f.from || undefined, to: f.to || undefined, tz: dated && f.tz ? String(f.tz) : undefined };
}

/**
 * Dates from the form (YYYY-MM-DD, or anything Date parses) to Unix ms. A day is the viewer's
 * (`tz` minutes east of UTC), and `to` covers its whole day.
 */
function parseDate(text: string, endOfDay: boolean, tz: number): number | undefined {
  if (!text) return undefined;
  const dayOnly = /^\d{4}-\d{2}-\d{2}$/.test(text);
  const ms = dayOnly ? Date.parse(`${text}T00:00:00Z`) - tz * 60_000 : Date.parse(text);
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
