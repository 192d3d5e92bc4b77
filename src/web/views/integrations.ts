// Settings → Integrations, per project: the list (with each one's routing and template, editable),
// the form that adds one (a fieldset per kind, named KIND.KEY so only the chosen kind's are read),
// template previews, and the project's digests (views/digests.ts).
import { describeFilter } from "../../domain/routing.ts";
import { destination } from "../../domain/integration-kinds/configs.ts";
import {
  INTEGRATION_KINDS,
  type IntegrationKind,
  isIntegrationKind,
  KINDS,
} from "../../domain/integration-kinds/registry.ts";
import type { IntegrationView } from "../../domain/integrations.ts";
import type { Message } from "../../domain/templates.ts";
import type { RouteFilter, Template } from "../../model/notification.ts";
import type { Project } from "../../model/project.ts";
import { tagTerm } from "../filters.ts";
import { type Html, html, seg } from "../html.ts";
import { outcome } from "./notifications.ts";
import { prioritySelect } from "./priority.ts";
import { settingsNav } from "./settings.ts";

export function integrationsPage(opts: {
  projects: Project[];
  project: Project;
  integrations: IntegrationView[];
  digests: Html;
}): Html {
  return html`<header class="page-header"><h1>Settings</h1></header>
${settingsNav("/settings/integrations")}
<form method="get" action="/settings/integrations" class="inline-form" x-data="autoSubmit">
  <label>Project <select name="project" x-on:change="submit">${opts.projects.map((p) => html`<option value="${p.name}"${p.id === opts.project.id ? " selected" : ""}>${p.name}</option>`)}</select></label>
  <noscript><button type="submit" class="small">Show</button></noscript>
</form>
${integrationList(opts.project, opts.integrations)}
<section class="card" aria-labelledby="new-integration">
  <h2 id="new-integration">Add an integration</h2>
  ${integrationForm({ project: opts.project.name })}
</section>
${opts.digests}`;
}

/** The list reloads itself when one is added (the form stays, showing the new secret once). */
export function integrationList(project: Project, integrations: IntegrationView[]): Html {
  return html`<section class="card" aria-labelledby="integrations-title" id="integration-list" hx-get="/settings/integrations/list?project=${seg(project.name)}" hx-trigger="integration-added from:body" hx-swap="outerHTML" hx-disinherit="*">
  <h2 id="integrations-title">Integrations of ${project.name}</h2>
  <p class="muted small">Each gets the project's notify events its routing lets through (all of them unless limited), with the same queue, retries and records as push.</p>
  ${integrations.length ? html`<ul class="devices plain">${integrations.map((i) => integrationItem(project, i))}</ul>` : html`<p class="empty">No integrations yet.</p>`}
</section>`;
}

function integrationItem(project: Project, i: IntegrationView): Html {
  const path = `/settings/integrations/${i.id}`;
  const q = `?project=${seg(project.name)}`;
  return html`<li class="device card-inner" id="integration-${i.id}">
  <div class="device-head"><strong>${i.name}</strong> <span class="badge">${KINDS[i.kind].label}</span> ${i.enabled ? "" : html`<span class="badge">disabled</span>`}</div>
  <div class="small"><code data-testid="integration-destination">${destination(i.kind, i.config)}</code>${i.hasSecret ? html` <span class="muted">· secret stored</span>` : ""}</div>
  <div class="small muted" data-testid="integration-routing">Gets ${describeFilter(i.filter)}${i.template ? " · own template" : ""}</div>
  ${integrationOutcome(i)}
  <div class="actions wrap">
    <button type="button" class="secondary small" hx-post="${path}/test${q}" hx-target="#integration-${i.id}-status" data-testid="test-integration"${i.enabled ? "" : " disabled"}>Send test</button>
    <button type="button" class="secondary small" hx-post="${path}/toggle${q}" data-testid="toggle-integration">${i.enabled ? "Disable" : "Enable"}</button>
    <button type="button" class="secondary danger small" hx-get="${path}/delete${q}" hx-target="#modal" data-testid="delete-integration">Delete</button>
  </div>
  <p class="hint" id="integration-${i.id}-status" role="status"></p>
  <details>
    <summary>Routing and template</summary>
    <form class="stack" hx-post="${path}/edit${q}" hx-target="#integration-${i.id}-edit-status" data-testid="edit-integration">
      <input type="hidden" name="kind" value="${i.kind}">
      <input type="hidden" name="project" value="${project.name}">
      <label>Name <input name="name" value="${i.name}" maxlength="100"></label>
      ${routingFields(i.filter)}
      ${templateFields(i.kind, i.template, `integration-${i.id}`)}
      <p class="hint" id="integration-${i.id}-edit-status" role="status"></p>
      <button type="submit" class="small">Save</button>
    </form>
  </details>
</li>`;
}

/** An integration's last result; after "Send test" it is fetched again until the test's result is in. */
export function integrationOutcome(i: IntegrationView): Html {
  return html`<div class="small" id="integration-${i.id}-outcome" data-testid="integration-outcome">${outcome(i.lastSuccessAt, i.lastError, i.lastErrorAt)}</div>`;
}

/** "Test queued", with a poller that swaps in the new result (and a message) once the test was delivered or failed. */
export function integrationTestQueued(project: string, id: number, queuedAt: number): Html {
  return html`Test queued; it should arrive within seconds.<span hx-get="/settings/integrations/${id}/outcome?project=${seg(project)}&amp;since=${queuedAt}" hx-trigger="every 1s" hx-target="#integration-${id}-outcome" hx-swap="outerHTML"></span>`;
}

export function integrationTestDone(i: IntegrationView, delivered: boolean | null): Html {
  const message =
    delivered === null
      ? "No result yet: the receiver has not answered. The status above updates on reload."
      : delivered
        ? "Test delivered."
        : "Test failed; see the error above.";
  return html`${integrationOutcome(i)}<p class="hint${delivered === false ? " error" : ""}" id="integration-${i.id}-status" role="status" hx-swap-oob="true">${message}</p>`;
}

const list = (values: string[] | undefined) => (values ?? []).join(", ");
const pairs = (tags: Record<string, string> | undefined) =>
  Object.entries(tags ?? {})
    .map(([k, v]) => tagTerm(k, String(v)))
    .join(" ");

/** Which events: channels, channels left out, tags and the least priority. */
function routingFields(filter: RouteFilter | null, values: Record<string, string> = {}): Html {
  return html`<fieldset class="stack"><legend>Which events (empty: every notify event of the project)</legend>
  <div class="grid-2">
    <label>Only channels <input name="channels" value="${values.channels ?? list(filter?.channels)}" placeholder="alerts, payments" autocomplete="off"></label>
    <label>Except channels <input name="exclude_channels" value="${values.exclude_channels ?? list(filter?.exclude_channels)}" placeholder="alerts" autocomplete="off"></label>
    <label>Only with tags <input name="tags" value="${values.tags ?? pairs(filter?.tags)}" placeholder="env:prod plan:pro" autocomplete="off"></label>
    <label>Least priority ${prioritySelect("min_priority", Number(values.min_priority) || filter?.min_priority || 1)}</label>
  </div>
</fieldset>`;
}

/** Title and body templates, with a preview of what they make of a sample event. */
function templateFields(
  kind: IntegrationKind | null,
  template: Template | null,
  id: string,
  values: Record<string, string> = {},
): Html {
  return html`<fieldset class="stack"><legend>Template (empty: the default wording)</legend>
  <p class="muted small">Variables: <code>{{event}}</code> <code>{{description}}</code> <code>{{channel}}</code> <code>{{project}}</code> <code>{{icon}}</code> <code>{{user_id}}</code> <code>{{tags.plan}}</code> <code>{{url}}</code> <code>{{priority}}</code>. The body is ${kind ? KINDS[kind].formatHint : "in the kind's format"}.</p>
  <label>Title <input name="template_title" value="${values.template_title ?? template?.title ?? ""}" maxlength="250" placeholder="{{icon}} {{event}}" autocomplete="off"></label>
  <label>Body <textarea name="template_body" rows="3" maxlength="4000" placeholder="{{description}}">${values.template_body ?? template?.body ?? ""}</textarea></label>
  <div><button type="button" class="secondary small" hx-post="/settings/integrations/preview" hx-include="closest form" hx-target="#${id}-preview" data-testid="preview-template">Preview</button></div>
  <div id="${id}-preview" class="template-preview" aria-live="polite"></div>
</fieldset>`;
}

/** What a template makes of the sample event, as it is sent (shown as text). */
export function templatePreview(kind: IntegrationKind, message: Message): Html {
  return html`<div class="card-inner small" data-testid="template-preview">
  <p class="muted">${KINDS[kind].label}, of a sample event (its text tries markup of every kind):</p>
  <p><strong>Title</strong></p><pre>${message.title}</pre>
  <p><strong>Body</strong></p><pre>${message.json ?? message.body}</pre>
  ${message.html ? html`<p><strong>HTML</strong></p><pre>${message.html}</pre>` : ""}
</div>`;
}

export function templatePreviewError(message: string): Html {
  return html`<p class="hint error" role="alert" data-testid="template-error">${message}</p>`;
}

export function integrationForm(opts: {
  project: string;
  values?: Record<string, string>;
  error?: string;
  secret?: { name: string; value: string };
}): Html {
  const v = opts.values ?? {};
  const kind: IntegrationKind = v.kind && isIntegrationKind(v.kind) ? v.kind : "webhook";
  return html`<div id="integration-create">
  ${
    opts.secret
      ? html`<p class="alert success" role="status">Webhook “${opts.secret.name}” added. Its signing secret is shown only this once: requests carry <code>X-Signalboard-Signature: sha256=HMAC-SHA256(secret, body)</code>.</p>
  <div class="copy-row" x-data="copyButton"><input type="text" readonly value="${opts.secret.value}" x-ref="source" aria-label="Signing secret" data-testid="webhook-secret"><button type="button" x-on:click="copy" x-text="label">Copy</button></div>`
      : ""
  }
  <form class="stack" hx-post="/settings/integrations" hx-target="#integration-create" hx-swap="outerHTML" x-data="integrationForm" data-kind="${kind}">
    ${opts.error ? html`<p class="alert" role="alert">${opts.error}</p>` : ""}
    <input type="hidden" name="project" value="${opts.project}">
    <label>Kind <select name="kind" x-on:change="pick">${INTEGRATION_KINDS.map((k) => html`<option value="${k}"${k === kind ? " selected" : ""}>${KINDS[k].label}</option>`)}</select></label>
    <label>Name <input name="name" value="${v.name ?? ""}" required maxlength="100" placeholder="phone, #ops channel…"></label>
    ${INTEGRATION_KINDS.map(
      (k) => html`<fieldset class="stack" data-kind="${k}" x-show="isKind"${k === kind ? "" : html` x-cloak`}>
      <legend>${KINDS[k].label}</legend>
      ${KINDS[k].fields.map((f) => html`<label>${f.label} <input name="${k}.${f.key}" type="${f.type ?? "text"}" value="${f.type === "password" ? "" : (v[`${k}.${f.key}`] ?? "")}" placeholder="${f.placeholder ?? ""}" autocomplete="off"></label>`)}
      <p class="muted small">${KINDS[k].hint}</p>
    </fieldset>`,
    )}
    <details>
      <summary>Routing and template (optional)</summary>
      <div class="stack">
        ${routingFields(null, v)}
        ${templateFields(null, null, "integration-new", v)}
      </div>
    </details>
    <button type="submit">Add integration</button>
  </form>
</div>`;
}
