// Settings: the tabs, and API tokens.
import { paths } from "../paths.ts";
import { href } from "../../http/href.ts";
import { type Html, html } from "../html.ts";
import { time } from "./events.ts";
import type { Project } from "../../model/project.ts";
import type { Token } from "../../model/token.ts";
import type { Role } from "../../model/user.ts";

/** The tabs, each with the least role it is for: the page shell hides the others (the server refuses them anyway). */
const TABS: [string, string, Role][] = [
  [paths.account, "Account", "viewer"],
  [paths.notifications, "Notifications", "viewer"],
  [paths.api, "API", "admin"],
  [paths.integrations, "Integrations", "admin"],
  [paths.members, "Members", "admin"],
  [paths.audit, "Audit", "owner"],
];

export function settingsNav(current: string): Html {
  // On a narrow screen the tabs scroll sideways; a fade at an edge shows that more tabs are there.
  return html`<div class="tabs-wrap" x-data="scrollHint" x-bind:class="hintClass"><nav class="tabs" aria-label="Settings" x-ref="strip">${TABS.map(
    ([href, label, least]) =>
      html`<a href="${href}"${least === "viewer" ? "" : html` class="needs-${least}"`}${href === current ? html` aria-current="page"` : ""}>${label}</a>`,
  )}</nav></div>`;
}

/** Where a new token's snippets point: this server, and a project (and channel) it may send to. */
export type SnippetTarget = { baseUrl: string; project: string; channel: string };

export function apiPage(opts: { tokens: Token[]; projects: Project[]; mine: string[] | null; form?: Html }): Html {
  return html`<header class="page-header"><h1>Settings</h1></header>
${settingsNav(paths.api)}
<section class="card" aria-labelledby="new-token">
  <h2 id="new-token">Create a token</h2>
  ${opts.form ?? tokenCreator({ projects: opts.projects, mine: opts.mine })}
</section>
<section class="card" aria-labelledby="token-list-title">
  <h2 id="token-list-title">Tokens</h2>
  ${tokenTable(opts.tokens)}
</section>`;
}

/** The form, and above it the token just created (shown once); each creation replaces both. */
/** `mine`: the projects of the person creating it, when they are limited to some (their full-access tokens are limited to those). */
export function tokenCreator(opts: {
  projects: Project[];
  mine: string[] | null;
  values?: Record<string, string>;
  error?: string;
  created?: { token: string; info: Token; target: SnippetTarget };
}): Html {
  return html`<div id="token-create" class="created-token">
  ${opts.created ? createdToken(opts.created.token, opts.created.info, opts.created.target) : ""}
  ${tokenForm(opts)}
</div>`;
}

function tokenForm(opts: {
  projects: Project[];
  mine: string[] | null;
  values?: Record<string, string>;
  error?: string;
}): Html {
  const v = opts.values ?? {};
  return html`<form class="stack" hx-post="${paths.tokens}" hx-target="#token-create" hx-swap="outerHTML" x-data="tokenForm">
  ${opts.error ? html`<p class="alert" role="alert" data-testid="token-error">${opts.error}</p>` : ""}
  <label for="token-name">Name</label>
  <input id="token-name" name="name" value="${v.name ?? ""}" placeholder="website, backend, cron…" required maxlength="100" autocomplete="off">
  <fieldset>
    <legend>Access</legend>
    <label class="choice"><input type="radio" name="kind" value="full" x-on:change="pick"${v.kind !== "public" ? " checked" : ""}> Full access: every route, ${opts.mine ? `your projects only (${opts.mine.join(", ") || "none"})` : "every project"}. Keep it secret.</label>
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

function createdToken(token: string, info: Token, target: SnippetTarget): Html {
  return html`<p class="alert success" role="status">Token “${info.name}” created. Copy it now: it is shown only this once.</p>
  <div class="copy-row" x-data="copyButton">
    <input type="text" readonly value="${token}" x-ref="source" aria-label="New token" data-testid="new-token-value">
    <button type="button" x-on:click="copy" x-text="label">Copy</button>
  </div>
  ${snippet("Try it with curl", "snippet-curl", curlSnippet(token, target))}
  ${snippet("Or from Node.js, with LogSnag's client (@logsnag/node)", "snippet-sdk", sdkSnippet(token, target))}
  <p class="muted small">More in the <a href="${paths.docs}">API docs</a>.</p>
  <div hx-get="${paths.tokenList}" hx-trigger="load" hx-target="#token-table" hx-swap="outerHTML"></div>`;
}

function snippet(title: string, id: string, text: string): Html {
  return html`<div class="snippet-box" x-data="copyButton">
    <div class="snippet-head"><h3 id="${id}-title">${title}</h3><button type="button" class="secondary small" x-on:click="copy" x-text="label" aria-describedby="${id}-title">Copy</button></div>
    <pre class="snippet" x-ref="source" data-testid="${id}" tabindex="0" aria-labelledby="${id}-title">${text}</pre>
  </div>`;
}

/** A POST of one event to this server with the new token, ready to paste in a shell. */
export function curlSnippet(token: string, t: SnippetTarget): string {
  const body = JSON.stringify({ project: t.project, channel: t.channel, event: "Hello from curl", icon: "👋" });
  return `curl ${t.baseUrl}/v1/log \\
  -H "Authorization: Bearer ${token}" \\
  -H "Content-Type: application/json" \\
  -d '${body}'`;
}

/** LogSnag's Node.js client sending to this server: its base URL is a constant, so its requests are redirected here (docs/api.md). */
export function sdkSnippet(token: string, t: SnippetTarget): string {
  return `// npm install @logsnag/node
import { LogSnag } from "@logsnag/node";

// Send LogSnag's requests to this server instead of api.logsnag.com.
const realFetch = globalThis.fetch;
globalThis.fetch = (input, init) =>
  realFetch(typeof input === "string" ? input.replace("https://api.logsnag.com", "${t.baseUrl}") : input, init);

const logsnag = new LogSnag({ token: "${token}", project: "${t.project}" });
await logsnag.track({ channel: "${t.channel}", event: "Hello from Node.js", icon: "👋" });`;
}

export function tokenTable(tokens: Token[]): Html {
  if (!tokens.length) return html`<div id="token-table"><p class="empty">No tokens yet.</p></div>`;
  return html`<div id="token-table" class="table-wrap"><table class="tokens cards">
  <thead><tr><th>Name</th><th>Access</th><th>Scope</th><th>Notifies</th><th>Prefix</th><th>Created</th><th>Last used</th><th><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>${tokens.map(
    (t) => html`<tr id="token-${t.id}">
    <td class="card-title">${t.name}</td>
    <td data-label="Access"><span class="badge ${t.kind}">${t.kind === "full" ? "full" : "public"}</span></td>
    <td data-label="Scope">${t.kind === "full" ? (t.projects ? t.projects.join(", ") || "no project" : "all projects") : `${t.project}${t.channel ? ` / #${t.channel}` : ""}`}</td>
    <td data-label="Notifies">${t.kind === "full" ? "yes" : html`${t.mayNotify ? "yes" : "no"} <button type="button" class="secondary small" hx-post="${href(paths.tokenNotify, { id: t.id })}" hx-vals='${JSON.stringify({ may_notify: t.mayNotify ? "off" : "on" })}' hx-target="#token-table" hx-swap="outerHTML" data-testid="notify-${t.name}">${t.mayNotify ? "Stop" : "Allow"}</button>`}</td>
    <td data-label="Prefix"><code>${t.prefix}…</code></td>
    <td data-label="Created">${time(t.createdAt)}<br><span class="muted">by ${t.createdBy ?? "the command line"}</span></td>
    <td data-label="Last used">${t.lastUsedAt ? time(t.lastUsedAt) : html`<span class="muted">never</span>`}</td>
    <td class="row-actions"><button type="button" class="secondary danger small" hx-get="${href(paths.tokenRevoke, { id: t.id })}" hx-target="#modal" data-testid="revoke-${t.name}">Revoke</button></td>
  </tr>`,
  )}</tbody></table></div>`;
}
