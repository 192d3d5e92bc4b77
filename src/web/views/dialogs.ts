// Confirmations, shown in a native <dialog> (focus trapped, Escape closes) loaded into #modal.
import { type Html, html } from "../html.ts";

export function confirmDialog(opts: {
  title: string;
  body: Html | string;
  action: string;
  confirm: string;
  danger?: boolean;
}): Html {
  return html`<dialog class="dialog" x-data="dialog" aria-labelledby="dialog-title">
  <form hx-post="${opts.action}" hx-swap="none">
    <h2 id="dialog-title">${opts.title}</h2>
    <div class="dialog-body">${opts.body}</div>
    <div class="dialog-actions">
      <button type="button" class="secondary" x-on:click="close">Cancel</button>
      <button type="submit" class="${opts.danger ? "danger" : ""}" data-testid="confirm">${opts.confirm}</button>
    </div>
  </form>
</dialog>`;
}

export const plural = (n: number, word: string) => `${n.toLocaleString("en-US")} ${word}${n === 1 ? "" : "s"}`;
