// Form fields as every dashboard form shows them: a label, the control, a hint, and an error beside
// it that the control names (aria-describedby, aria-invalid), so a screen reader reads it with it.
import { type Html, html } from "../html.ts";

/** A labelled field with its error beside it (aria-describedby, aria-invalid), as the dashboard's forms have them. */
export function fieldRow(
  id: string,
  label: string,
  control: (attributes: Html) => Html,
  error: string | undefined,
  hint?: string,
): Html {
  const describe = [error ? `${id}-error` : "", hint ? `${id}-hint` : ""].filter(Boolean).join(" ");
  const attributes = html`${describe ? html` aria-describedby="${describe}"` : ""}${error ? html` aria-invalid="true"` : ""}`;
  return html`<div class="field${error ? " invalid" : ""}" data-field="${id}"><label for="${id}">${label}</label>${control(attributes)}${hint ? html`<p class="hint" id="${id}-hint">${hint}</p>` : ""}${error ? html`<p class="hint error" id="${id}-error">${error}</p>` : ""}</div>`;
}

/** A select's options, the one equal to `selected` chosen. */
export function options(list: [string, string][], selected: string): Html[] {
  return list.map(([v, label]) => html`<option value="${v}"${v === selected ? " selected" : ""}>${label}</option>`);
}
