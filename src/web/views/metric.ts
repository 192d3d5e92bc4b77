// A metric's page: the value now, and its history over a window as a chart (numbers) or a list of
// its newest values (text), both following new values live.
import type { MetricChart } from "../../domain/metric-history.ts";
import type { Metric, MetricBucket } from "../../model/metric.ts";
import { type Html, html, seg } from "../html.ts";
import { time } from "./events.ts";
import { formatValue, valueClass } from "./project.ts";

export type MetricPageView = { days: number; now: number; liveUrl: string };

export function metricPage(
  { metric: m, buckets, before, recent }: MetricChart,
  { days, now, liveUrl }: MetricPageView,
): Html {
  const window = days === 1 ? "the last 24 hours" : `the last ${days} days`;
  const drawn = !recent && (buckets.length > 0 || before !== null || typeof m.value === "number");
  return html`<header class="page-header">
  <p class="crumbs"><a href="/p/${seg(m.project)}">${m.project}</a> / metrics</p>
  <h1>${m.icon ? html`<span aria-hidden="true">${m.icon}</span> ` : ""}${m.title}</h1>
</header>
<div x-data="metricPage" data-live-url="${liveUrl}" data-metric-id="${String(m.id)}">
<ul class="metrics now" id="metrics">${metricNow(m)}</ul>
<section class="card chart-card">
  <div class="chart-head"><h2>History</h2>
  <nav class="range" aria-label="Range">${[1, 7, 30, 90].map((d) => html`<a href="?days=${d}"${d === days ? html` aria-current="page"` : ""}>${d === 1 ? "24 h" : `${d} days`}</a>`)}</nav></div>
  ${
    drawn
      ? html`${extremes(buckets)}<div class="chart" x-ref="chart" data-title="${m.title}" data-from="${String(now - days * 86_400_000)}" data-to="${String(now)}" data-before="${JSON.stringify(before ? before.value : null)}" data-current="${JSON.stringify(m.value)}" data-points="${JSON.stringify(buckets.map(chartSpan))}" role="img" aria-label="${m.title} over ${window}"></div>`
      : recent?.length
        ? html`<table class="history"><thead><tr><th>Minute</th><th>Value</th></tr></thead><tbody>${recent.map((p) => html`<tr><td>${time(p.at)}</td><td>${formatValue(p.value)}</td></tr>`)}</tbody></table>`
        : html`<p class="empty">No values in this range.</p>`
  }
</section>
</div>`;
}

/**
 * A span as the chart takes it: [minute, value] when it holds one point, else [first minute, first,
 * lowest, highest, last minute, last] (src/browser/components/metric-page.ts draws the line through all four).
 */
function chartSpan(b: MetricBucket): unknown[] {
  return b.count === 1
    ? [b.first.at, b.first.value]
    : [b.first.at, b.first.value, b.min, b.max, b.last.at, b.last.value];
}

/** The lowest and highest values set in the window, in words: a spike too thin to see on a long chart is still read here. */
function extremes(buckets: MetricBucket[]): Html | string {
  const mins = buckets.flatMap((b) => (b.min === null ? [] : [b.min]));
  const maxes = buckets.flatMap((b) => (b.max === null ? [] : [b.max]));
  if (!mins.length) return "";
  const count = buckets.reduce((n, b) => n + b.count, 0);
  return html`<p class="chart-note" data-testid="metric-extremes">Lowest <strong data-testid="metric-min">${formatValue(Math.min(...mins))}</strong>, highest <strong data-testid="metric-max">${formatValue(Math.max(...maxes))}</strong> of ${count.toLocaleString("en-US")} ${count === 1 ? "value" : "values"} in this range.</p>`;
}

function metricNow(m: Metric): Html {
  return html`<li class="metric" id="metric-${m.id}"><div><span class="metric-title">Now</span><span class="${valueClass(m.value)}" data-testid="metric-value">${formatValue(m.value)}</span><span class="metric-time">${time(m.updatedAt)}</span></div></li>`;
}
