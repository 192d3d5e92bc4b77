// The page shell: head, top bar, sidebar of projects and channels, main area, toasts.
import { paths } from "../paths.ts";
import { href } from "../../http/href.ts";
import type { Assets } from "../assets.ts";
import { type Html, html, seg } from "../html.ts";
import type { Channel, Project } from "../../model/project.ts";
import type { Session } from "../../model/user.ts";
import { VERSION } from "../../version.ts";

export type Nav = {
  projects: Project[];
  project?: Project;
  channels?: Channel[];
  channel?: string;
  section?: "settings";
};

export type PageContext = { assets: Assets; session: Session | null; nav?: Nav };

// htmx: no inline styles (CSP), no eval; 422 answers carry a form with its errors and are swapped.
// Settling copies attributes with setAttribute, which the CSP refuses for `style`: never settle it.
export const HTMX_CONFIG = JSON.stringify({
  includeIndicatorStyles: false,
  attributesToSettle: ["class", "width", "height"],
  allowEval: false,
  allowScriptTags: false,
  selfRequestsOnly: true,
  historyCacheSize: 0,
  responseHandling: [
    { code: "204", swap: false },
    { code: "[23]..", swap: true },
    { code: "422", swap: true, error: false },
    { code: "[45]..", swap: false, error: true },
  ],
});

export function page(ctx: PageContext, opts: { title: string; body: Html; charts?: boolean }): Html {
  const { assets, session } = ctx;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="theme-color" content="#f6f7f9" media="(prefers-color-scheme: light)">
<meta name="theme-color" content="#101216" media="(prefers-color-scheme: dark)">
<meta name="htmx-config" content="${HTMX_CONFIG}">
<title>${opts.title} · Signalboard</title>
<link rel="icon" href="${assets.url("icon.svg")}" type="image/svg+xml">
<link rel="manifest" href="/manifest.webmanifest">
<link rel="apple-touch-icon" href="/apple-touch-icon.png">
<meta name="mobile-web-app-capable" content="yes">
<meta name="apple-mobile-web-app-title" content="Signalboard">
<link rel="stylesheet" href="${assets.url("app.css")}">
${opts.charts ? html`<link rel="stylesheet" href="${assets.url("uplot.css")}"><script defer src="${assets.url("uplot.js")}"></script>` : ""}
<script defer src="${assets.url("app.js")}"></script>
<script defer src="${assets.url("htmx.js")}"></script>
<script defer src="${assets.url("alpine.js")}"></script>
</head>
<body${session ? html` hx-headers="${JSON.stringify({ "X-CSRF-Token": session.csrfToken })}" class="role-${session.user.role}"` : ""}>
<a class="skip-link" href="#main">Skip to content</a>
${session && ctx.nav ? shell(ctx, ctx.nav, opts.body) : html`<main id="main" class="bare"><p class="bare-brand"><img src="${assets.url("icon.svg")}" alt="" width="32" height="32"><span>Signalboard</span></p>${opts.body}</main>`}
<div id="modal"></div>
<div id="toasts" class="toasts" role="status" aria-live="polite"></div>
</body>
</html>`;
}

function shell(ctx: PageContext, nav: Nav, body: Html): Html {
  const user = ctx.session!.user;
  return html`<div class="shell" x-data="shell" x-bind:class="shellClass">
<header class="topbar">
  <button type="button" class="icon-button menu-button" x-on:click="toggleNav" aria-label="Menu" x-bind:aria-expanded="navOpenText">☰</button>
  <a class="brand" href="${paths.home}"><img src="${ctx.assets.url("icon.svg")}" alt="" width="24" height="24"><span>Signalboard</span></a>
  <nav class="topnav" aria-label="Account" x-data="accountMenu" x-bind:class="menuClass" x-on:keydown.escape="closeMenu" x-on:click.outside="dismissMenu">
    <button type="button" class="icon-button account-button" x-ref="button" x-on:click="toggleMenu" aria-controls="account-links" x-bind:aria-expanded="menuOpenText" aria-label="Account: ${user.username}" data-testid="account-menu"><span class="avatar" aria-hidden="true">${user.username.slice(0, 1).toUpperCase()}</span></button>
    <div class="account-links" id="account-links">
      <p class="account-name">Signed in as <strong>${user.username}</strong></p>
      <a href="${paths.docs}">API docs</a>
      <a href="${paths.settings}"${nav.section === "settings" ? html` aria-current="page"` : ""}>Settings</a>
      <form method="post" action="${paths.logout}" class="inline"><input type="hidden" name="_csrf" value="${ctx.session!.csrfToken}"><button type="submit" class="link-button">Sign out <span class="muted">${user.username}</span></button></form>
    </div>
  </nav>
</header>
<nav class="sidebar" id="sidebar" aria-label="Projects" x-on:keydown.escape.window="closeNav">
  ${sidebar(nav)}
</nav>
<div class="scrim" x-on:click="closeNav"></div>
<main id="main" tabindex="-1">${body}<footer class="app-foot">Signalboard ${VERSION}</footer></main>
</div>`;
}

export function sidebar(nav: Nav): Html {
  return html`<section class="nav-section">
  <div class="nav-heading" x-data="toggle" x-on:keydown.escape="close">
    <h2>Projects</h2>
    <button type="button" class="icon-button add needs-member" x-ref="button" x-on:click="flip" x-bind:aria-expanded="openText" aria-label="New project" title="New project" data-testid="new-project">+</button>
    <div class="nav-form" x-show="open" x-cloak>${newNameForm({ kind: "project", action: "/projects" })}</div>
  </div>
  <ul class="nav-list" id="project-list">
    ${nav.projects.map(
      (
        p,
      ) => html`<li><a href="${href(paths.project, { project: p.name })}"${nav.project?.id === p.id && !nav.channel ? html` aria-current="page"` : ""} class="${nav.project?.id === p.id ? "active" : ""}">${p.name}</a>
      ${nav.project?.id === p.id ? channelList(p, nav) : ""}</li>`,
    )}
  </ul>
</section>`;
}

function channelList(project: Project, nav: Nav): Html {
  return html`<div class="channels">
  <div class="nav-heading sub" x-data="toggle" x-on:keydown.escape="close">
    <h3>Channels</h3>
    <button type="button" class="icon-button add needs-member" x-ref="button" x-on:click="flip" x-bind:aria-expanded="openText" aria-label="New channel in ${project.name}" title="New channel" data-testid="new-channel">+</button>
    <div class="nav-form" x-show="open" x-cloak>${newNameForm({ kind: "channel", action: href(paths.channels, { project: project.name }), project: project.name })}</div>
  </div>
  <ul class="nav-list" id="channel-list" data-project="${project.name}" x-data="channelList" data-channels-url="${href(paths.live, { project: project.name }, { feed: "0", toasts: "0" })}">
    ${(nav.channels ?? []).map((c) => channelLink(project.name, c.name, nav.channel === c.name))}
  </ul>
</div>`;
}

export function channelLink(project: string, channel: string, current = false): Html {
  return html`<li id="channel-${seg(project)}-${seg(channel)}"><a href="${href(paths.channel, { project, channel })}"${current ? html` aria-current="page"` : ""}># ${channel}</a></li>`;
}

/** The "+" forms: checked as you type (htmx asks the server), refused with a message on submit. */
export function newNameForm(opts: {
  kind: "project" | "channel";
  action: string;
  project?: string;
  value?: string;
  error?: string;
}): Html {
  const id = `new-${opts.kind}-name`;
  const check = `/names/check?kind=${opts.kind}${opts.project ? `&project=${seg(opts.project)}` : ""}`;
  return html`<form class="name-form" hx-post="${opts.action}" hx-swap="outerHTML" novalidate>
  <label for="${id}" class="visually-hidden">New ${opts.kind} name</label>
  <input id="${id}" name="name" value="${opts.value ?? ""}" placeholder="new-${opts.kind}" autocomplete="off" spellcheck="false" maxlength="64"
    hx-get="${check}" hx-trigger="input changed delay:150ms" hx-sync="this:replace" hx-target="next .hint" hx-swap="outerHTML" aria-describedby="${id}-hint" required>
  <button type="submit" class="small">Create</button>
  ${nameHint(id, opts.error ?? null)}
</form>`;
}

export function nameHint(id: string, error: string | null, ok?: string): Html {
  if (error) return html`<p class="hint error" id="${id}-hint" role="alert">${error}</p>`;
  return html`<p class="hint${ok ? " ok" : ""}" id="${id}-hint">${ok ?? "Lowercase letters, digits and dashes."}</p>`;
}
