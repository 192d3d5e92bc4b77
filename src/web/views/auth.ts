// The pages shown before sign-in: the one-time setup of the owner, and login.
import { href } from "../../http/href.ts";
import { paths } from "../paths.ts";
import { type Html, html } from "../html.ts";

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
    : ""
}
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
