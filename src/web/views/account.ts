// Settings → Account (one's own password) and Settings → Audit (the owner's view of the trail).
import { paths } from "../paths.ts";
import { href } from "../../http/href.ts";
import { type Html, html } from "../html.ts";
import { time } from "./events.ts";
import { ROLE_TEXT } from "./members.ts";
import { settingsNav } from "./settings.ts";
import { recoveryCodesList, totpSetupFields } from "./auth.ts";
import type { AuditAction, AuditEntry } from "../../model/audit.ts";
import type { User } from "../../model/user.ts";

/** Settings → Account's second factor: on (and how many recovery codes are left), being set up, or off. */
export type FactorView =
  | { state: "on"; recoveryLeft: number; error?: string }
  | { state: "setup"; secret: string; offer: { qrSvg: string; grouped: string }; error?: string }
  | { state: "off"; required: boolean }
  | { state: "done"; codes: string[] };

export function secondFactorSection(view: FactorView, csrf: string): Html {
  const body = (() => {
    switch (view.state) {
      case "off":
        return html`<p>Off. With an authenticator app, signing in asks for a 6-digit code after your password.${view.required ? html` <strong>An admin requires one</strong> of everyone who signs in with a password: you will be asked to set it up the next time you sign in with yours.` : ""}</p>
<form method="post" action="${paths.totp}#second-factor" class="stack"><input type="hidden" name="_csrf" value="${csrf}"><button type="submit" data-testid="totp-start">Set up an authenticator</button></form>`;
      case "setup":
        return html`<form method="post" action="${paths.totp}#second-factor" class="stack">
  <input type="hidden" name="_csrf" value="${csrf}">
  <input type="hidden" name="secret" value="${view.secret}">
  ${totpSetupFields(view.offer, view.error)}
  <button type="submit" data-testid="totp-confirm">Turn on</button>
</form>`;
      case "done":
        return html`${recoveryCodesList(view.codes)}
<p><a class="button" href="${paths.account}" data-testid="codes-saved">I have saved them</a></p>`;
      case "on":
        return html`<p data-testid="totp-on">On: signing in asks for a code from your authenticator app. ${view.recoveryLeft} of 10 recovery codes left.</p>
<form method="post" action="${paths.totpOff}#second-factor" class="stack">
  <input type="hidden" name="_csrf" value="${csrf}">
  <label for="off-code">To turn it off, a code from the app (or a recovery code)</label>
  <input id="off-code" name="code" type="text" autocomplete="one-time-code" required${view.error ? html` aria-invalid="true" aria-describedby="off-code-error" autofocus` : ""}>
  ${view.error ? html`<p class="hint error" id="off-code-error" role="alert">${view.error}</p>` : ""}
  <button type="submit" class="danger" data-testid="totp-off">Turn off</button>
</form>`;
    }
  })();
  return html`<section class="card" aria-labelledby="factor-title" id="second-factor">
  <h2 id="factor-title">Two-step sign-in</h2>
  ${body}
</section>`;
}

export function accountPage(user: User, form?: Html, factor?: Html): Html {
  return html`<header class="page-header"><h1>Settings</h1></header>
${settingsNav(paths.account)}
<section class="card" aria-labelledby="account-title">
  <h2 id="account-title">Your account</h2>
  <dl class="facts">
    <dt>Username</dt><dd>${user.username}</dd>
    <dt>Role</dt><dd>${user.role}: ${ROLE_TEXT[user.role]}</dd>
    <dt>Projects</dt><dd>${user.projects === null ? "All projects" : user.projects.join(", ") || "None yet: ask an admin"}</dd>
  </dl>
</section>
<section class="card" aria-labelledby="password-title">
  <h2 id="password-title">Change your password</h2>
  ${form ?? passwordForm({})}
</section>
${factor ?? ""}`;
}

export function passwordForm(opts: { errors?: Record<string, string>; changed?: boolean }): Html {
  const error = (name: string) =>
    opts.errors?.[name] ? html`<p class="hint error" id="${name}-error" role="alert">${opts.errors[name]}</p>` : "";
  const described = (name: string) =>
    opts.errors?.[name] ? html` aria-invalid="true" aria-describedby="${name}-error"` : "";
  return html`<form id="password-form" class="stack" method="post" action="${paths.password}" hx-post="${paths.password}" hx-target="this" hx-swap="outerHTML">
  ${opts.changed ? html`<p class="alert success" role="status" data-testid="password-changed">Your password was changed. Your other sessions were signed out; this one stays.</p>` : ""}
  <label for="current-password">Current password</label>
  <input id="current-password" name="current" type="password" autocomplete="current-password" required${described("current")}>
  ${error("current")}
  <label for="new-password">New password (at least 8 characters)</label>
  <input id="new-password" name="password" type="password" autocomplete="new-password" required minlength="8"${described("password")}>
  ${error("password")}
  <label for="confirm-password">New password again</label>
  <input id="confirm-password" name="confirm" type="password" autocomplete="new-password" required${described("confirm")}>
  ${error("confirm")}
  <button type="submit">Change password</button>
</form>`;
}

const ACTION_TEXT: Record<AuditAction, string> = {
  "owner.created": "Owner created",
  "sign_in.succeeded": "Signed in",
  "sign_in.failed": "Sign-in failed",
  "sign_in.link": "Sign-in link made",
  "password.changed": "Password changed",
  "token.created": "Token created",
  "token.revoked": "Token revoked",
  "member.added": "Member added",
  "member.removed": "Member removed",
  "member.changed": "Role or projects changed",
  "project.deleted": "Project deleted",
  "project.retention": "Retention changed",
  "integration.created": "Integration added",
  "integration.changed": "Integration changed",
  "integration.deleted": "Integration deleted",
  "alert.created": "Alert rule created",
  "alert.changed": "Alert rule changed",
  "alert.deleted": "Alert rule deleted",
  "check.created": "Check created",
  "check.changed": "Check changed",
  "check.deleted": "Check deleted",
  "check.ping-key": "Ping key made anew",
  "maintenance.created": "Maintenance window added",
  "maintenance.deleted": "Maintenance window deleted",
  "share.created": "Shared page made",
  "share.revoked": "Shared page revoked",
  "check.badge-key": "Badge key made anew",
  "second_factor.enabled": "Second factor turned on",
  "second_factor.disabled": "Second factor turned off",
  "second_factor.reset": "Second factor reset",
  "second_factor.required": "Second factor requirement changed",
  "hook.created": "Hook made",
  "hook.changed": "Hook changed",
  "hook.deleted": "Hook deleted",
};

/**
 * How a sign-in happened, in words: the trail keeps the method as the sign-in's detail (`password`,
 * `password + totp`, `oidc`, ...), as the log says it; the page says it the way a person would.
 */
const SIGN_IN_METHOD_TEXT: Record<string, string> = {
  password: "with a password",
  "password + totp": "with a password and a code from an authenticator app",
  "password + recovery code": "with a password and a recovery code",
  oidc: "by single sign-on (OpenID Connect)",
  proxy: "through the sign-in proxy",
  "command-line link": "with a sign-in link made on the command line",
};

/** Why a sign-in was refused, its method's prefix in words (`oidc: not added` → `Single sign-on: not added`). */
const REFUSAL_PREFIX: [string, string][] = [
  ["oidc: ", "Single sign-on: "],
  ["proxy: ", "Sign-in proxy: "],
];

function auditDetail(e: AuditEntry): Html | string {
  if (e.detail === null) return html`<span class="muted">—</span>`;
  if (e.action === "sign_in.succeeded") {
    const words = SIGN_IN_METHOD_TEXT[e.detail];
    if (words) return html`<span title="${e.detail}" data-method="${e.detail}">${words}</span>`;
  }
  if (e.action === "sign_in.failed")
    for (const [prefix, words] of REFUSAL_PREFIX)
      if (e.detail.startsWith(prefix)) return `${words}${e.detail.slice(prefix.length)}`;
  return e.detail;
}

/** `older`: the id to ask the next page before, when there is one. */
export function auditPage(entries: AuditEntry[], opts: { older: number | null; kept: number; first: boolean }): Html {
  return html`<header class="page-header"><h1>Settings</h1></header>
${settingsNav(paths.audit)}
<section class="card" aria-labelledby="audit-title">
  <h2 id="audit-title">Audit trail</h2>
  <p class="muted small">Sign-ins (and how: a password, with an authenticator code or a recovery code, single sign-on, the sign-in proxy, a sign-in link) and failed ones, second factors, passwords, API tokens, members, deleted projects, retention, integrations, alert rules, maintenance windows, hooks and shared pages: who, what, when and from where (the client's address as this server sees it). The newest ${opts.kept.toLocaleString("en")} entries are kept; each is also logged at the info level.</p>
  ${
    entries.length
      ? html`<div class="table-wrap"><table class="audit cards">
    <thead><tr><th>When</th><th>Who</th><th>What</th><th>Details</th><th>From</th></tr></thead>
    <tbody>${entries.map(
      (e) => html`<tr class="audit-${e.action.replace(".", "-")}" data-testid="audit-row">
      <td data-label="When">${time(e.at)}</td>
      <td class="card-title" data-label="Who">${e.actor}</td>
      <td data-label="What"><strong>${ACTION_TEXT[e.action] ?? e.action}</strong><br><span class="muted">${e.subject}</span></td>
      <td data-label="Details">${auditDetail(e)}</td>
      <td data-label="From">${e.ip ? html`<code>${e.ip}</code>` : html`<span class="muted">${e.actor === "command line" ? "this machine" : "—"}</span>`}</td>
    </tr>`,
    )}</tbody>
  </table></div>`
      : html`<p class="empty">Nothing yet.</p>`
  }
  <nav class="pager" aria-label="Audit pages">${opts.first ? "" : html`<a href="${paths.audit}">Newest</a>`}${opts.older !== null ? html`<a href="${href(paths.audit, {}, { before: String(opts.older) })}" rel="next">Older entries</a>` : ""}</nav>
</section>`;
}
