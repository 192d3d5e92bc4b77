// A project's users page: the search, the list (newest activity first), and the next page's link.
import { href } from "../../http/href.ts";
import { paths } from "../paths.ts";
import { type Html, html } from "../html.ts";
import { time } from "./events.ts";
import type { Properties, UserSummary } from "../../model/profile.ts";
import type { Project } from "../../model/project.ts";

/** Shown first when a profile has them; otherwise its first two properties. */
const PREFERRED = ["name", "email"];

function highlights(properties: Properties | null): [string, string][] {
  const entries = Object.entries(properties ?? {}).filter(([, v]) => v !== null && v !== "");
  const preferred = entries.filter(([k]) => PREFERRED.includes(k.toLowerCase()));
  return (preferred.length ? preferred : entries).slice(0, 2).map(([k, v]) => [k, String(v)]);
}

export function userRow(project: string, u: UserSummary): Html {
  const props = highlights(u.properties);
  return html`<li class="user-row">
  <a class="user-id" href="${href(paths.user, { project, userId: u.userId })}">${u.userId}</a>
  ${props.length ? html`<p class="user-props">${props.map(([k, v]) => html`<span><span class="muted">${k}</span> ${v}</span>`)}</p>` : ""}
  <dl class="user-stats">
    <div><dt>Last seen</dt><dd>${time(u.lastSeen)}</dd></div>
    <div><dt>First seen</dt><dd>${time(u.firstSeen)}</dd></div>
    <div><dt>Events</dt><dd data-testid="user-events">${u.events.toLocaleString("en-US")}</dd></div>
  </dl>
</li>`;
}

/** A page of rows; the last item links to the next page (htmx puts that page in its place). */
export function userRows(project: string, users: UserSummary[], nextUrl: string | null): Html {
  return html`${users.map((u) => userRow(project, u))}${
    nextUrl
      ? html`<li class="users-more"><a class="button secondary" href="${nextUrl}" hx-get="${nextUrl}" hx-target="closest li" hx-swap="outerHTML" data-testid="more-users">More users</a></li>`
      : ""
  }`;
}

export function usersPage(
  p: Project,
  opts: { q: string; users: UserSummary[]; nextCursor: string | null; baseUrl: string },
): Html {
  const base = href(paths.users, { project: p.name });
  const next = opts.nextCursor ? href(paths.users, { project: p.name }, { q: opts.q, cursor: opts.nextCursor }) : null;
  return html`<header class="page-header">
  <p class="crumbs"><a href="${href(paths.project, { project: p.name })}">${p.name}</a> / users</p>
  <h1>Users</h1>
</header>
<form class="filters users-search" method="get" action="${base}" role="search">
  <div class="filter-main">
    <label for="users-q" class="visually-hidden">Search users</label>
    <input type="search" id="users-q" name="q" value="${opts.q}" placeholder="User id, or email:ann@" autocomplete="off" spellcheck="false" maxlength="200" aria-describedby="users-q-hint">
    <button type="submit">Search</button>
    ${opts.q ? html`<a class="button secondary" href="${base}">Clear</a>` : ""}
  </div>
  <p class="hint" id="users-q-hint">Words match words of the user id or any property, the last one by its start; <code>key:value</code> looks in one property (<code>email:ann</code>, <code>name:"Ann Lee"</code>).</p>
</form>
${opts.users.length ? html`<ol class="users" id="users" aria-label="Users">${userRows(p.name, opts.users, next)}</ol>` : html`<div class="empty" id="users-empty">${opts.q ? html`<p>No users match “${opts.q}”.</p>` : emptyUsers(opts.baseUrl, p.name)}</div>`}`;
}

function emptyUsers(baseUrl: string, project: string): Html {
  const body = JSON.stringify({ project, channel: "general", event: "Signed in", user_id: "user-42" });
  return html`<p>No users yet. A user appears here when an event arrives with a <code>user_id</code>, or when <code>POST /v1/identify</code> describes one:</p>
<pre class="snippet">curl ${baseUrl}/v1/log -H "Authorization: Bearer $TOKEN" \\
  -H "Content-Type: application/json" -d '${body}'</pre>`;
}
