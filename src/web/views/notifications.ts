// Settings → Notifications (this user's devices) and Settings → Integrations (per project).
import type { DeviceView, IntegrationView } from "../../domain/notifications.ts";
import { type Html, html, seg } from "../html.ts";
import { time } from "./events.ts";
import { settingsNav } from "./settings.ts";
import type { Channel, Project } from "../../model/project.ts";

function outcome(lastSuccessAt: number | null, lastError: string | null, lastErrorAt: number | null): Html {
  const failedLast = lastErrorAt !== null && (lastSuccessAt === null || lastErrorAt > lastSuccessAt);
  return html`${lastSuccessAt ? html`<span>Last delivered ${time(lastSuccessAt)}</span>` : html`<span class="muted">Nothing delivered yet</span>`}
  ${failedLast ? html`<p class="hint error" data-testid="last-error">Last error ${time(lastErrorAt!)}: ${lastError}</p>` : ""}`;
}

export function notificationsPage(opts: { devices: DeviceView[]; projects: { project: Project; channels: Channel[] }[]; vapidKey: string }): Html {
  return html`<header class="page-header"><h1>Settings</h1></header>
${settingsNav("/settings/notifications")}
<section class="card" aria-labelledby="this-device" x-data="pushDevice" data-vapid-key="${opts.vapidKey}">
  <h2 id="this-device">This device</h2>
  <p class="muted small">Events sent with <code>"notify": true</code> (and no timestamp) arrive as notifications on every device enabled here, even with no tab open.</p>
  <div x-show="isUnsupported" x-cloak>
    <p class="alert">This browser cannot receive push notifications here. On an iPhone or iPad, first add Signalboard to the Home Screen (Share → Add to Home Screen), open it from there, and come back to this page. Push also needs https (or localhost).</p>
  </div>
  <div x-show="isBlocked" x-cloak><p class="alert">Notifications are blocked for this site. Allow them in the browser's site settings, then reload.</p></div>
  <div x-show="isEnabled" x-cloak><p class="alert success">This device gets notifications.</p></div>
  <form class="grid-2" x-show="canEnable" x-cloak x-on:submit.prevent="enable">
    <label>Device name <input name="deviceName" x-ref="name" maxlength="100" required></label>
    <div class="align-end"><button type="submit" data-testid="enable-push" x-bind:disabled="busy">Enable on this device</button></div>
  </form>
  <p class="hint error" x-show="hasError" x-text="error" x-cloak></p>
</section>
<section class="card" aria-labelledby="devices-title">
  <h2 id="devices-title">Your devices</h2>
  ${opts.devices.length ? html`<ul class="devices plain">${opts.devices.map((d) => deviceItem(d, opts.projects))}</ul>` : html`<p class="empty" id="no-devices">No device gets notifications yet.</p>`}
</section>
<section class="card" aria-labelledby="how-title">
  <h2 id="how-title">Getting notifications</h2>
  <ul>
    <li><strong>Android</strong> (Chrome, Firefox, Edge): open the dashboard, press <em>Enable on this device</em>, allow notifications. Installing it (menu → Add to Home screen) is optional.</li>
    <li><strong>iPhone and iPad</strong> (iOS 16.4 or later): open the dashboard in Safari, Share → <em>Add to Home Screen</em>, open Signalboard from the Home Screen, then enable it here. iOS delivers web push only to apps on the Home Screen.</li>
    <li><strong>Desktop</strong> (Chrome, Edge, Firefox, Safari 16+): enable it here; notifications arrive while the browser runs, even with no Signalboard tab open.</li>
    <li>Push needs the dashboard on https (or http://localhost). Phones that already run ntfy, Discord or Slack can use <a href="/settings/integrations">Integrations</a> instead.</li>
  </ul>
</section>`;
}

function deviceItem(d: DeviceView, projects: { project: Project; channels: Channel[] }[]): Html {
  const chosen = new Set((d.filterList ?? []).flatMap((f) => (f.channels === null ? [f.project] : f.channels.map((c) => `${f.project}/${c}`))));
  const summary = d.filterList === null ? "all projects" : (d.filterList.map((f) => (f.channels ? f.channels.map((c) => `${f.project} / #${c}`).join(", ") : f.project)).join(", "));
  return html`<li class="device card-inner" id="device-${d.id}" data-endpoint="${d.endpoint}">
  <div class="device-head"><strong>${d.deviceName}</strong> <span class="muted small">added ${time(d.createdAt)} · notifies about ${summary}</span></div>
  <div class="small">${outcome(d.lastSuccessAt, d.lastError, d.lastErrorAt)}</div>
  <div class="actions wrap">
    <button type="button" class="secondary small" hx-post="/settings/notifications/devices/${d.id}/test" hx-target="#device-${d.id}-status" data-testid="test-device">Send a test notification</button>
    <button type="button" class="secondary danger small" hx-get="/settings/notifications/devices/${d.id}/remove" hx-target="#modal" data-testid="remove-device">Remove</button>
  </div>
  <p class="hint" id="device-${d.id}-status" role="status"></p>
  <details>
    <summary>Choose projects and channels</summary>
    <form hx-post="/settings/notifications/devices/${d.id}/filters" class="stack filters-form">
      <p class="muted small">Nothing ticked means every project and channel.</p>
      ${projects.map(
        ({ project, channels }) => html`<fieldset><legend><label class="choice"><input type="checkbox" name="scope" value="${project.name}"${chosen.has(project.name) ? " checked" : ""}> ${project.name} (all channels)</label></legend>
        ${channels.map((c) => html`<label class="choice"><input type="checkbox" name="scope" value="${project.name}/${c.name}"${chosen.has(`${project.name}/${c.name}`) ? " checked" : ""}> #${c.name}</label>`)}</fieldset>`,
      )}
      <button type="submit" class="small">Save</button>
    </form>
  </details>
</li>`;
}

export function integrationsPage(opts: { projects: Project[]; project: Project; integrations: IntegrationView[]; form?: Html }): Html {
  return html`<header class="page-header"><h1>Settings</h1></header>
${settingsNav("/settings/integrations")}
<form method="get" action="/settings/integrations" class="inline-form" x-data="autoSubmit">
  <label>Project <select name="project" x-on:change="submit">${opts.projects.map((p) => html`<option value="${p.name}"${p.id === opts.project.id ? " selected" : ""}>${p.name}</option>`)}</select></label>
  <noscript><button type="submit" class="small">Show</button></noscript>
</form>
${integrationList(opts.project, opts.integrations)}
<section class="card" aria-labelledby="new-integration">
  <h2 id="new-integration">Add an integration</h2>
  ${opts.form ?? integrationForm({ project: opts.project.name })}
</section>`;
}

/** The list reloads itself when one is added (the form stays, showing the new secret once). */
export function integrationList(project: Project, integrations: IntegrationView[]): Html {
  return html`<section class="card" aria-labelledby="integrations-title" id="integration-list" hx-get="/settings/integrations/list?project=${seg(project.name)}" hx-trigger="integration-added from:body" hx-swap="outerHTML" hx-disinherit="*">
  <h2 id="integrations-title">Integrations of ${project.name}</h2>
  <p class="muted small">Each gets every notify event of the project, with the same queue, retries and records as push.</p>
  ${integrations.length ? html`<ul class="devices plain">${integrations.map((i) => integrationItem(project, i))}</ul>` : html`<p class="empty">No integrations yet.</p>`}
</section>`;
}

const KIND_LABEL = { webhook: "Webhook (signed JSON)", ntfy: "ntfy topic", discord: "Discord", slack: "Slack" } as const;

function integrationItem(project: Project, i: IntegrationView): Html {
  const path = `/settings/integrations/${i.id}`;
  const q = `?project=${seg(project.name)}`;
  return html`<li class="device card-inner" id="integration-${i.id}">
  <div class="device-head"><strong>${i.name}</strong> <span class="badge">${KIND_LABEL[i.kind]}</span> ${i.enabled ? "" : html`<span class="badge">disabled</span>`}</div>
  <div class="small"><code>${i.url}${i.topic ? ` → ${i.topic}` : ""}</code>${i.hasSecret ? html` <span class="muted">· secret stored</span>` : ""}</div>
  ${integrationOutcome(i)}
  <div class="actions wrap">
    <button type="button" class="secondary small" hx-post="${path}/test${q}" hx-target="#integration-${i.id}-status" data-testid="test-integration"${i.enabled ? "" : " disabled"}>Send test</button>
    <button type="button" class="secondary small" hx-post="${path}/toggle${q}" data-testid="toggle-integration">${i.enabled ? "Disable" : "Enable"}</button>
    <button type="button" class="secondary danger small" hx-get="${path}/delete${q}" hx-target="#modal" data-testid="delete-integration">Delete</button>
  </div>
  <p class="hint" id="integration-${i.id}-status" role="status"></p>
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
  const message = delivered === null ? "No result yet: the receiver has not answered. The status above updates on reload." : delivered ? "Test delivered." : "Test failed; see the error above.";
  return html`${integrationOutcome(i)}<p class="hint${delivered === false ? " error" : ""}" id="integration-${i.id}-status" role="status" hx-swap-oob="true">${message}</p>`;
}

export function integrationForm(opts: { project: string; values?: Record<string, string>; error?: string; secret?: { name: string; value: string } }): Html {
  const v = opts.values ?? {};
  const kind = v.kind || "webhook";
  return html`<div id="integration-create">
  ${opts.secret ? html`<p class="alert success" role="status">Webhook “${opts.secret.name}” added. Its signing secret is shown only this once: requests carry <code>X-Signalboard-Signature: sha256=HMAC-SHA256(secret, body)</code>.</p>
  <div class="copy-row" x-data="copyButton"><input type="text" readonly value="${opts.secret.value}" x-ref="source" aria-label="Signing secret" data-testid="webhook-secret"><button type="button" x-on:click="copy" x-text="label">Copy</button></div>` : ""}
  <form class="stack" hx-post="/settings/integrations" hx-target="#integration-create" hx-swap="outerHTML" x-data="integrationForm" data-kind="${kind}">
    ${opts.error ? html`<p class="alert" role="alert">${opts.error}</p>` : ""}
    <input type="hidden" name="project" value="${opts.project}">
    <label>Kind <select name="kind" x-on:change="pick">${(Object.keys(KIND_LABEL) as (keyof typeof KIND_LABEL)[]).map((k) => html`<option value="${k}"${k === kind ? " selected" : ""}>${KIND_LABEL[k]}</option>`)}</select></label>
    <label>Name <input name="name" value="${v.name ?? ""}" required maxlength="100" placeholder="phone, #ops channel…"></label>
    <label><span x-text="urlLabel">URL</span> <input name="url" type="url" value="${v.url ?? ""}" required placeholder="https://" autocomplete="off"></label>
    <div class="grid-2" x-show="isNtfy"${kind === "ntfy" ? "" : html` x-cloak`}>
      <label>Topic <input name="topic" value="${v.topic ?? ""}" placeholder="my-alerts" autocomplete="off"></label>
      <label>Access token (optional) <input name="token" type="password" autocomplete="off"></label>
    </div>
    <p class="muted small" x-text="urlHint"></p>
    <button type="submit">Add integration</button>
  </form>
</div>`;
}
