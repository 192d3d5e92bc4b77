// Events as the dashboard shows them: feed items, the endless feed, and the detail view.
import { type Html, html, query, seg, trusted } from "../html.ts";
import { tagTerm } from "../filters.ts";
import { eventJson } from "../../domain/event-json.ts";
import { dashboardHtml } from "../../domain/safe-html.ts";
import { tagText, type StoredEvent } from "../../model/event.ts";
import { PRIORITY_NAMES, priorityBadge } from "./priority.ts";

export function description(e: StoredEvent): Html | string {
  if (!e.description) return "";
  // Plain text keeps its line breaks (the CSS keeps whitespace); html`` escapes it.
  return e.parser === "markdown" ? trusted(dashboardHtml(e.description)) : e.description;
}

// One way to write a date and time on every page: a medium date and a long time (with its zone),
// "Jan 15, 2026, 12:00:00 PM UTC", or the date alone where a day is enough. The page says it in
// UTC; the browser (src/browser/times.ts) says it again, in the same format, in the viewer's zone and language.
const DATE_TIME = new Intl.DateTimeFormat("en-US", { dateStyle: "medium", timeStyle: "long", timeZone: "UTC" });
const DATE = new Intl.DateTimeFormat("en-US", { dateStyle: "medium", timeZone: "UTC" });

/** Relative time now; the browser keeps it current and shows the absolute time on hover. */
export function time(ms: number, now = Date.now()): Html {
  return html`<time datetime="${new Date(ms).toISOString()}" title="${DATE_TIME.format(ms)}" data-relative>${relative(ms, now)}</time>`;
}

/** An absolute time. The browser shows it in the viewer's time zone; the HTML says it in UTC. */
export function absoluteTime(ms: number): Html {
  return html`<time datetime="${new Date(ms).toISOString()}" data-absolute>${DATE_TIME.format(ms)}</time>`;
}

export function relative(ms: number, now: number): string {
  const s = Math.round((now - ms) / 1000);
  const abs = Math.abs(s);
  const [value, unit] =
    abs < 45
      ? [0, "now"]
      : abs < 3600
        ? [Math.round(abs / 60), "min"]
        : abs < 86400
          ? [Math.round(abs / 3600), "h"]
          : abs < 86400 * 45
            ? [Math.round(abs / 86400), "d"]
            : [0, "date"];
  if (unit === "now") return "just now";
  if (unit === "date") return DATE.format(ms);
  return s >= 0 ? `${value} ${unit} ago` : `in ${value} ${unit}`;
}

/** A chip searches the feed it is in: the project's, or, in a channel's feed, that channel's. */
export function tagChips(project: string, tags: StoredEvent["tags"], channel?: string): Html | string {
  const entries = Object.entries(tags ?? {});
  if (!entries.length) return "";
  const feed = `/p/${seg(project)}${channel === undefined ? "" : `/c/${seg(channel)}`}`;
  return html`<ul class="tags" aria-label="Tags">${entries.map(([k, v]) => {
    const value = tagText(v);
    // A long key or value is cut on screen (CSS): the tooltip has them whole.
    const title =
      k.length > CHIP_KEY_CHARS || [...value].length > CHIP_VALUE_CHARS ? html` title="${k}: ${value}"` : "";
    return html`<li><a class="tag" href="${feed}${query({ q: tagTerm(k, value) })}"${title}><span class="tag-key">${k}</span><span class="tag-value">${value}</span></a></li>`;
  })}</ul>`;
}

/** Tag keys and values longer than these may be cut in a chip (24ch and 22ch in CSS; fewer wide letters fit). */
const CHIP_KEY_CHARS = 20;
const CHIP_VALUE_CHARS = 12;

/** The event page's tags: whole values, wrapped, each with a copy button and a link to filter by it. */
function tagTable(project: string, tags: StoredEvent["tags"]): Html | string {
  const entries = Object.entries(tags ?? {});
  if (!entries.length) return "";
  return html`<section class="card tag-table" aria-labelledby="tags-title">
  <h2 id="tags-title">Tags</h2>
  <table>
    <thead><tr><th scope="col">Key</th><th scope="col">Value</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>${entries.map(([k, v]) => {
      const value = tagText(v);
      return html`<tr x-data="copyButton"><th scope="row" class="tag-name">${k}</th><td><span class="tag-value" x-ref="source">${value}</span></td><td class="tag-actions"><button type="button" class="secondary small" x-on:click="copy"><span x-text="label">Copy</span><span class="visually-hidden"> ${k}</span></button> <a href="/p/${seg(project)}${query({ q: tagTerm(k, value) })}">Filter<span class="visually-hidden"> by ${k}</span></a></td></tr>`;
    })}</tbody>
  </table>
</section>`;
}

export function eventItem(e: StoredEvent, opts: { showChannel?: boolean; fresh?: boolean } = {}): Html {
  const project = seg(e.project);
  return html`<li class="event${opts.fresh ? " fresh" : ""}${e.notify ? " notify" : ""}" id="event-${e.id}" data-id="${e.id}" data-ts="${e.ts}">
  <div class="event-icon" aria-hidden="true">${e.icon ?? "•"}</div>
  <div class="event-body">
    <div class="event-head">
      <a class="event-name" href="/p/${project}/events/${e.id}">${e.name}</a>
      ${time(e.ts)}
    </div>
    ${e.description ? html`<div class="event-description${e.parser === "markdown" ? " markdown" : " plain"}">${description(e)}</div>` : ""}
    <div class="event-meta">
      ${opts.showChannel !== false ? html`<a class="channel-link" href="/p/${project}/c/${seg(e.channel)}">#${e.channel}</a>` : ""}
      ${e.userId ? html`<a class="user-link" href="/p/${project}/users/${seg(e.userId)}">👤 ${e.userId}</a>` : ""}
      ${e.historical ? historicalMark() : ""}
      ${priorityBadge(e.priority)}
    </div>
    ${tagChips(e.project, e.tags, opts.showChannel === false ? e.channel : undefined)}
  </div>
</li>`;
}

/**
 * An event sent with a timestamp: a note in the event's details (a clock and a word, in the
 * muted text of the channel and user beside it), not a chip that reads as a tag; the words say why.
 */
function historicalMark(): Html {
  return html`<span class="historical" data-testid="historical"><span class="historical-icon" aria-hidden="true">🕓</span>historical<span class="visually-hidden"> event: sent with a timestamp, shown at that time and never pushed</span></span>`;
}

/** A page of the feed; its last item loads the next page when scrolled into view. */
export function feedItems(events: StoredEvent[], nextUrl: string | null, opts: { showChannel?: boolean } = {}): Html {
  return html`${events.map((e) => eventItem(e, opts))}${
    nextUrl
      ? html`<li class="feed-more" hx-get="${nextUrl}" hx-trigger="revealed" hx-swap="outerHTML" aria-hidden="true"><span class="spinner"></span> Loading older events…</li>`
      : ""
  }`;
}

export function feed(opts: {
  events: StoredEvent[];
  nextUrl: string | null;
  liveUrl: string | null;
  lastId: number;
  showChannel?: boolean;
  empty: Html | string;
}): Html {
  return html`<section class="feed" aria-label="Events"${opts.liveUrl ? html` x-data="liveFeed" data-live-url="${opts.liveUrl}" data-last-id="${opts.lastId}"` : ""}>
  ${
    opts.liveUrl
      ? html`<button type="button" class="new-pill" x-show="hasPending" x-cloak x-on:click="showPending" x-text="pendingText" data-testid="new-events-pill"></button>
  <p class="live-status" x-bind:class="statusClass" x-text="statusText" aria-live="polite"></p>`
      : ""
  }
  <ol class="events" id="events">${opts.events.length ? feedItems(opts.events, opts.nextUrl, opts) : ""}</ol>
  ${opts.events.length ? "" : html`<div class="empty" id="feed-empty">${opts.empty}</div>`}
</section>`;
}

export function eventDetail(e: StoredEvent): Html {
  const project = seg(e.project);
  const rows: [string, Html | string][] = [
    ["Project", html`<a href="/p/${project}">${e.project}</a>`],
    ["Channel", html`<a href="/p/${project}/c/${seg(e.channel)}">#${e.channel}</a>`],
    ["Event time", html`${absoluteTime(e.ts)} <span class="muted">(${time(e.ts)})</span>`],
    ["Received", html`${absoluteTime(e.receivedAt)} <span class="muted">(${time(e.receivedAt)})</span>`],
    [
      "User",
      e.userId
        ? html`<a href="/p/${project}/users/${seg(e.userId)}">${e.userId}</a>`
        : html`<span class="muted">none</span>`,
    ],
    ["Notify", e.notify ? (e.historical ? "requested, but not sent (historical event)" : "yes") : "no"],
    [
      "Priority",
      html`${String(e.priority ?? 3)} of 5 (${PRIORITY_NAMES[e.priority ?? 3] ?? ""}) ${priorityBadge(e.priority)}`,
    ],
    ["Format", e.parser],
    ["Id", String(e.id)],
  ];
  return html`<article class="event-detail" id="event-${e.id}">
  <header class="page-header">
    <p class="crumbs"><a href="/p/${project}">${e.project}</a> / <a href="/p/${project}/c/${seg(e.channel)}">#${e.channel}</a></p>
    <h1><span class="event-icon big" aria-hidden="true">${e.icon ?? "•"}</span> ${e.name}</h1>
  </header>
  ${e.description ? html`<div class="card event-description${e.parser === "markdown" ? " markdown" : " plain"}">${description(e)}</div>` : ""}
  ${tagTable(e.project, e.tags)}
  <dl class="facts">${rows.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>
  <details class="raw"><summary>JSON</summary><pre>${JSON.stringify(eventJson(e), null, 2)}</pre></details>
</article>`;
}
