// Page views, from LogSnag's POST /v1/page and the browser tracker (public/web/ls.js). They are
// events like any other, in one channel and named by the path, so they appear on the user's
// journey and are counted, searched and filtered with the same tools (docs/web.md, "Page views").
import type { Tags } from "../model/event.ts";
import type { LogInput } from "./ingest-writes.ts";

export const PAGEVIEWS_CHANNEL = "pageviews";

export type PageViewInput = {
  project: string;
  userId?: string;
  path: string;
  /** A URL (only its host is kept) or a bare host name. */
  referrer?: string;
  utmSource?: string;
  title?: string;
};

/** The event a page view is stored as: a channel-limited token's rules apply to it as to any event in PAGEVIEWS_CHANNEL. */
export function pageViewEvent(view: PageViewInput): LogInput {
  const tags: Tags = {};
  const host = view.referrer === undefined ? null : referrerHost(view.referrer);
  if (host) tags.referrer = host;
  if (view.utmSource) tags["utm-source"] = view.utmSource;
  return {
    project: view.project,
    channel: PAGEVIEWS_CHANNEL,
    event: view.path,
    description: view.title || undefined,
    tags: Object.keys(tags).length ? tags : undefined,
    userId: view.userId,
  };
}

const HOST = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:\d{1,5})?$/;

/**
 * The host of a referrer: of a URL (`https://www.example.com/a?b` → `www.example.com`), or a bare
 * host name as some clients send it. Only the host is kept: a referrer's path and query can carry
 * what is nobody's business (a search, a token in a link). Null when it is neither.
 */
export function referrerHost(raw: string): string | null {
  const text = raw.trim();
  if (text === "") return null;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    try {
      return new URL(text).host || null;
    } catch {
      return null;
    }
  }
  const host = text.toLowerCase();
  return HOST.test(host) && host.length <= 255 ? host : null;
}
