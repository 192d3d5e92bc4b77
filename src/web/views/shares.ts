// Shared pages as people without an account see them (/s/<key>): a page of its own, with no link
// into the signed-in dashboard, no feed and no user ids: a dashboard's chosen cards, drawn as the
// project's dashboard draws them, or a status page (checks and alert rules with their 90 days,
// metrics' values). `?kiosk=1` fills a wall screen: bigger type, no chrome. And the section of the
// project's settings where admins make and revoke them.
import type { BadgeStatus } from "../../domain/check-badges.ts";
import { HISTORY_DAYS, type StatusAnswer } from "../../domain/share-status.ts";
import { href } from "../../http/href.ts";
import type { Chart } from "../../model/chart.ts";
import type { Check } from "../../model/check.ts";
import type { Alert } from "../../model/alert.ts";
import type { Metric } from "../../model/metric.ts";
import type { Project } from "../../model/project.ts";
import type { Share } from "../../model/share.ts";
import { CHART_KIND_MODULES } from "../../domain/chart-kinds/index.ts";
import type { Assets } from "../assets.ts";
import { type Html, html } from "../html.ts";
import { paths } from "../paths.ts";
import { time } from "./events.ts";
import { HTMX_CONFIG } from "./layout.ts";
import { formatValue, valueClass } from "./project.ts";

const STATUS_WORDS: Record<BadgeStatus, string> = {
  up: "Operational",
  down: "Down",
  late: "Late",
  new: "No data yet",
  paused: "Paused",
};

/** The page around a shared view: the same head and CSP as the dashboard's, no navigation, noindex. */
export function sharedLayout(
  assets: Assets,
  o: { title: string; body: Html; kiosk: boolean; charts: boolean; liveUrl: string; refreshMs: number },
): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<meta name="color-scheme" content="light dark">
<meta name="referrer" content="no-referrer">
<meta name="htmx-config" content="${HTMX_CONFIG}">
<title>${o.title}</title>
<link rel="icon" href="${assets.url("icon.svg")}" type="image/svg+xml">
<link rel="stylesheet" href="${assets.url("app.css")}">
${o.charts ? html`<link rel="stylesheet" href="${assets.url("uplot.css")}"><script defer src="${assets.url("uplot.js")}"></script>` : ""}
<script defer src="${assets.url("app.js")}"></script>
<script defer src="${assets.url("htmx.js")}"></script>
<script defer src="${assets.url("alpine.js")}"></script>
</head>
<body class="shared-page${o.kiosk ? " kiosk" : ""}">
<main id="main" class="shared" x-data="dashboard" x-on:sb-events.window="eventsArrived" data-refresh-ms="${String(o.refreshMs)}" data-arranging="0">
${o.body}
<footer class="shared-foot muted small" x-data="sharedStream" data-stream-url="${o.liveUrl}"><span class="shared-live">Updated live <span x-text="statusText">(connecting…)</span></span>
<p class="shared-revoked" role="alert" data-testid="share-revoked" hidden x-bind:hidden="!revoked">This link was revoked: what this page shows is no longer updated. Ask whoever shared it for a new link.</p></footer>
</main>
</body>
</html>`;
}

const kindName = (c: Chart) => CHART_KIND_MODULES[c.kind].name;

/** A dashboard share: its title and text, and each chosen card, asked when it shows and as events arrive. */
export function sharedDashboard(share: Share, project: Project, charts: Chart[]): Html {
  const key = share.key;
  return html`<header class="shared-head">
  <h1>${share.title || project.name}</h1>
  ${share.text ? html`<p class="shared-text">${share.text}</p>` : ""}
</header>
<ol class="cards" aria-label="Cards">
  ${charts.map((chart) => {
    const ref = String(chart.id);
    const url = href(paths.sharedCard, { key, id: ref }, { compact: 1 });
    const wide =
      chart.kind === "funnel" || chart.kind === "retention" || (chart.kind === "series" && chart.definition.group_by);
    return html`<li class="card-item${wide ? " wide" : ""}" id="card-${ref}" data-card="${ref}"><section class="card chart-card" aria-labelledby="card-title-${ref}">
  <div class="chart-head"><h2 id="card-title-${ref}">${chart.name}</h2><span class="muted small">${kindName(chart)}</span></div>
  <div class="card-body" hx-get="${url}" hx-trigger="load" data-live-url="${url}&live=1" data-testid="card-body"><p class="muted small">Loading…</p></div>
</section></li>`;
  })}
</ol>
${charts.length ? "" : html`<p class="muted">Nothing is shared here any more.</p>`}`;
}

/** A status share: its title and text, then the body (asked again as things change). */
export function sharedStatus(share: Share, project: Project, answer: StatusAnswer): Html {
  const url = href(paths.sharedStatus, { key: share.key });
  return html`<header class="shared-head">
  <h1>${share.title || `${project.name} status`}</h1>
  ${share.text ? html`<p class="shared-text">${share.text}</p>` : ""}
</header>
<div id="status-body" data-live-url="${url}?live=1">${statusBody(answer)}</div>`;
}

function overall(answer: StatusAnswer): { status: BadgeStatus; words: string } {
  const all = answer.items.map((i) => i.status);
  if (all.includes("down")) return { status: "down", words: "Something is down" };
  if (all.includes("late")) return { status: "late", words: "Something is late" };
  if (all.includes("up")) return { status: "up", words: "All systems operational" };
  return { status: "new", words: all.length ? "No data yet" : "Metrics" };
}

const percent = (ratio: number) =>
  `${(ratio * 100).toLocaleString("en-US", { maximumFractionDigits: ratio === 1 ? 0 : 2 })}%`;

const DAY_WORDS = { up: "up", down: "down", none: "no data" } as const;

/** The checks and rules with their bars, and the metrics' values: what the stream asks again. */
export function statusBody(answer: StatusAnswer): Html {
  const all = overall(answer);
  const dayOf = (i: number) => answer.dates[i] ?? "";
  return html`${answer.items.length ? html`<p class="status-overall" data-status="${all.status}" data-testid="status-overall"><span class="status-dot" aria-hidden="true"></span>${all.words}</p>` : ""}
${
  answer.items.length
    ? html`<ul class="status-items" aria-label="Checks and alert rules">${answer.items.map(
        (item) => html`<li class="status-item card" data-status="${item.status}" data-testid="status-item">
  <div class="status-line"><h2 class="status-name">${item.name}</h2><span class="status-word" data-testid="status-word"><span class="status-dot" aria-hidden="true"></span>${STATUS_WORDS[item.status]}</span></div>
  <ol class="status-days" aria-label="The last ${String(HISTORY_DAYS)} days, oldest first">${item.days.map(
    (d, i) =>
      html`<li class="day" data-day="${d}" title="${dayOf(i)}: ${DAY_WORDS[d]}"><span class="visually-hidden">${dayOf(i)}: ${DAY_WORDS[d]}</span></li>`,
  )}</ol>
  <p class="status-range muted small" title="Days in ${answer.timeZone}"><span>${String(HISTORY_DAYS)} days ago</span><span>${item.uptime === null ? "no data" : `${percent(item.uptime)} of days up`}</span><span>today</span></p>
</li>`,
      )}</ul>`
    : ""
}
${
  answer.metrics.length
    ? html`<ul class="metrics status-metrics" aria-label="Metrics">${answer.metrics.map(
        (m) => html`<li class="metric" data-testid="status-metric"><div class="metric-box">
  <span class="metric-title">${m.icon ? html`<span aria-hidden="true">${m.icon}</span> ` : ""}${m.title}</span>
  <span class="${valueClass(m.value)}" data-testid="metric-value">${formatValue(m.value)}</span>
  ${m.updatedAt ? html`<span class="metric-time">${time(m.updatedAt)}</span>` : ""}
</div></li>`,
      )}</ul>`
    : ""
}`;
}

/** The project settings' section: the project's shares with their links, and the forms to make one (admins). */
export function sharesSection(
  project: Project,
  o: {
    shares: (Share & { url: string })[];
    charts: Chart[];
    checks: Check[];
    alerts: Alert[];
    metrics: Metric[];
    admin: boolean;
  },
): Html {
  const p = { project: project.name };
  const choices = (name: string, items: [string, string][]) =>
    items.length
      ? html`<fieldset class="share-choices"><legend>${name === "charts" ? "Cards" : name === "checks" ? "Checks" : name === "alerts" ? "Alert rules" : "Metrics"}</legend>${items.map(
          ([value, label], i) =>
            html`<label class="choice"><input type="checkbox" name="${name}" value="${value}" id="share-${name}-${String(i)}"> ${label}</label>`,
        )}</fieldset>`
      : "";
  return html`<section class="card shares" id="shares" aria-labelledby="shares-title">
  <h2 id="shares-title">Shared pages</h2>
  <p class="muted small">A link that shows chosen cards (a dashboard) or a status page to anyone who has it, without signing in: no feed, no user ids, nothing beyond what is chosen. Revoke it and it is gone at once.</p>
  ${
    o.shares.length
      ? html`<ul class="plain share-list" data-testid="share-list">${o.shares.map(
          (s) => html`<li class="share-row" data-testid="share-row">
    <div><strong>${s.title || (s.kind === "status" ? "Status page" : "Dashboard")}</strong> <span class="muted small">${s.kind}${s.kind === "status" ? ` · days in ${s.timeZone}` : ""} · by ${s.createdBy}</span></div>
    <div class="copy-row" x-data="copyButton"><input type="text" readonly value="${s.url}" aria-label="Link of share ${String(s.id)}" x-ref="source" data-testid="share-url"><button type="button" class="secondary small" x-on:click="copy" x-text="label" data-testid="copy-share">Copy</button></div>
    ${o.admin ? html`<form hx-post="${href(paths.shareRevoke, { ...p, id: String(s.id) })}" class="inline"><button type="submit" class="danger small" data-testid="revoke-share" aria-label="Revoke share ${String(s.id)}">Revoke</button></form>` : ""}
  </li>`,
        )}</ul>`
      : html`<p class="muted small">No shared pages.</p>`
  }
  ${
    o.admin
      ? html`<form hx-post="${href(paths.shares, p)}" class="share-form stack" data-testid="new-dashboard-share">
    <h3>Share a dashboard</h3>
    <input type="hidden" name="kind" value="dashboard">
    ${
      o.charts.length
        ? choices(
            "charts",
            o.charts.map((c) => [String(c.id), c.name]),
          )
        : html`<p class="muted small">Save a chart first.</p>`
    }
    <label for="share-d-title">Title</label><input id="share-d-title" name="title" maxlength="100">
    <label for="share-d-text">Short text</label><input id="share-d-text" name="text" maxlength="1000">
    <button type="submit" class="small">Make the link</button>
  </form>
  <form hx-post="${href(paths.shares, p)}" class="share-form stack" data-testid="new-status-share">
    <h3>Share a status page</h3>
    <input type="hidden" name="kind" value="status">
    ${choices(
      "checks",
      o.checks.map((c) => [String(c.id), c.name]),
    )}
    ${choices(
      "alerts",
      o.alerts.map((a) => [String(a.id), a.name]),
    )}
    ${choices(
      "metrics",
      o.metrics.map((m) => [m.title, m.title]),
    )}
    ${o.checks.length || o.alerts.length || o.metrics.length ? "" : html`<p class="muted small">Add a check, an alert rule or a metric first.</p>`}
    <label for="share-s-title">Title</label><input id="share-s-title" name="title" maxlength="100">
    <label for="share-s-text">Short text</label><input id="share-s-text" name="text" maxlength="1000">
    <label for="share-s-zone">Time zone of its days</label><input id="share-s-zone" name="time_zone" placeholder="UTC" x-data="timeZoneField" autocomplete="off">
    <button type="submit" class="small">Make the link</button>
  </form>`
      : html`<p class="muted small">Only admins and the owner make and revoke shared pages.</p>`
  }
</section>`;
}
