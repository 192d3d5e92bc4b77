// The maintenance windows' section of a project's Alerts page: each window, whether it holds now or
// when it comes next, and (for members) a form that adds one and a button that deletes one.
import { describeSchedule, standing } from "../../domain/maintenance.ts";
import { href } from "../../http/href.ts";
import type { Maintenance } from "../../model/maintenance.ts";
import type { Project } from "../../model/project.ts";
import { type Html, html } from "../html.ts";
import { paths } from "../paths.ts";
import { time } from "./events.ts";
import { fieldRow, options } from "./fields.ts";

export type MaintenanceFormFields = Record<string, string>;

export type MaintenanceView = {
  windows: Maintenance[];
  now: number;
  csrf: string;
  mayEdit: boolean;
  /** What the form holds and its problems by field, after a save that could not be made. */
  fields?: MaintenanceFormFields;
  errors?: Record<string, string>;
};

function when(w: Maintenance, now: number): Html {
  const { active, next } = standing(w, now);
  if (active)
    return html`<span class="badge state-paused" data-testid="maintenance-active">Now</span> until ${time(next!.end, now)}`;
  return next ? html`Next ${time(next.start, now)}` : html`<span class="muted">Over</span>`;
}

export function maintenanceSection(project: Project, v: MaintenanceView): Html {
  const p = { project: project.name };
  const f = v.fields ?? {};
  const e = v.errors ?? {};
  const kind = f.kind || "once";
  const show = (value: string) => html` data-show="kind:${value}"${kind === value ? "" : html` hidden`}`;
  return html`<section class="card stack" id="maintenance" aria-labelledby="maintenance-title">
  <h2 id="maintenance-title">Maintenance windows</h2>
  <p class="muted small">Inside one, rules that change state record it in the alerts channel but notify nobody; a rule still firing when it ends notifies then.</p>
  ${
    v.windows.length
      ? html`<ul class="plain maintenance-list">${v.windows.map(
          (w) =>
            html`<li class="maintenance-row" data-testid="maintenance-row"><strong>${w.name || "Maintenance"}</strong> <span class="muted small">${describeSchedule(w)}</span> <span class="small">${when(w, v.now)}</span>${
              v.mayEdit
                ? html` <form hx-post="${href(paths.maintenanceDelete, { ...p, id: w.id })}" hx-target="#maintenance" hx-swap="outerHTML" class="inline"><input type="hidden" name="_csrf" value="${v.csrf}"><button type="submit" class="secondary small danger">Delete<span class="visually-hidden"> ${w.name || "maintenance window"}</span></button></form>`
                : ""
            }</li>`,
        )}</ul>`
      : html`<p data-testid="no-maintenance">No maintenance windows.</p>`
  }
  ${
    v.mayEdit
      ? html`<form class="stack maintenance-form" hx-post="${href(paths.maintenance, p)}" hx-target="#maintenance" hx-swap="outerHTML" x-data="showFor" x-on:change="changed" novalidate>
    <input type="hidden" name="_csrf" value="${v.csrf}">
    <div class="field-pair">
      ${fieldRow("maintenance-name", "Name", (a) => html`<input id="maintenance-name"${a} name="name" value="${f.name ?? ""}" maxlength="100" placeholder="Deploy" autocomplete="off">`, e.name)}
      ${fieldRow(
        "maintenance-kind",
        "When",
        (a) =>
          html`<select id="maintenance-kind"${a} name="kind" data-controls="kind">${options(
            [
              ["once", "Once"],
              ["cron", "On a schedule (cron)"],
            ],
            kind,
          )}</select>`,
        undefined,
      )}
    </div>
    <div class="field-pair"${show("once")}>
      ${fieldRow("maintenance-start", "Starts", (a) => html`<input id="maintenance-start"${a} name="start" type="datetime-local" value="${f.start ?? ""}">`, e.start)}
      ${fieldRow("maintenance-end", "Ends", (a) => html`<input id="maintenance-end"${a} name="end" type="datetime-local" value="${f.end ?? ""}">`, e.end)}
    </div>
    <div class="field-pair"${show("cron")}>
      ${fieldRow("maintenance-cron", "Starts when", (a) => html`<input id="maintenance-cron"${a} name="cron" value="${f.cron ?? ""}" placeholder="0 3 * * *" autocomplete="off">`, e.cron, "minute hour day month weekday")}
      ${fieldRow("maintenance-length", "Lasts", (a) => html`<input id="maintenance-length"${a} name="length" value="${f.length ?? ""}" placeholder="1h" autocomplete="off">`, e.length, "Seconds, or 90s, 15m, 12h, 1d.")}
    </div>
    ${fieldRow("maintenance-tz", "Time zone", (a) => html`<input id="maintenance-tz"${a} name="tz" value="${f.tz ?? ""}" autocomplete="off" data-viewer="zone">`, e.tz, "An IANA name (Europe/Berlin), of the times above, or of the schedule.")}
    <div class="actions"><button type="submit" class="small" data-testid="add-maintenance">Add window</button></div>
  </form>`
      : ""
  }
</section>`;
}
