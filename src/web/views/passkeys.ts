// Passkeys on the page: Settings → Account's list (add, remove) and the buttons that sign in with
// one. The browser's part is the passkey component (src/browser/components/passkey.ts): each
// button's element says where to ask for options and where to send the answer.
import { href } from "../../http/href.ts";
import type { Passkey } from "../../model/passkey.ts";
import { type Html, html } from "../html.ts";
import { paths } from "../paths.ts";
import { time } from "./events.ts";

/** What the passkeys section says after a change: removed, or why removing one was refused. */
export type PasskeyNote = { passkeyRemoved?: boolean; passkeyError?: { id: number; message: string } };

const status = html`<p class="alert" role="alert" x-show="failed" x-text="error" data-testid="passkey-error"></p>`;

export function passkeySection(mine: Passkey[], csrf: string, note: PasskeyNote): Html {
  return html`<section class="card" aria-labelledby="passkeys-title" id="passkeys">
  <h2 id="passkeys-title">Passkeys</h2>
  <p>A passkey on this device, a phone or a security key: asked for after your password instead of a code, and a way to sign in without the password.</p>
  ${note.passkeyRemoved ? html`<p class="alert success" role="status" data-testid="passkey-removed">The passkey was removed.</p>` : ""}
  ${
    mine.length
      ? html`<ul class="stack" data-testid="passkey-list">${mine.map((p) => passkeyItem(p, csrf, note.passkeyError?.id === p.id ? note.passkeyError.message : undefined))}</ul>`
      : html`<p class="muted" data-testid="no-passkeys">None yet.</p>`
  }
  <form class="stack" x-data="passkey" data-mode="register" data-options="${paths.passkeyOptions}" data-action="${paths.passkeys}" x-on:submit.prevent="register">
    <input type="hidden" name="_csrf" value="${csrf}">
    <label for="passkey-name">Name of the new passkey (the device it is on)</label>
    <input id="passkey-name" name="name" type="text" maxlength="64" required placeholder="Laptop" data-testid="passkey-name">
    ${status}
    <button type="submit" x-bind:disabled="busy" data-testid="passkey-add">Add a passkey</button>
  </form>
</section>`;
}

function passkeyItem(p: Passkey, csrf: string, error?: string): Html {
  const id = `passkey-${p.id}`;
  return html`<li class="card" data-testid="passkey-item">
  <strong data-testid="passkey-item-name">${p.name}</strong>
  <span class="muted small">added ${time(p.createdAt)} · ${p.lastUsedAt ? html`last used ${time(p.lastUsedAt)}` : "never used"}</span>
  <form method="post" action="${href(paths.passkeyRemove, { id: String(p.id) })}" class="stack">
    <input type="hidden" name="_csrf" value="${csrf}">
    <label for="${id}-confirm">To remove it, your password (or a code from your authenticator app)</label>
    <input id="${id}-confirm" name="confirm" type="password" autocomplete="current-password" required${error ? html` aria-invalid="true" aria-describedby="${id}-error"` : ""}>
    ${error ? html`<p class="hint error" id="${id}-error" role="alert">${error}</p>` : ""}
    <button type="submit" class="danger" data-testid="passkey-remove">Remove ${p.name}</button>
  </form>
</li>`;
}

/** "Sign in with a passkey" (alone, on the sign-in page) or "Use a passkey" (the second step). */
export function passkeyButton(opts: { formToken: string; next: string; step: boolean }): Html {
  const options = opts.step ? paths.passkeyStepOptions : paths.passkeySignInOptions;
  const action = opts.step ? paths.passkeyStep : paths.passkeySignIn;
  return html`<div class="stack" x-data="passkey" data-mode="${opts.step ? "second_step" : "sign_in"}" data-options="${options}" data-action="${action}">
  <input type="hidden" name="_form" value="${opts.formToken}">
  <input type="hidden" name="next" value="${opts.next}">
  ${status}
  <button type="button" class="secondary" x-on:click="signIn" x-bind:disabled="busy" data-testid="${opts.step ? "passkey-step" : "passkey-sign-in"}">${opts.step ? "Use a passkey" : "Sign in with a passkey"}</button>
</div>`;
}
