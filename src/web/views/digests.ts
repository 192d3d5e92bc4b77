// The digests of a project, on Settings → Integrations: the list and the form that adds one.
import { paths } from "../paths.ts";
import { href } from "../../http/href.ts";
import type { IntegrationView } from "../../domain/integrations.ts";
import type { Digest } from "../../model/notification.ts";
import type { Project } from "../../model/project.ts";
import { type Html, html } from "../html.ts";
import { time } from "./events.ts";
import { outcome } from "./notifications.ts";

const WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];

export function digestsCard(opts: {
  project: Project;
  digests: (Digest & { schedule: string })[];
  integrations: IntegrationView[];
  values?: Record<string, string | string[]>;
  error?: string;
}): Html {
  const { project } = opts;
  return html`<section class="card" aria-labelledby="digests-title" id="digests">
  <h2 id="digests-title">Digests of ${project.name}</h2>
  <p class="muted small">A daily or weekly summary: events per channel against the period before, the top events, metrics, alerts that fired, and a link here.</p>
  ${opts.digests.length ? html`<ul class="devices plain">${opts.digests.map((d) => digestItem(project, d, opts.integrations))}</ul>` : html`<p class="empty">No digests yet.</p>`}
  ${digestForm(opts)}
</section>`;
}

function digestItem(project: Project, d: Digest & { schedule: string }, integrations: IntegrationView[]): Html {
  const to = [
    ...d.integrationIds.map((id) => integrations.find((i) => i.id === id)?.name ?? `integration ${id}`),
    ...d.emails,
  ];
  const q = { project: project.name };
  return html`<li class="device card-inner" id="digest-${d.id}">
  <div class="device-head"><strong>${d.name}</strong> <span class="muted small">${d.schedule} · to ${to.join(", ")}</span></div>
  <div class="small">${d.lastSentAt ? html`<span>Last sent ${time(d.lastSentAt)} (period ending ${d.lastPeriod})</span>` : html`<span class="muted">Not sent yet</span>`}</div>
  ${d.emails.length ? html`<div class="small">${outcome(d.lastSuccessAt, d.lastError, d.lastErrorAt)}</div>` : ""}
  <div class="actions wrap">
    <button type="button" class="secondary small" hx-post="${href(paths.digestSend, { id: d.id }, q)}" hx-target="#digest-${d.id}-status" data-testid="send-digest">Send the last one now</button>
    <button type="button" class="secondary danger small" hx-get="${href(paths.digestDelete, { id: d.id }, q)}" hx-target="#modal" data-testid="delete-digest">Delete</button>
  </div>
  <p class="hint" id="digest-${d.id}-status" role="status"></p>
</li>`;
}

function digestForm(opts: {
  project: Project;
  integrations: IntegrationView[];
  values?: Record<string, string | string[]>;
  error?: string;
}): Html {
  const v = opts.values ?? {};
  const one = (key: string) => (typeof v[key] === "string" ? (v[key] as string) : "");
  const chosen = new Set([v.integration ?? []].flat());
  const hour = one("hour") || "8";
  return html`<details${opts.error ? " open" : ""}>
  <summary>Add a digest</summary>
  <form class="stack" method="post" action="${href(paths.digests, {}, { project: opts.project.name })}" hx-post="${href(paths.digests, {}, { project: opts.project.name })}" hx-target="#digests" hx-swap="outerHTML">
    ${opts.error ? html`<p class="alert" role="alert">${opts.error}</p>` : ""}
    <label>Name <input name="name" value="${one("name")}" maxlength="100" placeholder="Daily digest"></label>
    <div class="grid-2">
      <label>How often <select name="frequency"><option value="daily"${one("frequency") === "weekly" ? "" : " selected"}>Every day</option><option value="weekly"${one("frequency") === "weekly" ? " selected" : ""}>Every week</option></select></label>
      <label>On (weekly) <select name="weekday">${WEEKDAYS.map((day, i) => html`<option value="${i + 1}"${one("weekday") === String(i + 1) ? " selected" : ""}>${day}</option>`)}</select></label>
      <label>At <select name="hour">${Array.from({ length: 24 }, (_, h) => html`<option value="${h}"${String(h) === hour ? " selected" : ""}>${String(h).padStart(2, "0")}:00</option>`)}</select></label>
      <label>Time zone <input name="time_zone" value="${one("time_zone")}" placeholder="Europe/Paris" x-data="timeZoneField" autocomplete="off"></label>
    </div>
    <fieldset><legend>Send to</legend>
      ${opts.integrations.map((i) => html`<label class="choice"><input type="checkbox" name="integration" value="${i.id}"${chosen.has(String(i.id)) ? " checked" : ""}> ${i.name}</label>`)}
      <label>E-mail addresses <input name="emails" value="${one("emails")}" placeholder="team@example.com" autocomplete="off"></label>
    </fieldset>
    <button type="submit" class="small">Add digest</button>
  </form>
</details>`;
}
