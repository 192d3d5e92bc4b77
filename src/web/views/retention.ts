// Retention as the dashboard shows it: a grid with a row per cohort (its day or week, in the chart's
// time zone, and its users) and a column per period from the cohort's own on. Each cell is the share
// of the cohort that came back then, shaded by it (one hue, stronger for more: app.css's shades), its
// count in its title; a period not begun yet is an empty cell. HTML alone (the browser code only
// keeps where a card's grid was scrolled to when the card is drawn again, src/browser/components/
// dashboard.ts). And the builder's fields for it.
import { type RetentionAnswer, retentionPercent } from "../../domain/analytics.ts";
import type { FormFields } from "../chart-form.ts";
import { type Html, html } from "../html.ts";
import { filterFields, rangeFields, value } from "./chart-fields.ts";
import { fieldRow, options } from "./fields.ts";

const count = (n: number) => n.toLocaleString("en-US");

/** Cohorts' starts as their dates in the chart's time zone: the ISO form and as read (5 Jan 2026). */
function datesIn(tz: string): (ms: number) => { iso: string; shown: string } {
  const iso = new Intl.DateTimeFormat("en-CA", { timeZone: tz, year: "numeric", month: "2-digit", day: "2-digit" });
  const shown = new Intl.DateTimeFormat("en-GB", { timeZone: tz, day: "numeric", month: "short", year: "numeric" });
  return (ms) => ({ iso: iso.format(ms), shown: shown.format(ms) });
}

/** One cell: the share that came back (shaded by it, its count in the title), or empty for a period not begun yet. */
function cell(returned: number | null, users: number): Html {
  if (returned === null) return html`<td class="future" title="Not begun yet"></td>`;
  if (!users) return html`<td class="none" title="No users in this cohort">–</td>`;
  const percent = retentionPercent(returned, users);
  const shown = `${percent.toLocaleString("en-US")}%`;
  return html`<td data-shade="${String(Math.round(percent / 10))}" title="${count(returned)} of ${count(users)} ${users === 1 ? "user" : "users"} (${shown})">${shown}</td>`;
}

export function retentionBody(a: RetentionAnswer, compact: boolean): Html {
  const word = a.interval === "week" ? "week" : "day";
  const heading = word === "week" ? "Week" : "Day";
  const said = html`Of those who did “${a.startEvent}” each ${word}, the share who did “${a.returnEvent}” that ${word} (${word} 0) and each ${word} after.`;
  if (a.cohorts.every((c) => c.users === 0))
    return html`<div class="retention" data-testid="retention"><p class="chart-total" data-testid="chart-total">No users did “${a.startEvent}” in this range.</p></div>`;
  const periods = Array.from({ length: a.periods + 1 }, (_, k) => k);
  const dateOf = datesIn(a.tz);
  return html`<div class="retention" data-testid="retention">
  <p class="chart-total">${said}</p>
  <div class="retention-wrap${compact ? " compact" : ""}" role="region" tabindex="0" data-keep-scroll aria-label="Retention by ${word}: cohorts in rows, ${word}s after in columns">
  <table class="retention-grid">
    <caption class="visually-hidden">${said}</caption>
    <thead><tr><th scope="col">${word === "week" ? "Week of" : "Day"}</th><th scope="col">Users</th>${periods.map((k) => html`<th scope="col">${heading} ${String(k)}</th>`)}</tr></thead>
    <tbody>${a.cohorts.map((c) => {
      const date = dateOf(c.start);
      return html`<tr data-testid="cohort"><th scope="row"><time datetime="${date.iso}">${date.shown}</time></th><td class="cohort-users">${count(c.users)}</td>${c.returned.map((n) => cell(n, c.users))}</tr>`;
    })}</tbody>
  </table>
  </div>
</div>`;
}

/** What a retention chart asks, in a few words (its range said by the caller). */
export function describeRetention(d: Record<string, unknown>): string[] {
  const word = d.interval === "week" ? "week" : "day";
  const periods = typeof d.periods === "number" ? d.periods : 7;
  const tags = Array.isArray(d.tag) ? (d.tag as unknown[]).map(String).join(" ") : "";
  return [
    `“${String(d.start_event)}”, back with “${String(d.return_event)}”`,
    `by ${word} for ${periods} ${periods === 1 ? word : `${word}s`}`,
    d.channel ? `#${String(d.channel)}` : "",
    tags,
    d.user_id ? `user ${String(d.user_id)}` : "",
    d.q ? `words “${String(d.q)}”` : "",
  ];
}

/** The builder's fields of a retention chart: the two events, the filters (on both), the periods. */
export function retentionFields(
  f: FormFields,
  o: { channels: string[]; zones: string[] },
  errors: Record<string, string>,
): Html {
  return html`<fieldset><legend>Who comes back</legend>
  ${fieldRow("chart-start", "Start event", (a) => html`<input id="chart-start"${a} name="start_event" value="${value(f, "start_event")}" list="event-names" autocomplete="off" required>`, errors.start_event, "Users who did it in a day (or week) are that day's cohort.")}
  ${fieldRow("chart-return", "Return event", (a) => html`<input id="chart-return"${a} name="return_event" value="${value(f, "return_event")}" list="event-names" autocomplete="off" required>`, errors.return_event, "Those of a cohort who did it in a period came back then.")}
  <p class="hint">The filters apply to both events; events without a user id do not count.</p>
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
          ["day", "Day"],
          ["week", "Week (from Monday)"],
        ],
        value(f, "interval") || "day",
      )}</select>`,
    errors.interval,
  )}
  ${fieldRow("chart-periods", "Periods after", (a) => html`<input type="number" class="narrow" id="chart-periods"${a} name="periods" min="1" max="90" value="${value(f, "periods") || "7"}">`, errors.periods, "How many days (or weeks) after the cohort's own to follow: 1 to 90.")}
  ${fieldRow("chart-tz", "Time zone", (a) => html`<input id="chart-tz"${a} name="tz" value="${value(f, "tz")}" list="time-zones" autocomplete="off" data-viewer="zone">`, errors.tz, "Days and weeks start at its midnight.")}
  <datalist id="time-zones">${o.zones.map((z) => html`<option value="${z}"></option>`)}</datalist>
</fieldset>`;
}
