// The chart builder's fields that more than one kind of chart has: the range (the last N days, or
// from … to) and the search's filters (channel, tags, user, words), which a series and a retention
// grid both take.
import type { FormFields } from "../chart-form.ts";
import { type Html, html } from "../html.ts";
import { fieldRow, options } from "./fields.ts";

/** A field's first value as typed ("" when absent). */
export const value = (f: FormFields, name: string): string => {
  const v = f[name];
  return (Array.isArray(v) ? v[0] : v) ?? "";
};

export function rangeFields(f: FormFields, errors: Record<string, string>): Html {
  const range = value(f, "range") || "30";
  return html`${fieldRow("chart-range", "Range", (a) => html`<select id="chart-range"${a} name="range">${options([...[1, 7, 14, 30, 90, 180, 365].map((d): [string, string] => [String(d), d === 1 ? "Last 24 hours" : `Last ${d} days`]), ["custom", "From … to …"]], range)}</select>`, errors.range)}
  <div class="field-pair" data-range="custom"${range === "custom" ? "" : html` hidden`}>
    ${fieldRow("chart-from", "From", (a) => html`<input type="date" id="chart-from"${a} name="from" value="${value(f, "from")}">`, errors.from)}
    ${fieldRow("chart-to", "To (included)", (a) => html`<input type="date" id="chart-to"${a} name="to" value="${value(f, "to")}">`, errors.to)}
  </div>`;
}

/** The search's filters: a channel of the project's, tags (key:value), a user, words. */
export function filterFields(f: FormFields, channels: string[], errors: Record<string, string>): Html {
  return html`${fieldRow("chart-channel", "Channel", (a) => html`<select id="chart-channel"${a} name="channel"><option value="">All channels</option>${channels.map((c) => html`<option value="${c}"${c === value(f, "channel") ? " selected" : ""}>#${c}</option>`)}</select>`, errors.channel)}
  ${fieldRow("chart-tag", "Tags", (a) => html`<input id="chart-tag"${a} name="tag" value="${(Array.isArray(f.tag) ? f.tag : f.tag ? [f.tag] : []).join(" ")}" autocomplete="off" placeholder="plan:pro region:eu">`, errors.tag, "key:value, several separated by spaces; every one must match.")}
  ${fieldRow("chart-user", "User id", (a) => html`<input id="chart-user"${a} name="user_id" value="${value(f, "user_id")}" autocomplete="off">`, errors.user_id)}
  ${fieldRow("chart-q", "Words", (a) => html`<input id="chart-q"${a} name="q" value="${value(f, "q")}" autocomplete="off" placeholder="in the name or description">`, errors.q)}`;
}
