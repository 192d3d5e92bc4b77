// Settings: API tokens and members.
import { type Html, html } from "../html.ts";
import { time } from "./events.ts";
import type { Project } from "../../model/project.ts";
import type { Token } from "../../model/token.ts";
import type { User } from "../../model/user.ts";

export function settingsNav(current: string): Html {
  const links: [string, string][] = [
    ["/settings/api", "API"],
    ["/settings/notifications", "Notifications"],
    ["/settings/integrations", "Integrations"],
    ["/settings/members", "Members"],
  ];
  // On a narrow screen the tabs scroll sideways; a fade at an edge shows that more tabs are there.
  return html`<div class="tabs-wrap" x-data="scrollHint" x-bind:class="hintClass"><nav class="tabs" aria-label="Settings" x-ref="strip">${links.map(([href, label]) => html`<a href="${href}"${href === current ? html` aria-current="page"` : ""}>${label}</a>`)}</nav></div>`;
}

export function apiPage(opts: { tokens: Token[]; projects: Project[]; form?: Html }): Html {
  return html`<header class="page-header"><h1>Settings</h1></header>
${settingsNav("/settings/api")}
<section class="card" aria-labelledby="new-token">
  <h2 id="new-token">Create a token</h2>
  ${opts.form ?? tokenCreator({ projects: opts.projects })}
</section>
<section class="card" aria-labelledby="token-list-title">
  <h2 id="token-list-title">Tokens</h2>
  ${tokenTable(opts.tokens)}
</section>`;
}

/** The form, and above it the token just created (shown once); each creation replaces both. */
export function tokenCreator(opts: { projects: Project[]; values?: Record<string, string>; error?: string; created?: { token: string; info: Token } }): Html {
  return html`<div id="token-create" class="created-token">
  ${opts.created ? createdToken(opts.created.token, opts.created.info) : ""}
  ${tokenForm(opts)}
</div>`;
}

function tokenForm(opts: { projects: Project[]; values?: Record<string, string>; error?: string }): Html {
  const v = opts.values ?? {};
  return html`<form class="stack" hx-post="/settings/api/tokens" hx-target="#token-create" hx-swap="outerHTML" x-data="tokenForm">
  ${opts.error ? html`<p class="alert" role="alert">${opts.error}</p>` : ""}
  <label for="token-name">Name</label>
  <input id="token-name" name="name" value="${v.name ?? ""}" placeholder="website, backend, cron…" required maxlength="100" autocomplete="off">
  <fieldset>
    <legend>Access</legend>
    <label class="choice"><input type="radio" name="kind" value="full" x-on:change="pick"${v.kind !== "public" ? " checked" : ""}> Full access: every route, every project. Keep it secret.</label>
    <label class="choice"><input type="radio" name="kind" value="public" x-on:change="pick"${v.kind === "public" ? " checked" : ""}> Public: may only send events and metrics to one project (and channel). Safe in a web page.</label>
  </fieldset>
  <div class="stack" x-show="isPublic"${v.kind === "public" ? "" : html` x-cloak`}>
    <div class="grid-2">
      <label>Project <select name="project">${opts.projects.map((p) => html`<option value="${p.name}"${p.name === v.project ? " selected" : ""}>${p.name}</option>`)}</select></label>
      <label>Channel (optional) <input name="channel" value="${v.channel ?? ""}" placeholder="any channel" autocomplete="off"></label>
    </div>
    <label class="choice"><input type="checkbox" name="may_notify" value="on"${v.may_notify === "on" ? " checked" : ""}> May send notifications: its events with <code>notify: true</code> push to every device. Anyone who reads the web page can use it.</label>
  </div>
  <button type="submit">Create token</button>
</form>`;
}

function createdToken(token: string, info: Token): Html {
  return html`<p class="alert success" role="status">Token “${info.name}” created. Copy it now: it is shown only this once.</p>
  <div class="copy-row" x-data="copyButton">
    <input type="text" readonly value="${token}" x-ref="source" aria-label="New token" data-testid="new-token-value">
    <button type="button" x-on:click="copy" x-text="label">Copy</button>
  </div>
  <div hx-get="/settings/api/tokens/list" hx-trigger="load" hx-target="#token-table" hx-swap="outerHTML"></div>`;
}

export function tokenTable(tokens: Token[]): Html {
  if (!tokens.length) return html`<div id="token-table"><p class="empty">No tokens yet.</p></div>`;
  return html`<div id="token-table" class="table-wrap"><table class="tokens cards">
  <thead><tr><th>Name</th><th>Access</th><th>Scope</th><th>Notifies</th><th>Prefix</th><th>Created</th><th>Last used</th><th><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>${tokens.map(
    (t) => html`<tr id="token-${t.id}">
    <td class="card-title">${t.name}</td>
    <td data-label="Access"><span class="badge ${t.kind}">${t.kind === "full" ? "full" : "public"}</span></td>
    <td data-label="Scope">${t.kind === "full" ? "all projects" : `${t.project}${t.channel ? ` / #${t.channel}` : ""}`}</td>
    <td data-label="Notifies">${t.kind === "full" ? "yes" : html`${t.mayNotify ? "yes" : "no"} <button type="button" class="secondary small" hx-post="/settings/api/tokens/${t.id}/notify" hx-vals='${JSON.stringify({ may_notify: t.mayNotify ? "off" : "on" })}' hx-target="#token-table" hx-swap="outerHTML" data-testid="notify-${t.name}">${t.mayNotify ? "Stop" : "Allow"}</button>`}</td>
    <td data-label="Prefix"><code>${t.prefix}…</code></td>
    <td data-label="Created">${time(t.createdAt)}<br><span class="muted">by ${t.createdBy ?? "the command line"}</span></td>
    <td data-label="Last used">${t.lastUsedAt ? time(t.lastUsedAt) : html`<span class="muted">never</span>`}</td>
    <td class="row-actions"><button type="button" class="secondary danger small" hx-get="/settings/api/tokens/${t.id}/revoke" hx-target="#modal" data-testid="revoke-${t.name}">Revoke</button></td>
  </tr>`,
  )}</tbody></table></div>`;
}

export function membersPage(opts: { users: User[]; me: User; form?: Html }): Html {
  const owner = opts.me.role === "owner";
  return html`<header class="page-header"><h1>Settings</h1></header>
${settingsNav("/settings/members")}
<section class="card" aria-labelledby="members-title">
  <h2 id="members-title">Members</h2>
  <div class="table-wrap"><table class="members cards">
    <thead><tr><th>User</th><th>Role</th><th>Since</th><th><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>${opts.users.map(
      (u) => html`<tr id="user-${u.id}"><td class="card-title">${u.username}${u.id === opts.me.id ? html` <span class="muted">(you)</span>` : ""}</td><td data-label="Role">${u.role}</td><td data-label="Since">${time(u.createdAt)}</td>
      <td class="row-actions">${owner && u.id !== opts.me.id ? html`<button type="button" class="secondary danger small" hx-get="/settings/members/${u.id}/remove" hx-target="#modal" data-testid="remove-${u.username}">Remove</button>` : ""}</td></tr>`,
    )}</tbody>
  </table></div>
</section>
${owner ? html`<section class="card" aria-labelledby="add-member">
  <h2 id="add-member">Add a member</h2>
  ${opts.form ?? memberForm({})}
</section>` : html`<p class="muted">Only the owner can add or remove members.</p>`}`;
}

export function memberForm(opts: { username?: string; errors?: Record<string, string> }): Html {
  return html`<form id="member-form" class="stack" hx-post="/settings/members" hx-target="this" hx-swap="outerHTML">
  <label for="member-username">Username</label>
  <input id="member-username" name="username" value="${opts.username ?? ""}" autocomplete="off" required>
  ${opts.errors?.username ? html`<p class="hint error">${opts.errors.username}</p>` : ""}
  <label for="member-password">Password (at least 8 characters; share it with them)</label>
  <input id="member-password" name="password" type="password" autocomplete="new-password" required>
  ${opts.errors?.password ? html`<p class="hint error">${opts.errors.password}</p>` : ""}
  <button type="submit">Add member</button>
</form>`;
}
