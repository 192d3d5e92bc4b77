// The project and channel pages: header, metric widgets, activity chart, filters, the live feed.
import { href } from "../../http/href.ts";
import { paths } from "../paths.ts";
import { SEARCH_COUNT_CAP } from "../../domain/feed.ts";
import { type FilterErrors, type Filters, filterParams, isFiltered, isSearch, toEventQuery } from "../filters.ts";
import { type Html, html } from "../html.ts";
import { feed, time } from "./events.ts";
import type { StoredEvent } from "../../model/event.ts";
import type { Metric } from "../../model/metric.ts";
import type { Channel, Project } from "../../model/project.ts";

/** A metric's value as stored: a number with every significant digit it has (up to 15, what a double holds). */
export function formatValue(value: Metric["value"]): string {
  if (value === null) return "—";
  if (typeof value === "boolean") return value ? "Yes" : "No";
  if (typeof value === "string") return value;
  return Number.isInteger(value)
    ? value.toLocaleString("en-US")
    : value.toLocaleString("en-US", { maximumSignificantDigits: 15 });
}

/** The classes of a value's element: text and booleans are shown unlike numbers. */
export function valueClass(value: Metric["value"]): string {
  return `metric-value${typeof value === "string" ? " text" : typeof value === "boolean" ? ` flag ${value ? "yes" : "no"}` : ""}`;
}

export function metricWidget(m: Metric, opts: { fresh?: boolean } = {}): Html {
  return html`<li class="metric${opts.fresh ? " fresh" : ""}" id="metric-${m.id}" data-value="${JSON.stringify(m.value)}" data-updated="${String(m.updatedAt)}">
  <a href="${href(paths.metric, { project: m.project, title: m.title })}">
    <span class="metric-title">${m.icon ? html`<span aria-hidden="true">${m.icon}</span> ` : ""}${m.title}</span>
    <span class="${valueClass(m.value)}" data-testid="metric-value">${formatValue(m.value)}</span>
    <span class="metric-time">${time(m.updatedAt)}</span>
  </a>
</li>`;
}

export function metricGrid(metrics: Metric[]): Html {
  return html`<section aria-label="Metrics"><ul class="metrics" id="metrics">${metrics.map((m) => metricWidget(m))}</ul></section>`;
}

export function filterBar(action: string, f: Filters, channels: Channel[] | null): Html {
  return html`<form class="filters" method="get" action="${action}" role="search" x-data="filters" x-on:submit="submit">
  ${f.errors ? errorSummary(f.errors) : ""}
  <div class="filter-main">
    <label for="q" class="visually-hidden">Search</label>
    <input type="search" id="q" name="q" value="${f.q}" placeholder="Search events, or tag:value" x-ref="q" x-on:keydown.slash.window="focusSearch" autocomplete="off">
    <button type="submit">Search</button>
    <button type="button" class="link-button" x-on:click="toggleMore" x-text="moreText" aria-controls="more-filters">More filters</button>
  </div>
  <div class="filter-more" id="more-filters" x-show="more"${f.user || f.from || f.to || f.channel || f.errors ? "" : html` x-cloak`}>
    <label>User id <input name="user" value="${f.user}" autocomplete="off"></label>
    ${channels ? html`<label>Channel <select name="channel"><option value="">All channels</option>${channels.map((c) => html`<option value="${c.name}"${c.name === f.channel ? " selected" : ""}>${c.name}</option>`)}</select></label>` : ""}
    ${dateField("from", "From", f)}
    ${dateField("to", "To", f)}
    <input type="hidden" name="tz" value="${String(f.tz)}" x-ref="tz">
    ${/* With filters that apply, Clear is in the result summary above the feed. */ isFiltered(f) ? "" : html`<a class="button secondary" href="${action}">Clear</a>`}
  </div>
</form>`;
}

/** What a text date field asks for: a day, a time after it allowed. */
const DATE_PATTERN = "\\d{4}-\\d{2}-\\d{2}.*";

/** A day a date field (`<input type="date">`) can hold: YYYY-MM-DD, one the calendar has. */
function isDay(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}

/**
 * A date field of the filters; a date that could not be used stays in it, with why next to it. A
 * value a date field cannot hold (2024-13-45, or a date with a time) is shown in a text field, so
 * what was typed stays in view.
 */
function dateField(name: "from" | "to", label: string, f: Filters): Html {
  const error = f.errors?.[name];
  const id = `filter-${name}`;
  const value = error ? error.value : f[name];
  const type =
    !value || isDay(value) ? html`type="date"` : html`type="text" pattern="${DATE_PATTERN}" placeholder="YYYY-MM-DD"`;
  const input = html`<input ${type} id="${id}" name="${name}" value="${value}"${error ? html` aria-invalid="true" aria-describedby="${id}-error"` : ""}>`;
  if (!error) return html`<label>${label} ${input}</label>`;
  return html`<div class="field"><label>${label} ${input}</label><p class="hint error" id="${id}-error">${error.message}</p></div>`;
}

/** What the search could not use, above it; each line leads to its field. */
function errorSummary(errors: FilterErrors): Html {
  const problems = (["from", "to"] as const).flatMap((name) =>
    errors[name] ? [{ name, message: errors[name].message }] : [],
  );
  return html`<div class="alert error-summary" role="alert" id="filter-errors">
    <p>The search ran without ${problems.length === 1 ? "this date" : "these dates"}:</p>
    <ul>${problems.map((p) => html`<li><a href="#filter-${p.name}" x-on:click="focusField">${p.name === "from" ? "From" : "To"}: ${p.message}</a></li>`)}</ul>
  </div>`;
}

const count = (n: number) => n.toLocaleString("en-US");

/**
 * How many events the search found: exactly, up to SEARCH_COUNT_CAP, and "more than" that beyond;
 * when the count could not be had within a read's budget, at least the first page's.
 */
function resultSummary(clear: string, f: FeedView, extra: Html | string = ""): Html {
  const n = f.matches ?? f.events.length;
  const text =
    n === 0
      ? "No events match"
      : f.matches === null && f.nextUrl
        ? `At least ${count(n)} events match`
        : n > SEARCH_COUNT_CAP
          ? `More than ${count(SEARCH_COUNT_CAP)} events match`
          : n === 1
            ? "1 event matches"
            : `${count(n)} events match`;
  return html`<div class="result-summary" data-testid="result-summary"><p class="result-count" role="status">${text}</p>${extra}<a class="button secondary small" href="${clear}">Clear</a></div>`;
}

/** The chart builder, asked what the search shows: its words, tags, user, channel and dates. */
function saveAsChart(project: string, f: Filters): Html {
  const q = toEventQuery("", f);
  const custom = q.from !== undefined || q.to !== undefined;
  const fields = {
    q: f.text || undefined,
    tag: f.tags.map(([k, v]) => `${k}:${v}`),
    user_id: f.user || undefined,
    channel: f.channel || undefined,
    range: custom ? "custom" : undefined,
    from: f.from ? f.from.slice(0, 10) : undefined,
    to: f.to ? f.to.slice(0, 10) : undefined,
    tzo: custom ? String(f.tz) : undefined,
  };
  return html`<a class="button secondary small needs-member" href="${href(paths.newChart, { project }, fields)}" data-testid="save-as-chart">Save as chart</a>`;
}

export type FeedView = {
  events: StoredEvent[];
  nextUrl: string | null;
  liveUrl: string;
  lastId: number;
  filtered: boolean;
  /** A search's matches (past SEARCH_COUNT_CAP: cap + 1); null without a search, or when counting took too long. */
  matches: number | null;
};

export function projectPage(
  p: Project,
  opts: { metrics: Metric[]; channels: Channel[]; filters: Filters; feed: FeedView; baseUrl: string; dashboard: Html },
): Html {
  const base = href(paths.project, { project: p.name });
  const search = isSearch(opts.filters);
  return html`<header class="page-header">
  <h1>${p.name}</h1>
  <div class="actions">
    <a class="button secondary small" href="${href(paths.charts, { project: p.name })}" data-testid="project-charts"><span aria-hidden="true">📊</span> Charts</a>
    <a class="button secondary small" href="${href(paths.alerts, { project: p.name })}" data-testid="project-alerts"><span aria-hidden="true">🔔</span> Alerts</a>
    <a class="button secondary small" href="${href(paths.checks, { project: p.name })}" data-testid="project-checks"><span aria-hidden="true">⏱</span> Checks</a>
    <a class="button secondary small" href="${href(paths.users, { project: p.name })}" data-testid="project-users"><span aria-hidden="true">👤</span> Users</a>
    <a class="button secondary small needs-member" href="${href(paths.projectSettings, { project: p.name })}" data-testid="project-settings"><span aria-hidden="true">⚙</span> Project settings</a>
  </div>
</header>
${
  /* With a search, the search bar and its results come first; the metrics and the chart fold. */
  search
    ? html`${filterBar(base, opts.filters, opts.channels)}
${isFiltered(opts.filters) ? resultSummary(base, opts.feed, saveAsChart(p.name, opts.filters)) : ""}
<details class="overview"><summary>${opts.metrics.length ? "Metrics and dashboard" : "Dashboard"}</summary>`
    : ""
}
${opts.metrics.length ? metricGrid(opts.metrics) : html`<ul class="metrics" id="metrics"></ul>`}
${opts.dashboard}
${search ? html`</details>` : filterBar(base, opts.filters, opts.channels)}
${feed({ ...opts.feed, showChannel: true, empty: emptyFeed(opts.baseUrl, p.name, opts.feed.filtered) })}`;
}

/** A project's settings: how long it keeps events, and deleting it (kept off the project page, away from the feed). */
export function projectSettingsPage(
  p: Project,
  opts: { deletable: boolean; channels: number; saved?: boolean; hooks: Html; shares?: Html },
): Html {
  const project = { project: p.name };
  return html`<header class="page-header">
  <p class="crumbs"><a href="${href(paths.project, project)}">${p.name}</a> / settings</p>
  <h1>Project settings</h1>
</header>
<section class="card" aria-labelledby="retention-title">
  <h2 id="retention-title">Retention</h2>
  <p class="muted small" id="retention-now">${p.retentionDays ? `Events older than ${p.retentionDays} days are deleted.` : "Events are kept forever."}</p>
  ${opts.saved ? html`<p class="alert success" role="status">Saved.</p>` : ""}
  <form hx-post="${href(paths.retention, project)}" class="stack" data-testid="retention-form">
    <label for="retention-days">Keep events for (days; empty: forever)</label>
    <input id="retention-days" class="narrow" type="number" name="days" min="1" max="36500" value="${p.retentionDays ?? ""}" placeholder="forever" aria-describedby="retention-now">
    <button type="submit" class="small">Save</button>
  </form>
</section>
${opts.hooks}
${opts.shares ?? ""}
${
  opts.deletable
    ? html`<section class="card danger-zone" aria-labelledby="delete-title">
  <h2 id="delete-title">Delete project</h2>
  <p>Deletes ${p.name}, its ${opts.channels === 1 ? "channel" : `${opts.channels} channels`}, their events, its metrics and its public tokens. You are asked to confirm first.</p>
  <button type="button" class="secondary danger" hx-get="${href(paths.projectDelete, project)}" hx-target="#modal" data-testid="delete-project">Delete project</button>
</section>`
    : html`<p class="muted small" data-testid="not-deletable">The default project cannot be deleted.</p>`
}`;
}

export function channelPage(
  p: Project,
  channel: Channel,
  opts: { filters: Filters; feed: FeedView; baseUrl: string },
): Html {
  const base = href(paths.channel, { project: p.name, channel: channel.name });
  return html`<header class="page-header">
  <p class="crumbs"><a href="${href(paths.project, { project: p.name })}">${p.name}</a></p>
  <h1># ${channel.name}</h1>
  <div class="actions">
    <a class="button secondary" href="${href(paths.users, { project: p.name })}" data-testid="project-users"><span aria-hidden="true">👤</span> Users</a>
    <button type="button" class="secondary danger needs-member" hx-get="${href(paths.channelDelete, { project: p.name, channel: channel.name })}" hx-target="#modal" data-testid="delete-channel">Delete channel</button>
  </div>
</header>
${filterBar(base, opts.filters, null)}
${isFiltered(opts.filters) ? resultSummary(base, opts.feed) : ""}
${feed({ ...opts.feed, showChannel: false, empty: emptyFeed(opts.baseUrl, p.name, opts.feed.filtered, channel.name) })}`;
}

function emptyFeed(baseUrl: string, project: string, filtered: boolean, channel?: string): Html {
  if (filtered) return html`<p>No events match these filters.</p>`;
  const body = JSON.stringify({ project, channel: channel ?? "general", event: "Hello", icon: "👋" });
  // Tokens are an admin's: a member or a viewer is not told to make one (the page's role hides it).
  return html`<p>No events yet. They appear here the moment they arrive.<span class="needs-admin"> Create a token in <a href="${paths.api}">Settings → API</a>, then:</span></p>
<pre class="snippet needs-admin">curl ${baseUrl}/v1/log -H "Authorization: Bearer $TOKEN" \\
  -H "Content-Type: application/json" -d '${body}'</pre>`;
}

/**
 * The activity chart: events per channel per day, as stacked bars, with the feed's filters (the
 * chart counts what the feed below it shows).
 */
export function activityCard(project: string, f: Filters): Html {
  const filtered = isFiltered(f) || Boolean(f.channel);
  return html`<section class="card chart-card" aria-labelledby="activity-title" x-data="activityChart" data-url="${href(paths.activity, { project }, filterParams(f))}" x-on:sb-refresh.window="refresh">
  <div class="chart-head">
    <h2 id="activity-title">Activity</h2>
    <label>Range <select x-on:change="setRange" aria-label="Chart range"><option value="7">7 days</option><option value="30" selected>30 days</option><option value="90">90 days</option></select></label>
  </div>
  ${filtered ? html`<p class="chart-note" data-testid="activity-filtered">Counts only the events that match the search.</p>` : ""}
  <div class="chart-wrap">
    <div class="chart" x-ref="chart" role="img" aria-label="${filtered ? "Matching events" : "Events"} per channel per day"></div>
    <div class="chart-tip" x-ref="tip" hidden></div>
  </div>
  <ul class="chart-legend" x-ref="legend" aria-label="Channels, with their events in the range"></ul>
</section>`;
}
