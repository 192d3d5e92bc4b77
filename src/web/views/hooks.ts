// The inbound webhooks' section of a project's settings: each hook with the URL to paste into the
// service (and a copy button), a form that makes one and a button that deletes one, for admins (a
// URL is a way to write into the project, as a public token is); others see the list without URLs.
import { HOOK_KIND_MODULES } from "../../domain/hook-kinds/index.ts";
import { href } from "../../http/href.ts";
import { HOOK_KINDS, type Hook } from "../../model/hook.ts";
import type { Project } from "../../model/project.ts";
import { type Html, html } from "../html.ts";
import { paths } from "../paths.ts";
import { fieldRow, options } from "./fields.ts";

export type HookFormFields = Record<string, string>;

export type HooksView = {
  hooks: { hook: Hook; url: string }[];
  csrf: string;
  mayEdit: boolean;
  /** What the form holds and its problems by field, after a save that could not be made. */
  fields?: HookFormFields;
  errors?: Record<string, string>;
};

const SECRET_HINT =
  "Stripe: the endpoint's signing secret (whsec_...). GitHub: the webhook's secret. Generic: optional (then the body's HMAC-SHA256 must come in the signature header). Alertmanager: optional (then it must come as the bearer token or basic auth password its http_config sends); without one the URL is the secret. Never shown again.";

export function hooksSection(project: Project, v: HooksView): Html {
  const p = { project: project.name };
  const f = v.fields ?? {};
  const e = v.errors ?? {};
  const kind = f.kind || "stripe";
  const show = (value: string) => html` data-show="kind:${value}"${kind === value ? "" : html` hidden`}`;
  return html`<section class="card stack" id="hooks" aria-labelledby="hooks-title">
  <h2 id="hooks-title">Inbound webhooks</h2>
  <p class="muted small">A URL for Stripe, GitHub, Alertmanager or any service that posts JSON: each delivery becomes events in this project, its signature checked with the hook's secret.</p>
  ${
    v.hooks.length
      ? html`<ul class="plain hook-list">${v.hooks.map(
          ({ hook: h, url }) =>
            html`<li class="hook-row stack" data-testid="hook-row"><div><strong>${h.name}</strong> <span class="muted small">${HOOK_KIND_MODULES[h.kind].label} → #${h.channel}${h.secret === null ? "" : " · signed"}</span>${
              v.mayEdit
                ? html` <form hx-post="${href(paths.hookDelete, { ...p, id: h.id })}" hx-target="#hooks" hx-swap="outerHTML" class="inline"><input type="hidden" name="_csrf" value="${v.csrf}"><button type="submit" class="secondary small danger">Delete<span class="visually-hidden"> ${h.name}</span></button></form>`
                : ""
            }</div>
  ${
    v.mayEdit
      ? html`<div class="copy-row" x-data="copyButton"><input type="text" readonly value="${url}" x-ref="source" aria-label="URL of ${h.name}" data-testid="hook-url"><button type="button" class="secondary small" x-on:click="copy"><span x-text="label">Copy</span><span class="visually-hidden"> URL of ${h.name}</span></button></div>`
      : ""
  }</li>`,
        )}</ul>`
      : html`<p data-testid="no-hooks">No inbound webhooks.</p>`
  }
  ${v.mayEdit ? "" : html`<p class="muted small" data-testid="hooks-admins">Admins make and delete webhooks and see their URLs: a URL lets a service write into this project, as a public token does.</p>`}
  ${
    v.mayEdit
      ? html`<form class="stack hook-form" hx-post="${href(paths.hooks, p)}" hx-target="#hooks" hx-swap="outerHTML" x-data="showFor" x-on:change="changed" novalidate>
    <input type="hidden" name="_csrf" value="${v.csrf}">
    <div class="field-pair">
      ${fieldRow(
        "hook-kind",
        "From",
        (a) =>
          html`<select id="hook-kind"${a} name="kind" data-controls="kind">${options(
            HOOK_KINDS.map((k) => [k, HOOK_KIND_MODULES[k].label]),
            kind,
          )}</select>`,
        e.kind,
      )}
      ${fieldRow("hook-name", "Name", (a) => html`<input id="hook-name"${a} name="name" value="${f.name ?? ""}" maxlength="100" placeholder="Payments" autocomplete="off">`, e.name)}
    </div>
    <div class="field-pair">
      ${fieldRow("hook-secret", "Secret", (a) => html`<input id="hook-secret"${a} name="secret" type="password" value="" autocomplete="off" data-testid="hook-secret">`, e.secret, SECRET_HINT)}
      ${fieldRow("hook-channel", "Channel", (a) => html`<input id="hook-channel"${a} name="channel" value="${f.channel ?? ""}" maxlength="64" placeholder="${HOOK_KIND_MODULES[kind as Hook["kind"]]?.defaultChannel ?? "hooks"}" autocomplete="off">`, e.channel, "Empty: the kind's own (stripe, github, alertmanager or hooks).")}
    </div>
    <div${show("generic")}>
      ${fieldRow("hook-config", "Mapping (JSON)", (a) => html`<textarea id="hook-config"${a} name="config" rows="3" placeholder='{"mapping": {"event": "$.title", "description": "$.body", "tags": {"env": "$.env"}}, "signature_header": "X-Signature-256"}'>${f.config ?? ""}</textarea>`, e.config, "Where each field of the event is in the JSON; empty: a body in /v1/log's own shape.")}
    </div>
    <div class="actions"><button type="submit" class="small" data-testid="add-hook">Add webhook</button></div>
  </form>`
      : ""
  }
</section>`;
}
