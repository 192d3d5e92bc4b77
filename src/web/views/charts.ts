// Charts, funnels, metric charts and retention grids as the dashboard shows them: what each answers
// (the body of a card, of a chart's page and of the builder's preview), the list of a project's
// charts, and a chart's page. Series are drawn in the browser (uPlot, src/browser/components/
// series-chart.ts) from the JSON they carry, with a legend and a table in the HTML; funnels are
// HTML and SVG alone, retention a table (views/retention.ts).
import { CHART_KIND_MODULES, CHART_KINDS, chartKind } from "../../domain/chart-kinds/index.ts";
import { describeRange } from "../../domain/chart-kinds/kind.ts";
import type { ChartAnswer, PlacedChart } from "../../domain/charts.ts";
import type { FunnelAnswer, SeriesAnswer } from "../../domain/analytics.ts";
import type { HistoryPage } from "../../domain/metric-history.ts";
import { formatElapsed } from "../../domain/units.ts";
import type { ChartKind } from "../../model/chart.ts";
import { href } from "../../http/href.ts";
import type { Project } from "../../model/project.ts";
import { type FormFields, fieldsOfDefinition, kindOf, queryOfFields } from "../chart-form.ts";
import { colorSlots } from "../colors.ts";
import { type Html, html } from "../html.ts";
import { paths } from "../paths.ts";
import { filterFields, rangeFields, value } from "./chart-fields.ts";
import { fieldRow, options } from "./fields.ts";
import { retentionBody, retentionFields } from "./retention.ts";
import { formatValue } from "./project.ts";

/** What the pages call each kind. */
const kindName = (kind: ChartKind) => CHART_KIND_MODULES[kind].name;

const count = (n: number) => n.toLocaleString("en-US");
const percent = (ratio: number) =>
  `${(ratio * 100).toLocaleString("en-US", { maximumFractionDigits: ratio < 0.1 ? 1 : 0 })}%`;

/** What a question answers, drawn: a series, a funnel, a metric's history or a retention grid. */
export function chartBody(
  project: Project,
  answer: ChartAnswer,
  opts: { display?: string; fields?: FormFields; compact?: boolean; channels?: string[]; shared?: boolean },
): Html {
  if (answer.kind === "series")
    return seriesBody(answer.series, opts.display === "bar" ? "bar" : "line", opts.compact ?? false, opts.channels);
  if (answer.kind === "funnel") return funnelBody(project, answer.funnel, opts.fields ?? {}, opts.shared ?? false);
  if (answer.kind === "retention") return retentionBody(answer.retention, opts.compact ?? false);
  return metricBody(answer.metric, opts.compact ?? false);
}

function seriesLabel(s: SeriesAnswer["series"][number], a: SeriesAnswer): string {
  if (s.other) return "other";
  if (!a.groupBy) return a.measure === "users" ? "Users" : "Events";
  if (s.group === null) return a.groupBy.startsWith("tag:") ? `no ${a.groupBy.slice(4)}` : "none";
  return a.groupBy === "channel" ? `#${s.group}` : s.group;
}

/** `channels`: the project's, oldest first (colorSlots), for a chart split by channel. */
function seriesBody(a: SeriesAnswer, display: "line" | "bar", compact: boolean, channels: string[] = []): Html {
  const what = a.measure === "users" ? "users" : "events";
  // Each group in the colour its name has on every chart (a channel's as on the activity chart); "other" grey.
  const named = a.series.filter((s) => !s.other);
  const slots = colorSlots(
    named.map((s) => s.group ?? ""),
    a.groupBy === "channel" ? channels : [],
  );
  const slotOf = new Map(named.map((s, i) => [s, a.groupBy ? slots[i]! : 0]));
  const lines = a.series.map((s) => ({
    label: seriesLabel(s, a),
    total: s.total,
    slot: slotOf.get(s) ?? -1,
    values: s.points.map((p) => p.value),
  }));
  const data = {
    interval: a.interval,
    tz: a.tz,
    from: a.from / 1000,
    to: a.to / 1000,
    display,
    compact,
    t: a.series[0]?.points.map((p) => p.t / 1000) ?? [],
    lines,
  };
  const total = a.groupBy ? null : (a.series[0]?.total ?? 0);
  const empty = a.series.every((s) => s.total === 0);
  const summary = empty
    ? `No ${what} in this range`
    : total !== null
      ? `${count(total)} ${total === 1 ? what.slice(0, -1) : what} in the range`
      : `${count(lines.length)} groups`;
  return html`<div class="series" x-data="seriesChart" data-chart="${JSON.stringify(data)}" data-testid="series">
  <p class="chart-total" data-testid="chart-total">${summary}</p>
  ${empty ? "" : html`<div class="chart-wrap"><div class="chart${compact ? " compact" : ""}" x-ref="chart" role="img" aria-label="${what === "users" ? "Users" : "Events"} per ${a.interval}${a.groupBy ? `, by ${a.groupBy.replace(/^tag:/, "tag ")}` : ""}"></div><div class="chart-tip" x-ref="tip" hidden></div></div>`}
  ${a.groupBy && !empty ? html`<ul class="chart-legend" aria-label="Groups, with their ${what} in the range">${lines.map((l) => html`<li><span class="swatch" data-slot="${String(l.slot)}"></span><span class="legend-name">${l.label}</span><span class="legend-total">${count(l.total)}</span></li>`)}</ul>` : ""}
</div>`;
}

/** `shared`: on a shared page, where who dropped is nobody's business, the counts without their lists. */
function funnelBody(project: Project, f: FunnelAnswer, fields: FormFields, shared: boolean): Html {
  const first = f.steps[0]?.users ?? 0;
  const dropped = (at: number) =>
    href(paths.dropped, { project: project.name }) +
    queryOfFields({ ...fields, kind: "funnel", at: String(at), name: undefined });
  return html`<ol class="funnel" data-testid="funnel">${f.steps.map((s, i) => {
    const width = first ? Math.max((s.users / first) * 100, s.users ? 0.5 : 0) : 0;
    return html`<li class="funnel-step" data-testid="funnel-step">
    <div class="funnel-head"><span class="step-number" aria-hidden="true">${String(i + 1)}</span><span class="step-name">${s.event}</span>${s.channel ? html` <span class="muted small">#${s.channel}</span>` : ""}</div>
    <svg class="funnel-bar" viewBox="0 0 100 8" preserveAspectRatio="none" aria-hidden="true"><rect class="bar-track" width="100" height="8"></rect><rect class="bar-fill" width="${width.toFixed(2)}" height="8"></rect></svg>
    <p class="funnel-numbers"><strong data-testid="step-users">${count(s.users)} ${s.users === 1 ? "user" : "users"}</strong>
      ${
        i
          ? html`<span>${percent(s.conversion)} of step 1</span>${i > 1 ? html` <span>${percent(s.conversionFromPrevious)} of step ${String(i)}</span>` : ""}${s.medianMs !== null ? html` <span>median ${formatElapsed(s.medianMs)} after step ${String(i)}</span>` : ""}
      ${s.dropped ? (shared ? html`<span data-testid="dropped">${count(s.dropped)} dropped</span>` : html`<a href="${dropped(i + 1)}" data-testid="dropped">${count(s.dropped)} dropped</a>`) : html`<span>none dropped</span>`}`
          : html`<span>started in the range</span>`
      }</p>
  </li>`;
  })}</ol>`;
}

function metricBody(m: HistoryPage, compact: boolean): Html {
  const buckets = "buckets" in m ? m.buckets : [];
  const numbers = buckets.filter((b) => typeof b.last.value === "number");
  const data = {
    interval: "auto",
    tz: "UTC",
    display: "line",
    compact,
    t: numbers.map((b) => b.at / 1000),
    lines: [{ label: m.metric.title, total: 0, slot: 0, values: numbers.map((b) => b.last.value) }],
  };
  return html`<div class="series metric-chart" x-data="seriesChart" data-chart="${JSON.stringify(data)}" data-testid="metric-chart">
  <p class="chart-now"><span class="muted small">Now</span> <strong class="metric-now" data-testid="metric-now">${formatValue(m.metric.value)}</strong></p>
  ${numbers.length ? html`<div class="chart-wrap"><div class="chart${compact ? " compact" : ""}" x-ref="chart" role="img" aria-label="${m.metric.title} over time"></div><div class="chart-tip" x-ref="tip" hidden></div></div>` : html`<p class="muted small">No numbers in this range.</p>`}
</div>`;
}

/** A question that could not be answered (in a card or the preview): why, in place of the chart. */
export function chartProblem(message: string): Html {
  return html`<p class="chart-problem" role="status" data-testid="chart-problem">${message}</p>`;
}

/** What a chart asks, in a few words. */
export function describeChart(chart: Pick<PlacedChart, "kind" | "definition">): string {
  return [...chartKind(chart.kind).describe(chart.definition), describeRange(chart.definition)]
    .filter(Boolean)
    .join(", ");
}

export function chartsListPage(project: Project, charts: PlacedChart[]): Html {
  const p = { project: project.name };
  return html`<header class="page-header">
  <p class="crumbs"><a href="${href(paths.project, p)}">${project.name}</a></p>
  <h1>Charts</h1>
  <div class="actions">
    <a class="button small needs-member" href="${href(paths.newChart, p)}">New chart</a>
    <a class="button secondary small needs-member" href="${href(paths.newChart, p, { kind: "funnel" })}">New funnel</a>
    <a class="button secondary small needs-member" href="${href(paths.newChart, p, { kind: "metric" })}">New metric chart</a>
    <a class="button secondary small needs-member" href="${href(paths.newChart, p, { kind: "retention" })}">New retention</a>
  </div>
</header>
${
  charts.length
    ? html`<ul class="chart-list plain" data-testid="chart-list">${charts.map(
        (
          c,
        ) => html`<li class="card chart-row"><a href="${href(paths.chart, { ...p, id: c.id })}" class="chart-row-name">${c.name}</a>
  <span class="badge">${kindName(c.kind)}</span>${c.position !== null ? html` <span class="badge pinned">On the dashboard</span>` : ""}
  <p class="muted small">${describeChart(c)}</p></li>`,
      )}</ul>`
    : html`<div class="card empty-charts"><p>No charts yet. A chart counts events (or users) per hour, day, week or month, with the search's filters, split by channel, name or a tag; a funnel follows users through steps; retention shows how many of the users who did one thing came back to do another, day by day or week by week. Build one, save it, and pin it to the project's dashboard.</p></div>`
}`;
}

/** A saved chart's page: the chart, what it asks, and what can be done with it. */
export function chartPage(project: Project, chart: PlacedChart): Html {
  const p = { project: project.name };
  const at = { ...p, id: chart.id };
  const url = href(paths.chart, at);
  const pinned = chart.position !== null;
  return html`<header class="page-header">
  <p class="crumbs"><a href="${href(paths.project, p)}">${project.name}</a> / <a href="${href(paths.charts, p)}">charts</a></p>
  <h1>${chart.name}</h1>
  <div class="actions needs-member">
    <form hx-post="${href(paths.dashboard, p)}" hx-swap="none" class="inline">
      <input type="hidden" name="card" value="${String(chart.id)}"><input type="hidden" name="move" value="${pinned ? "remove" : "add"}"><input type="hidden" name="back" value="${url}">
      <button type="submit" class="small${pinned ? " secondary" : ""}" data-testid="pin">${pinned ? "Remove from dashboard" : "Add to dashboard"}</button>
    </form>
    <a class="button secondary small" href="${href(paths.chartEdit, at)}" data-testid="edit-chart">Edit</a>
    <a class="button secondary small" href="${href(paths.newChart, p)}${queryOfFields(fieldsOfDefinition(chart, `${chart.name} (copy)`))}">Copy</a>
    <button type="button" class="secondary small danger" hx-get="${href(paths.chartDelete, at)}" hx-target="#modal" data-testid="delete-chart">Delete</button>
  </div>
</header>
<p class="muted small">${kindName(chart.kind)}: ${describeChart(chart)}.${pinned ? " On the project's dashboard." : ""}</p>
<section class="card chart-card big" aria-label="${chart.name}">
  <div class="card-body" hx-get="${href(paths.card, at)}" hx-trigger="load" data-testid="card-body"><p class="muted small">Loading…</p></div>
</section>`;
}

/** The delete confirmation of a chart. */
export function deleteChartBody(chart: PlacedChart): Html {
  return html`<p>Delete the ${kindName(chart.kind).toLowerCase()} <strong>${chart.name}</strong>${chart.position !== null ? " and its card on the dashboard" : ""}? Events are not touched.</p>`;
}

export function droppedPage(
  project: Project,
  opts: {
    funnel: FunnelAnswer;
    at: number;
    users: string[];
    next: string | null;
    back: { href: string; label: string };
  },
): Html {
  const p = { project: project.name };
  const step = opts.funnel.steps[opts.at - 1];
  const before = opts.funnel.steps[opts.at - 2];
  return html`<header class="page-header">
  <p class="crumbs"><a href="${href(paths.project, p)}">${project.name}</a> / <a href="${opts.back.href}">${opts.back.label}</a></p>
  <h1>Dropped before “${step?.event ?? ""}”</h1>
</header>
<p>${count(step?.dropped ?? 0)} users did “${before?.event ?? ""}” (step ${String(opts.at - 1)}) but not “${step?.event ?? ""}” (step ${String(opts.at)}) within the funnel's window. Each links to their journey.</p>
<ul class="dropped-users plain card" data-testid="dropped-users">${opts.users.map((u) => html`<li><a href="${href(paths.user, { ...p, userId: u })}">${u}</a></li>`)}</ul>
${opts.next ? html`<p><a class="button secondary small" href="${opts.next}" data-testid="dropped-next">Next page</a></p>` : ""}`;
}

/** The builder's fields by name: the control's id and its label (the error summary links to them). */
const FIELDS: Record<string, [string, string]> = {
  name: ["chart-name", "Name"],
  measure: ["chart-measure", "Count"],
  event: ["chart-event", "Event name"],
  channel: ["chart-channel", "Channel"],
  tag: ["chart-tag", "Tags"],
  user_id: ["chart-user", "User id"],
  q: ["chart-q", "Words"],
  range: ["chart-range", "Range"],
  from: ["chart-from", "From"],
  to: ["chart-to", "To"],
  interval: ["chart-interval", "Per"],
  group_by: ["chart-group", "Split by"],
  group_tag: ["chart-group-tag", "Tag key"],
  limit: ["chart-limit", "Groups shown"],
  step: ["step-1", "Steps"],
  window: ["chart-window", "Within"],
  title: ["chart-title", "Metric"],
  start_event: ["chart-start", "Start event"],
  return_event: ["chart-return", "Return event"],
  periods: ["chart-periods", "Periods after"],
  tz: ["chart-tz", "Time zone"],
};

export type BuilderOptions = {
  fields: FormFields;
  /** The chart being edited; absent for a new one. */
  chart?: PlacedChart;
  errors?: Record<string, string>;
  channels: string[];
  metrics: string[];
  /** Event names seen lately, offered as you type. */
  eventNames: string[];
  /** Time zones offered as you type (a retention grid's). */
  zones: string[];
  csrf: string;
};

function seriesFields(f: FormFields, o: BuilderOptions, errors: Record<string, string>): Html {
  const groupBy = value(f, "group_by");
  return html`<fieldset><legend>What to count</legend>
  ${fieldRow(
    "chart-measure",
    "Count",
    (a) =>
      html`<select id="chart-measure"${a} name="measure">${options(
        [
          ["events", "Events"],
          ["users", "Distinct users"],
        ],
        value(f, "measure") || "events",
      )}</select>`,
    errors.measure,
  )}
  ${fieldRow("chart-event", "Event name", (a) => html`<input id="chart-event"${a} name="event" value="${value(f, "event")}" list="event-names" autocomplete="off" placeholder="any">`, errors.event)}
  ${filterFields(f, o.channels, errors)}
</fieldset>
<fieldset><legend>How</legend>
  ${rangeFields(f, errors)}
  ${fieldRow(
    "chart-interval",
    "Per",
    (a) =>
      html`<select id="chart-interval"${a} name="interval">${options(
        [
          ["hour", "Hour"],
          ["day", "Day"],
          ["week", "Week"],
          ["month", "Month"],
        ],
        value(f, "interval") || "day",
      )}</select>`,
    errors.interval,
  )}
  ${fieldRow(
    "chart-group",
    "Split by",
    (a) =>
      html`<select id="chart-group"${a} name="group_by">${options(
        [
          ["", "Nothing"],
          ["channel", "Channel"],
          ["event", "Event name"],
          ["tag", "A tag's value"],
        ],
        groupBy,
      )}</select>`,
    errors.group_by,
  )}
  <div class="field-pair" data-group="tag"${groupBy === "tag" ? "" : html` hidden`}>${fieldRow("chart-group-tag", "Tag key", (a) => html`<input id="chart-group-tag"${a} name="group_tag" value="${value(f, "group_tag")}" autocomplete="off" placeholder="plan">`, errors.group_tag)}</div>
  <div class="field-pair" data-group="any"${groupBy ? "" : html` hidden`}>${fieldRow("chart-limit", "Groups shown", (a) => html`<input type="number" class="narrow" id="chart-limit"${a} name="limit" min="1" max="100" value="${value(f, "limit") || "10"}">`, errors.limit, "The groups with the most; the rest are one line, “other”.")}</div>
  <fieldset class="choices"><legend>Draw as</legend>
    <label class="choice"><input type="radio" name="display" value="line"${value(f, "display") !== "bar" ? " checked" : ""}> Line</label>
    <label class="choice"><input type="radio" name="display" value="bar"${value(f, "display") === "bar" ? " checked" : ""}> Bars</label>
  </fieldset>
  <input type="hidden" name="tz" value="${value(f, "tz")}" data-viewer="zone">
</fieldset>`;
}

function funnelFields(f: FormFields, o: BuilderOptions, errors: Record<string, string>): Html {
  const steps = Array.isArray(f.step) ? f.step : f.step ? [f.step] : [];
  const channels = Array.isArray(f.step_channel) ? f.step_channel : f.step_channel ? [f.step_channel] : [];
  // Ten rows; those past the filled ones and one empty (three at least) wait for "Add a step".
  const shown = Math.min(10, Math.max(3, steps.filter(Boolean).length + 1));
  return html`<fieldset><legend>Steps, in order</legend>
  ${errors.step ? html`<p class="hint error" id="chart-steps-error">${errors.step}</p>` : ""}
  <ol class="funnel-steps">${Array.from(
    { length: 10 },
    (_, i) => html`<li class="step-row"${i < shown ? "" : html` hidden`}>
    <label class="visually-hidden" for="step-${String(i + 1)}">Step ${String(i + 1)}: event name</label>
    <input id="step-${String(i + 1)}" name="step" value="${steps[i] ?? ""}" list="event-names" autocomplete="off" placeholder="${i < 2 ? "Event name" : "Event name (optional)"}"${errors.step ? html` aria-describedby="chart-steps-error"` : ""}>
    <label class="visually-hidden" for="step-channel-${String(i + 1)}">Step ${String(i + 1)}: channel</label>
    <select id="step-channel-${String(i + 1)}" name="step_channel"><option value="">any channel</option>${o.channels.map((c) => html`<option value="${c}"${c === channels[i] ? " selected" : ""}>#${c}</option>`)}</select>
  </li>`,
  )}</ol>
  <button type="button" class="secondary small" x-on:click="addStep" data-testid="add-step"${shown < 10 ? "" : " hidden"}>Add a step</button>
  <p class="hint">A user counts at a step when they did every step before it in this order, the first in the range, the last within the window of the first. Events without a user id do not count.</p>
</fieldset>
<fieldset><legend>How</legend>
  ${rangeFields(f, errors)}
  ${fieldRow(
    "chart-window",
    "Within",
    (a) =>
      html`<select id="chart-window"${a} name="window">${options(
        [
          [3600, "1 hour"],
          [86_400, "1 day"],
          [7 * 86_400, "7 days"],
          [14 * 86_400, "14 days"],
          [30 * 86_400, "30 days"],
        ].map(([s, l]) => [String(s), String(l)] as [string, string]),
        value(f, "window") || String(7 * 86_400),
      )}</select>`,
    errors.window,
    "from the first step to the last.",
  )}
</fieldset>`;
}

function metricFields(f: FormFields, o: BuilderOptions, errors: Record<string, string>): Html {
  return html`<fieldset><legend>Which metric</legend>
  ${fieldRow(
    "chart-title",
    "Metric",
    (a) =>
      html`<select id="chart-title"${a} name="title">${options(
        o.metrics.map((m): [string, string] => [m, m]),
        value(f, "title"),
      )}</select>`,
    errors.title,
    o.metrics.length ? undefined : "This project has no metrics yet: send one with POST /v1/insight or /send-metric.",
  )}
  ${rangeFields(f, errors)}
</fieldset>`;
}

/** Each kind's fields in the builder. */
const KIND_FIELDS: Record<ChartKind, (f: FormFields, o: BuilderOptions, errors: Record<string, string>) => Html> = {
  series: seriesFields,
  funnel: funnelFields,
  metric: metricFields,
  retention: retentionFields,
};

/** The chart builder: the question's fields on one side, its answer (the preview) as they change. */
export function builderPage(project: Project, o: BuilderOptions): Html {
  const p = { project: project.name };
  const kind = kindOf(o.fields);
  const errors = o.errors ?? {};
  const path = o.chart ? href(paths.chartEdit, { ...p, id: o.chart.id }) : href(paths.newChart, p);
  // The form's action, and where Cancel goes: the chart, or the list for a new one.
  const action = o.chart ? href(paths.chart, { ...p, id: o.chart.id }) : href(paths.charts, p);
  const tabs = CHART_KINDS.map((k): [ChartKind, string] => [k, kindName(k)]);
  const problems = Object.entries(errors);
  return html`<header class="page-header">
  <p class="crumbs"><a href="${href(paths.project, p)}">${project.name}</a> / <a href="${href(paths.charts, p)}">charts</a></p>
  <h1>${o.chart ? html`Edit “${o.chart.name}”` : `New ${kindName(kind).toLowerCase()}`}</h1>
</header>
${o.chart ? "" : html`<nav class="tabs" aria-label="Kind of chart">${tabs.map(([k, label]) => html`<a href="${href(paths.newChart, p, { kind: k === "series" ? undefined : k })}"${k === kind ? html` aria-current="page"` : ""}>${label}</a>`)}</nav>`}
<div class="builder">
<form id="chart-form" class="builder-form stack" method="post" action="${action}" x-data="chartForm" x-on:change="changed" novalidate>
  ${
    problems.length
      ? html`<div class="alert error-summary" role="alert" id="chart-errors"><p>The chart cannot be saved yet:</p><ul>${problems.map(
          ([name, message]) => {
            const [id, label] = FIELDS[name] ?? [null, ""];
            return html`<li>${id ? html`<a href="#${id}">${label}: ${message}</a>` : message}</li>`;
          },
        )}</ul></div>`
      : ""
  }
  <input type="hidden" name="_csrf" value="${o.csrf}">
  <input type="hidden" name="kind" value="${kind}">
  <input type="hidden" name="path" value="${path}">
  <input type="hidden" name="tzo" value="${value(o.fields, "tzo")}" data-viewer="offset">
  ${fieldRow("chart-name", "Name", (a) => html`<input id="chart-name"${a} name="name" value="${value(o.fields, "name")}" maxlength="100" autocomplete="off" required>`, errors.name)}
  ${KIND_FIELDS[kind](o.fields, o, errors)}
  <datalist id="event-names">${o.eventNames.map((n) => html`<option value="${n}"></option>`)}</datalist>
  <div class="actions">
    <button type="submit" data-testid="save-chart">${o.chart ? "Save changes" : "Save"}</button>
    ${o.chart ? html`<label class="choice"><input type="checkbox" name="pin" value="1"${o.chart.position !== null ? " checked" : ""}> On the project's dashboard</label>` : html`<label class="choice"><input type="checkbox" name="pin" value="1" checked> Add to the project's dashboard</label>`}
    <a class="button secondary" href="${action}">Cancel</a>
  </div>
</form>
<section class="card chart-card preview" aria-labelledby="preview-title">
  <h2 id="preview-title">Preview</h2>
  <div id="chart-preview" class="card-body" aria-live="polite" hx-get="${href(paths.chartPreview, p)}" hx-include="#chart-form" hx-params="not _csrf" hx-trigger="load, change from:#chart-form, input changed delay:700ms from:#chart-form, sb-viewer from:body" hx-sync="this:replace" data-testid="preview"><p class="muted small">Loading…</p></div>
</section>
</div>`;
}
