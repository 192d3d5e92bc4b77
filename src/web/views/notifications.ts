// Settings → Notifications: this user's devices.
import { paths } from "../paths.ts";
import { href } from "../../http/href.ts";
import type { DeviceView } from "../../domain/notifications.ts";
import { type Html, html } from "../html.ts";
import { time } from "./events.ts";
import { settingsNav } from "./settings.ts";
import { prioritySelect } from "./priority.ts";
import type { Channel, Project } from "../../model/project.ts";

export function outcome(lastSuccessAt: number | null, lastError: string | null, lastErrorAt: number | null): Html {
  const failedLast = lastErrorAt !== null && (lastSuccessAt === null || lastErrorAt > lastSuccessAt);
  return html`${lastSuccessAt ? html`<span>Last delivered ${time(lastSuccessAt)}</span>` : html`<span class="muted">Nothing delivered yet</span>`}
  ${failedLast ? html`<p class="hint error" data-testid="last-error">Last error ${time(lastErrorAt!)}: ${lastError}</p>` : ""}`;
}

export function notificationsPage(opts: {
  devices: DeviceView[];
  projects: { project: Project; channels: Channel[] }[];
  vapidKey: string;
  /** Whether the reader may open Settings → Integrations (admins and the owner). */
  managesIntegrations: boolean;
}): Html {
  return html`<header class="page-header"><h1>Settings</h1></header>
${settingsNav(paths.notifications)}
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
    <li>Push needs the dashboard on https (or http://localhost). Phones that already run Telegram, ntfy, Gotify, Pushover, Matrix, Discord or Slack, and e-mail, can use ${opts.managesIntegrations ? html`<a href="${paths.integrations}">Integrations</a>` : "integrations (an admin adds them)"} instead.</li>
  </ul>
</section>`;
}

function deviceItem(d: DeviceView, projects: { project: Project; channels: Channel[] }[]): Html {
  const chosen = new Set(
    (d.filterList ?? []).flatMap((f) =>
      f.channels === null ? [f.project] : f.channels.map((c) => `${f.project}/${c}`),
    ),
  );
  const scope =
    d.filterList === null
      ? "all projects"
      : d.filterList
          .map((f) => (f.channels ? f.channels.map((c) => `${f.project} / #${c}`).join(", ") : f.project))
          .join(", ");
  const tags = d.tagList
    ? Object.entries(d.tagList)
        .map(([k, v]) => `${k}:${v}`)
        .join(" ")
    : "";
  const summary = [scope, tags && `with ${tags}`, d.minPriority > 1 && `priority ${d.minPriority}+`]
    .filter(Boolean)
    .join(", ");
  return html`<li class="device card-inner" id="device-${d.id}" data-endpoint="${d.endpoint}">
  <div class="device-head"><strong>${d.deviceName}</strong> <span class="muted small">added ${time(d.createdAt)} · notifies about ${summary}</span></div>
  <div class="small">${outcome(d.lastSuccessAt, d.lastError, d.lastErrorAt)}</div>
  <div class="actions wrap">
    <button type="button" class="secondary small" hx-post="${href(paths.deviceTest, { id: d.id })}" hx-target="#device-${d.id}-status" data-testid="test-device">Send a test notification</button>
    <button type="button" class="secondary danger small" hx-get="${href(paths.deviceRemove, { id: d.id })}" hx-target="#modal" data-testid="remove-device">Remove</button>
  </div>
  <p class="hint" id="device-${d.id}-status" role="status"></p>
  <details>
    <summary>Choose projects and channels, tags and a least priority</summary>
    <form hx-post="${href(paths.deviceFilters, { id: d.id })}" hx-target="#device-${d.id}-filter-status" class="stack filters-form">
      <p class="muted small">Nothing ticked means every project and channel.</p>
      ${projects.map(
        ({
          project,
          channels,
        }) => html`<fieldset><legend><label class="choice"><input type="checkbox" name="scope" value="${project.name}"${chosen.has(project.name) ? " checked" : ""}> ${project.name} (all channels)</label></legend>
        ${channels.map((c) => html`<label class="choice"><input type="checkbox" name="scope" value="${project.name}/${c.name}"${chosen.has(`${project.name}/${c.name}`) ? " checked" : ""}> #${c.name}</label>`)}</fieldset>`,
      )}
      <div class="grid-2">
        <label>Only with tags <input name="tags" value="${tags}" placeholder="env:prod plan:pro" autocomplete="off"></label>
        <label>Least priority ${prioritySelect("min_priority", d.minPriority)}</label>
      </div>
      <p class="hint" id="device-${d.id}-filter-status" role="status"></p>
      <button type="submit" class="small">Save</button>
    </form>
  </details>
</li>`;
}
