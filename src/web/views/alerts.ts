// A project's alert rules as the dashboard shows them: the list with each rule's state, since when
// and when it was last checked, with pause, resume, test and delete; and the form that makes or
// changes a rule, its fields shown for the kind chosen.
import { ALERT_KIND_MODULES, ALERT_KINDS, kindOf } from "../../domain/alert-kinds/index.ts";
import { formatDuration } from "../../domain/units.ts";
import type { Alert } from "../../model/alert.ts";
import type { Project } from "../../model/project.ts";
import { href } from "../../http/href.ts";
import { type Html, html } from "../html.ts";
import { paths } from "../paths.ts";
import { time } from "./events.ts";
import { fieldRow, options } from "./fields.ts";

/** What a rule expects, in words. */
export const describeRule = (a: Alert) => kindOf(a).describe(a);

const STATES = { ok: "OK", firing: "Firing", paused: "Paused" } as const;

/** `mayEdit`: whether the reader may change rules (members and above); a viewer's names are not links to the form. */
export function alertRows(project: Project, rules: Alert[], csrf: string, mayEdit: boolean): Html {
  const at = (id: number) => ({ project: project.name, id });
  if (!rules.length)
    return html`<div class="card" id="alert-list"><p>No alert rules yet. A rule watches this project for you: an event that stops coming (a nightly job), too many events (errors), or a metric past a limit; each change is an event in the <strong>alerts</strong> channel, with a notification.</p></div>`;
  return html`<ul class="alert-list plain" id="alert-list" hx-get="${href(paths.alertList, { project: project.name })}" hx-trigger="every 10s" hx-swap="outerHTML">${rules.map(
    (a) => {
      const state = a.paused ? "paused" : a.state;
      return html`<li class="card alert-row" data-testid="alert-row" data-state="${state}">
  <div class="alert-head">${mayEdit ? html`<a class="alert-name" href="${href(paths.alert, at(a.id))}">${a.name}</a>` : html`<span class="alert-name">${a.name}</span>`}<span class="badge state-${state}" data-testid="alert-state">${STATES[state]}</span></div>
  <p class="muted small">${describeRule(a)}${a.notifyAfter > 1 ? `; notifies after ${a.notifyAfter} rounds firing` : ""}${a.repeat ? `; repeats every ${formatDuration(a.repeat)} while firing` : ""}</p>
  <p class="small alert-times"><span>${STATES[state]} since ${time(a.since)}</span> <span>checked ${a.lastChecked ? time(a.lastChecked) : "not yet"}</span></p>
  <div class="actions wrap needs-member">
    <form hx-post="${href(a.paused ? paths.alertResume : paths.alertPause, at(a.id))}" hx-target="#alert-list" hx-swap="outerHTML" class="inline"><input type="hidden" name="_csrf" value="${csrf}"><button type="submit" class="secondary small">${a.paused ? "Resume" : "Pause"}<span class="visually-hidden"> ${a.name}</span></button></form>
    <form hx-post="${href(paths.alertTest, at(a.id))}" hx-swap="none" class="inline"><button type="submit" class="secondary small">Test<span class="visually-hidden"> ${a.name}</span></button></form>
    <a class="button secondary small" href="${href(paths.alert, at(a.id))}">Edit<span class="visually-hidden"> ${a.name}</span></a>
    <button type="button" class="secondary small danger" hx-get="${href(paths.alertDelete, at(a.id))}" hx-target="#modal">Delete<span class="visually-hidden"> ${a.name}</span></button>
  </div>
</li>`;
    },
  )}</ul>`;
}

/** `hasNotices`: whether the alerts channel exists yet (it is made by the first notice; the link shows when it is, live). */
export function alertsPage(
  project: Project,
  rules: Alert[],
  csrf: string,
  mayEdit: boolean,
  hasNotices: boolean,
  maintenance: Html,
): Html {
  const p = { project: project.name };
  return html`<header class="page-header">
  <p class="crumbs"><a href="${href(paths.project, p)}">${project.name}</a></p>
  <h1>Alerts</h1>
  <div class="actions">
    <a class="button small needs-member" href="${href(paths.newAlert, p)}" data-testid="new-alert">New alert rule</a>
    <a class="button secondary small" href="${href(paths.channel, { ...p, channel: "alerts" })}" data-shows-with-channel="alerts" data-testid="notices"${hasNotices ? "" : html` hidden`}>Notices</a>
  </div>
</header>
${alertRows(project, rules, csrf, mayEdit)}
${maintenance}`;
}

export type AlertFormFields = Record<string, string>;

/** The kinds that take a filter of events, or a threshold: the form shows those fields for them. */
const taking = (what: "filter" | "threshold") => ALERT_KINDS.filter((k) => ALERT_KIND_MODULES[k].takes[what]);
const hides = (what: "filter" | "threshold", kind: string) =>
  (ALERT_KINDS as string[]).includes(kind) && !(taking(what) as string[]).includes(kind);

export function alertFormPage(
  project: Project,
  o: {
    fields: AlertFormFields;
    rule?: Alert;
    errors?: Record<string, string>;
    channels: string[];
    metrics: string[];
    zones: string[];
    csrf: string;
  },
): Html {
  const p = { project: project.name };
  const list = href(paths.alerts, p);
  const f = o.fields;
  const e = o.errors ?? {};
  const kind = f.kind || "absence";
  const schedule = f.schedule || (f.cron ? "cron" : "period");
  const show = (on: string, value: string) =>
    html` data-show="${on}:${value}"${(on === "kind" ? kind : schedule) === value ? "" : html` hidden`}`;
  const problems = Object.entries(e);
  return html`<header class="page-header">
  <p class="crumbs"><a href="${href(paths.project, p)}">${project.name}</a> / <a href="${list}">alerts</a></p>
  <h1>${o.rule ? html`Edit “${o.rule.name}”` : "New alert rule"}</h1>
</header>
<form class="card stack alert-form" method="post" action="${o.rule ? href(paths.alert, { ...p, id: o.rule.id }) : list}" x-data="showFor" x-on:change="changed" novalidate>
  ${problems.length ? html`<div class="alert error-summary" role="alert"><p>The rule cannot be saved yet:</p><ul>${problems.map(([name, message]) => html`<li><a href="#alert-${name}">${message}</a></li>`)}</ul></div>` : ""}
  <input type="hidden" name="_csrf" value="${o.csrf}">
  ${fieldRow("alert-name", "Name", (a) => html`<input id="alert-name"${a} name="name" value="${f.name ?? ""}" maxlength="100" required>`, e.name)}
  ${fieldRow(
    "alert-kind",
    "Kind",
    (a) =>
      html`<select id="alert-kind"${a} name="kind" data-controls="kind">${options(
        ALERT_KINDS.map((k): [string, string] => [k, ALERT_KIND_MODULES[k].label]),
        kind,
      )}</select>`,
    e.kind,
  )}
  <fieldset data-show="kind:${taking("filter").join(",")}"${hides("filter", kind) ? html` hidden` : ""}><legend>Which events</legend>
    ${fieldRow("alert-channel", "Channel", (a) => html`<input id="alert-channel"${a} name="channel" value="${f.channel ?? ""}" list="alert-channels" placeholder="any" maxlength="64" autocomplete="off" spellcheck="false" autocapitalize="off">`, e.channel, "Empty for any channel. A channel with no events yet may be named (a job that has not reported): lowercase letters, digits and dashes.")}
    <datalist id="alert-channels">${o.channels.map((c) => html`<option value="${c}"></option>`)}</datalist>
    ${fieldRow("alert-event", "Event name", (a) => html`<input id="alert-event"${a} name="event" value="${f.event ?? ""}" placeholder="any" autocomplete="off">`, e.event)}
    ${fieldRow("alert-tags", "Tags", (a) => html`<input id="alert-tags"${a} name="tags" value="${f.tags ?? ""}" placeholder="host:db1" autocomplete="off">`, e.tags, "key:value, several separated by spaces (a value with a space in double quotes); every one must match.")}
  </fieldset>
  <fieldset${show("kind", "absence")}><legend>When events are due</legend>
    ${fieldRow(
      "alert-schedule",
      "Expected",
      (a) =>
        html`<select id="alert-schedule"${a} name="schedule" data-controls="schedule">${options(
          [
            ["period", "At least every…"],
            ["cron", "On a schedule (cron)"],
          ],
          schedule,
        )}</select>`,
      undefined,
    )}
    <div${show("schedule", "period")}>${fieldRow("alert-period", "Every", (a) => html`<input id="alert-period"${a} name="period" value="${f.period ?? ""}" placeholder="1d" autocomplete="off">`, e.period, "Seconds, or 90s, 15m, 12h, 1d.")}</div>
    <div${show("schedule", "cron")} class="field-pair">
      ${fieldRow("alert-cron", "Schedule", (a) => html`<input id="alert-cron"${a} name="cron" value="${f.cron ?? ""}" placeholder="0 3 * * *" autocomplete="off">`, e.cron, "minute hour day month weekday")}
      ${fieldRow("alert-tz", "Time zone", (a) => html`<input id="alert-tz"${a} name="tz" value="${f.tz ?? ""}" list="time-zones" autocomplete="off" data-viewer="zone">`, e.tz)}
    </div>
    ${fieldRow("alert-grace", "Grace", (a) => html`<input id="alert-grace"${a} name="grace" value="${f.grace ?? ""}" placeholder="a tenth of the period" autocomplete="off">`, e.grace, "How late an event may be before the rule fires.")}
  </fieldset>
  <fieldset${show("kind", "count")}><legend>How many</legend>
    ${fieldRow("alert-window", "Within the last", (a) => html`<input id="alert-window"${a} name="window" value="${f.window ?? ""}" placeholder="5m" autocomplete="off">`, e.window, "Seconds, or 90s, 15m, 12h, 1d.")}
  </fieldset>
  <fieldset${show("kind", "metric")}><legend>Which metric</legend>
    ${fieldRow("alert-metric", "Metric", (a) => html`<select id="alert-metric"${a} name="metric">${options([...o.metrics.map((m): [string, string] => [m, m]), ...(f.metric && !o.metrics.includes(f.metric) ? [[f.metric, `${f.metric} (not set yet)`] as [string, string]] : [])], f.metric ?? "")}</select>`, e.metric, o.metrics.length || f.metric ? undefined : "This project has no metrics yet.")}
  </fieldset>
  <div class="field-pair"${hides("threshold", kind) ? html` hidden` : ""} data-show="kind:${taking("threshold").join(",")}">
    ${fieldRow(
      "alert-compare",
      "Fires when",
      (a) =>
        html`<select id="alert-compare"${a} name="compare">${options(
          [
            ["above", "above"],
            ["below", "below"],
          ],
          f.compare || "above",
        )}</select>`,
      undefined,
    )}
    ${fieldRow("alert-limit", "Limit", (a) => html`<input id="alert-limit"${a} name="limit" type="number" step="any" value="${f.limit ?? ""}">`, e.limit)}
  </div>
  ${fieldRow("alert-notify_after", "Notify after", (a) => html`<input id="alert-notify_after"${a} name="notify_after" type="number" min="1" step="1" value="${f.notify_after ?? ""}" placeholder="1" inputmode="numeric">`, e.notify_after, "Rounds firing in a row before it notifies (flapping jobs); empty: at once. Its recovery notifies only if its firing did.")}
  ${fieldRow("alert-repeat", "Repeat while firing", (a) => html`<input id="alert-repeat"${a} name="repeat" value="${f.repeat ?? ""}" placeholder="never" autocomplete="off">`, e.repeat, "Notify again this often while it keeps firing (empty: once).")}
  <datalist id="time-zones">${o.zones.map((z) => html`<option value="${z}"></option>`)}</datalist>
  <div class="actions">
    <button type="submit" data-testid="save-alert">${o.rule ? "Save changes" : "Save"}</button>
    <a class="button secondary" href="${list}">Cancel</a>
  </div>
</form>`;
}
