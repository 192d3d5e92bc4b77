// The project and channel pages: header, metric widgets, activity chart, filters, the live feed.
import { type Filters, tagTerm } from "../filters.ts";
import { type Html, html, seg } from "../html.ts";
import { feed, time } from "./events.ts";
import type { StoredEvent } from "../../model/event.ts";
import type { MetricPoint, Metric } from "../../model/metric.ts";
import type { Channel, Project } from "../../model/project.ts";

export function formatValue(value: Metric["value"]): string {
  if (value === null) return "—";
  if (typeof value === "string") return value;
  return Number.isInteger(value) ? value.toLocaleString("en-US") : value.toLocaleString("en-US", { maximumFractionDigits: 4 });
}

export function metricWidget(m: Metric, opts: { fresh?: boolean } = {}): Html {
  return html`<li class="metric${opts.fresh ? " fresh" : ""}" id="metric-${m.id}">
  <a href="/p/${seg(m.project)}/metrics/${seg(m.title)}">
    <span class="metric-title">${m.icon ? html`<span aria-hidden="true">${m.icon}</span> ` : ""}${m.title}</span>
    <span class="metric-value${typeof m.value === "string" ? " text" : ""}" data-testid="metric-value">${formatValue(m.value)}</span>
    <span class="metric-time">${time(m.updatedAt)}</span>
  </a>
</li>`;
}

export function metricGrid(metrics: Metric[]): Html {
  return html`<section aria-label="Metrics"><ul class="metrics" id="metrics">${metrics.map((m) => metricWidget(m))}</ul></section>`;
}

export function filterBar(action: string, f: Filters, channels: Channel[] | null): Html {
  const q = [f.text, ...f.tags.map(([k, v]) => tagTerm(k, v))].filter(Boolean).join(" ");
  return html`<form class="filters" method="get" action="${action}" role="search" x-data="filters">
  <div class="filter-main">
    <label for="q" class="visually-hidden">Search</label>
    <input type="search" id="q" name="q" value="${q}" placeholder="Search events, or tag:value" x-ref="q" x-on:keydown.slash.window="focusSearch" autocomplete="off">
    <button type="submit">Search</button>
    <button type="button" class="link-button" x-on:click="toggleMore" x-text="moreText" aria-controls="more-filters">More filters</button>
  </div>
  <div class="filter-more" id="more-filters" x-show="more"${f.user || f.from || f.to || f.channel ? "" : html` x-cloak`}>
    <label>User id <input name="user" value="${f.user}" autocomplete="off"></label>
    ${channels ? html`<label>Channel <select name="channel"><option value="">All channels</option>${channels.map((c) => html`<option value="${c.name}"${c.name === f.channel ? " selected" : ""}>${c.name}</option>`)}</select></label>` : ""}
    <label>From <input type="date" name="from" value="${f.from}"></label>
    <label>To <input type="date" name="to" value="${f.to}"></label>
    <input type="hidden" name="tz" value="${String(f.tz)}" x-ref="tz">
    <a class="button secondary" href="${action}">Clear</a>
  </div>
</form>`;
}

export type FeedView = { events: StoredEvent[]; nextUrl: string | null; liveUrl: string; lastId: number; filtered: boolean };

export function projectPage(p: Project, opts: { metrics: Metric[]; channels: Channel[]; filters: Filters; feed: FeedView; baseUrl: string; deletable: boolean }): Html {
  const base = `/p/${seg(p.name)}`;
  return html`<header class="page-header">
  <h1>${p.name}</h1>
  <div class="actions">
    <details class="retention">
      <summary>${p.retentionDays ? `Keeps ${p.retentionDays} days` : "Keeps events forever"}</summary>
      <form hx-post="${base}/retention" class="stack card floating">
        <label>Keep events for (days; empty: forever) <input type="number" name="days" min="1" max="36500" value="${p.retentionDays ?? ""}" placeholder="forever"></label>
        <button type="submit" class="small">Save</button>
      </form>
    </details>
    ${opts.deletable ? html`<button type="button" class="secondary danger" hx-get="${base}/delete" hx-target="#modal" data-testid="delete-project">Delete project</button>` : ""}
  </div>
</header>
${opts.metrics.length ? metricGrid(opts.metrics) : html`<ul class="metrics" id="metrics"></ul>`}
<section class="card chart-card" aria-label="Events per channel per day" x-data="activityChart" data-url="${base}/activity.json">
  <div class="chart-head">
    <h2>Activity</h2>
    <label>Range <select x-on:change="setRange" aria-label="Chart range"><option value="7">7 days</option><option value="30" selected>30 days</option><option value="90">90 days</option></select></label>
  </div>
  <div class="chart" x-ref="chart" role="img" aria-label="Events per channel per day"></div>
</section>
${filterBar(base, opts.filters, opts.channels)}
${feed({ ...opts.feed, showChannel: true, empty: emptyFeed(opts.baseUrl, p.name, opts.feed.filtered) })}`;
}

export function channelPage(p: Project, channel: Channel, opts: { filters: Filters; feed: FeedView; baseUrl: string }): Html {
  const base = `/p/${seg(p.name)}/c/${seg(channel.name)}`;
  return html`<header class="page-header">
  <p class="crumbs"><a href="/p/${seg(p.name)}">${p.name}</a></p>
  <h1># ${channel.name}</h1>
  <div class="actions">
    <button type="button" class="secondary danger" hx-get="${base}/delete" hx-target="#modal" data-testid="delete-channel">Delete channel</button>
  </div>
</header>
${filterBar(base, opts.filters, null)}
${feed({ ...opts.feed, showChannel: false, empty: emptyFeed(opts.baseUrl, p.name, opts.feed.filtered, channel.name) })}`;
}

function emptyFeed(baseUrl: string, project: string, filtered: boolean, channel?: string): Html {
  if (filtered) return html`<p>No events match these filters.</p>`;
  const body = JSON.stringify({ project, channel: channel ?? "general", event: "Hello", icon: "👋" });
  return html`<p>No events yet. They appear here the moment they arrive. Create a token in <a href="/settings/api">Settings → API</a>, then:</p>
<pre class="snippet">curl ${baseUrl}/v1/log -H "Authorization: Bearer $TOKEN" \\
  -H "Content-Type: application/json" -d '${body}'</pre>`;
}

export function metricPage(m: Metric, points: MetricPoint[], days: number): Html {
  const numeric = points.every((p) => typeof p.value === "number" || p.value === null);
  return html`<header class="page-header">
  <p class="crumbs"><a href="/p/${seg(m.project)}">${m.project}</a> / metrics</p>
  <h1>${m.icon ? html`<span aria-hidden="true">${m.icon}</span> ` : ""}${m.title}</h1>
</header>
<ul class="metrics" id="metrics">${metricWidgetPlain(m)}</ul>
<section class="card chart-card">
  <div class="chart-head"><h2>History</h2>
  <nav class="range" aria-label="Range">${[1, 7, 30, 90].map((d) => html`<a href="?days=${d}"${d === days ? html` aria-current="page"` : ""}>${d === 1 ? "24 h" : `${d} days`}</a>`)}</nav></div>
  ${
    numeric && points.length
      ? html`<div class="chart" x-data="metricChart" data-title="${m.title}" data-points="${JSON.stringify(points.map((p) => [p.at / 1000, p.value]))}" role="img" aria-label="${m.title} over time"></div>`
      : points.length
        ? html`<table class="history"><thead><tr><th>Minute</th><th>Value</th></tr></thead><tbody>${points
            .slice(-200)
            .reverse()
            .map((p) => html`<tr><td>${time(p.at)}</td><td>${formatValue(p.value)}</td></tr>`)}</tbody></table>`
        : html`<p class="empty">No values in this range.</p>`
  }
</section>`;
}

function metricWidgetPlain(m: Metric): Html {
  return html`<li class="metric" id="metric-${m.id}"><div><span class="metric-title">Now</span><span class="metric-value" data-testid="metric-value">${formatValue(m.value)}</span><span class="metric-time">${time(m.updatedAt)}</span></div></li>`;
}
