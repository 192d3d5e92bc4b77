// A user's page: their identify properties, groups, and event timeline.
import { href } from "../../http/href.ts";
import { paths } from "../paths.ts";
import { type Html, html } from "../html.ts";
import { type FeedView } from "./project.ts";
import { feed, time } from "./events.ts";
import type { Properties, Profile, UserSummary } from "../../model/profile.ts";
import type { Project } from "../../model/project.ts";

function props(properties: Properties): Html {
  const entries = Object.entries(properties);
  if (!entries.length) return html`<p class="muted">No properties.</p>`;
  return html`<dl class="facts">${entries.map(([k, v]) => html`<dt>${k}</dt><dd>${v === null ? html`<span class="muted">null</span>` : String(v)}</dd>`)}</dl>`;
}

export function userPage(
  p: Project,
  userId: string,
  opts: {
    profile: Profile | null;
    groups: { groupId: string; properties: Properties }[];
    summary: UserSummary | null;
    feed: FeedView;
    baseUrl: string;
  },
): Html {
  return html`<header class="page-header">
  <p class="crumbs"><a href="${href(paths.project, { project: p.name })}">${p.name}</a> / <a href="${href(paths.users, { project: p.name })}">users</a></p>
  <h1>👤 ${userId}</h1>
  ${
    opts.summary
      ? html`<dl class="user-stats" data-testid="user-summary">
    <div><dt>First seen</dt><dd>${time(opts.summary.firstSeen)}</dd></div>
    <div><dt>Last seen</dt><dd>${time(opts.summary.lastSeen)}</dd></div>
    <div><dt>Events</dt><dd>${opts.summary.events.toLocaleString("en-US")}</dd></div>
  </dl>`
      : ""
  }
</header>
<div class="grid-2">
  <section class="card" aria-labelledby="props-title">
    <h2 id="props-title">Properties</h2>
    ${opts.profile ? html`${props(opts.profile.properties)}<p class="muted small">Identified ${time(opts.profile.createdAt)}, properties updated ${time(opts.profile.updatedAt)}</p>` : html`<p class="muted">Never identified. Send <code>POST /v1/identify</code> with this user_id to add properties.</p>`}
  </section>
  <section class="card" aria-labelledby="groups-title">
    <h2 id="groups-title">Groups</h2>
    ${opts.groups.length ? html`<ul class="plain">${opts.groups.map((g) => html`<li><strong>${g.groupId}</strong> ${props(g.properties)}</li>`)}</ul>` : html`<p class="muted">No groups.</p>`}
  </section>
</div>
<h2>Timeline</h2>
${feed({ ...opts.feed, showChannel: true, empty: html`<p>No events with this user id yet.</p>` })}`;
}
