// The pages shown before sign-in: the one-time setup of the owner, and login.
import { href } from "../../http/href.ts";
import { paths } from "../paths.ts";
import { passkeyButton } from "./passkeys.ts";
import { type Html, html, trusted } from "../html.ts";

function field(
  name: string,
  label: string,
  opts: { type?: string; value?: string; autocomplete: string; error?: string },
): Html {
  return html`<label for="${name}">${label}</label>
<input id="${name}" name="${name}" type="${opts.type ?? "text"}" value="${opts.value ?? ""}" autocomplete="${opts.autocomplete}" required${opts.error ? html` aria-invalid="true" aria-describedby="${name}-error"` : ""}>
${opts.error ? html`<p class="hint error" id="${name}-error">${opts.error}</p>` : ""}`;
}

export function setupPage(opts: {
  code: string;
  formToken: string;
  username?: string;
  errors?: Record<string, string>;
  message?: string;
}): Html {
  return html`<section class="auth card">
<h1>Welcome to Signalboard</h1>
<p>Create the owner account. You can add team members later in Settings → Members.</p>
${opts.message ? html`<p class="alert" role="alert">${opts.message}</p>` : ""}
<form method="post" action="${paths.setup}" class="stack">
  <input type="hidden" name="_form" value="${opts.formToken}">
  <input type="hidden" name="code" value="${opts.code}">
  ${field("username", "Username", { value: opts.username, autocomplete: "username", error: opts.errors?.username })}
  ${field("password", "Password (at least 8 characters)", { type: "password", autocomplete: "new-password", error: opts.errors?.password })}
  <button type="submit">Create owner account</button>
</form>
</section>`;
}

/** A sign-in link from the command line: it signs in only when its button is pressed (a link previewer opening it does not). */
export function signInLinkPage(opts: { formToken: string; code: string; username: string | null }): Html {
  if (!opts.username)
    return html`<section class="auth card">
<h1>Sign-in link</h1>
<p class="alert" role="alert">This sign-in link is wrong, was used already, or is older than 15 minutes. Make another on the server's machine:</p>
<pre class="snippet">signalboard user sign-in-link NAME</pre>
</section>`;
  return html`<section class="auth card">
<h1>Sign-in link</h1>
<p>This link signs you in as <strong>${opts.username}</strong>, once.</p>
<form method="post" action="${paths.signInLink}" class="stack">
  <input type="hidden" name="_form" value="${opts.formToken}">
  <input type="hidden" name="code" value="${opts.code}">
  <button type="submit" data-testid="sign-in-link">Sign in as ${opts.username}</button>
</form>
</section>`;
}

export function setupCodeNeeded(opts: { stale: boolean }): Html {
  return html`<section class="auth card">
<h1>Set-up code needed</h1>
${opts.stale ? html`<p class="alert" role="alert" data-testid="stale-setup">This set-up link has expired or was already used: its code is not the current one.</p>` : ""}
<p>This Signalboard has no owner yet. Open the set-up link the server printed when it started (it contains a one-time code), or create the owner from the shell:</p>
<pre class="snippet">signalboard user create NAME</pre>
</section>`;
}

export function loginPage(opts: {
  formToken: string;
  next: string;
  username?: string;
  message?: string;
  notice?: string;
  /** The OpenID provider's name, when single sign-on is set up. */
  oidcName?: string | null;
  /** false: SIGNALBOARD_PASSWORD_LOGIN=off, the form is not shown. */
  passwords?: boolean;
}): Html {
  const passwords = opts.passwords ?? true;
  return html`<section class="auth card">
<h1>Sign in</h1>
${opts.notice ? html`<p class="alert notice" role="status" data-testid="stale-setup">${opts.notice}</p>` : ""}
${opts.message ? html`<p class="alert" role="alert">${opts.message}</p>` : ""}
${opts.oidcName ? html`<p><a class="button" data-testid="oidc-sign-in" href="${href(paths.oidcStart, {}, { next: opts.next })}">Sign in with ${opts.oidcName}</a></p>` : ""}
${
  passwords
    ? html`<form method="post" action="${paths.login}" class="stack">
  <input type="hidden" name="_form" value="${opts.formToken}">
  <input type="hidden" name="next" value="${opts.next}">
  ${field("username", "Username", { value: opts.username, autocomplete: "username" })}
  ${field("password", "Password", { type: "password", autocomplete: "current-password" })}
  <button type="submit">Sign in</button>
</form>`
    : html`<p class="muted small" data-testid="sign-in-link-hint">${opts.oidcName ? html`${opts.oidcName} not working? ` : ""}Signing in with a password is off here. Whoever runs this server can make a link that signs in once: <code>signalboard user sign-in-link NAME</code>.</p>`
}
${passkeyButton({ formToken: opts.formToken, next: opts.next, step: false })}
</section>`;
}

/** Signed out here; on to the provider's end-session page, which signs them out there too. */
export function signedOutHere(opts: { provider: string; next: string }): Html {
  return html`<meta http-equiv="refresh" content="0;url=${opts.next}">
<section class="auth card">
<h1>Signed out</h1>
<p>You are signed out of Signalboard. <a href="${opts.next}" data-testid="provider-sign-out">Sign out of ${opts.provider} too</a> (this happens by itself in a moment).</p>
</section>`;
}

/**
 * What an authenticator app is shown to set it up: the QR code (inline SVG) and the key written out.
 * After a wrong code the field has the focus, so the page comes back at the field and its error.
 */
export function totpSetupFields(offer: { qrSvg: string; grouped: string }, error?: string): Html {
  return html`<p>Scan this QR code with an authenticator app (such as Aegis, 2FAS, Google Authenticator or 1Password), or type the key in it by hand. Then type the 6-digit code it shows.</p>
<figure class="totp-qr" data-testid="totp-qr" aria-label="QR code for your authenticator app">${trusted(offer.qrSvg)}</figure>
<p>Key: <code class="totp-key" data-testid="totp-key">${offer.grouped}</code></p>
<label for="code">Code from the app</label>
<input id="code" name="code" type="text" inputmode="numeric" pattern="[0-9 ]{6,7}" autocomplete="one-time-code" required${error ? html` aria-invalid="true" aria-describedby="code-error" autofocus` : ""}>
${error ? html`<p class="hint error" id="code-error" role="alert">${error}</p>` : ""}`;
}

/**
 * The second page of a sign-in for someone with a second factor: a code from their authenticator or
 * a recovery code. (A passkey, when there is one, is offered beside the code here.)
 */
/** `totp`: they have an authenticator (the code field); `passkey`: they have a passkey ("Use a passkey"). */
export function secondStepPage(opts: {
  formToken: string;
  username: string;
  message?: string;
  totp?: boolean;
  passkey?: boolean;
}): Html {
  const totp = opts.totp ?? true;
  const ask = [
    ...(opts.passkey ? ["use your passkey"] : []),
    ...(totp ? ["type the 6-digit code your authenticator app shows, or one of your recovery codes"] : []),
  ].join(", or ");
  return html`<section class="auth card" data-testid="second-step">
<h1>Two-step sign-in</h1>
<p>Signing in as <strong>${opts.username}</strong>. ${ask.charAt(0).toUpperCase()}${ask.slice(1)}.</p>
${opts.message && !totp ? html`<p class="alert" role="alert">${opts.message}</p>` : ""}
${opts.passkey ? passkeyButton({ formToken: opts.formToken, next: "/", step: true }) : ""}
${
  totp
    ? html`<form method="post" action="${paths.secondStep}" class="stack">
  <input type="hidden" name="_form" value="${opts.formToken}">
  <label for="code">Code</label>
  <input id="code" name="code" type="text" autocomplete="one-time-code" autocapitalize="off" spellcheck="false" required autofocus${opts.message ? html` aria-invalid="true" aria-describedby="code-error"` : ""}>
  ${opts.message ? html`<p class="hint error" id="code-error" role="alert">${opts.message}</p>` : ""}
  <button type="submit">Verify</button>
</form>`
    : ""
}
<p class="muted small"><a href="${paths.login}">Start again</a> · Lost your phone and your recovery codes? Whoever runs this server can remove your second factor with <code>signalboard user reset-2fa ${opts.username}</code>.</p>
</section>`;
}

/** Right after the password, where a second factor is required and they have none: set one up now. */
export function enrollStepPage(opts: {
  formToken: string;
  username: string;
  offer: { qrSvg: string; grouped: string };
  error?: string;
}): Html {
  return html`<section class="auth card" data-testid="enroll-step">
<h1>Set up a second factor</h1>
<p>This Signalboard asks everyone who signs in with a password for a code from an authenticator app too. Set one up for <strong>${opts.username}</strong> to finish signing in.</p>
<form method="post" action="${paths.secondStep}" class="stack">
  <input type="hidden" name="_form" value="${opts.formToken}">
  ${totpSetupFields(opts.offer, opts.error)}
  <button type="submit">Turn on and sign in</button>
</form>
</section>`;
}

/** The recovery codes, shown once: right after a second factor was turned on. */
export function recoveryCodesList(codes: string[]): Html {
  return html`<div class="stack" data-testid="recovery-codes">
<p class="alert success" role="status">Your authenticator is on. Keep these recovery codes somewhere safe: each signs you in once when your phone is not at hand. They are shown only now.</p>
<ul class="recovery-codes">${codes.map((c) => html`<li><code>${c}</code></li>`)}</ul>
</div>`;
}

export function recoveryCodesPage(codes: string[], next: string): Html {
  return html`<section class="auth card">
<h1>Recovery codes</h1>
${recoveryCodesList(codes)}
<p><a class="button" href="${next}" data-testid="continue">I have saved them: continue</a></p>
</section>`;
}
