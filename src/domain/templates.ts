// An integration's own wording: mustache templates ({{event}}, {{tags.plan}}, ...) rendered over a
// notify event when its delivery is queued. Templates are written by the project's team, values
// come from whoever sent the event (a public token ships in web pages), so each value is escaped
// for where the text goes: HTML for e-mail, Markdown for Telegram, Discord and Matrix, Slack's own
// for Slack, JSON for a webhook's body. A title is plain text everywhere (each sender escapes it
// as its receiver needs). A template is checked when it is saved (its syntax, its names, and the
// text it makes from a hostile sample), so a send never fails for its template.
import Mustache from "mustache";
import type { FieldIssue } from "../errors.ts";
import type { Tags } from "../model/event.ts";
import type { Template } from "../model/notification.ts";
import { escapeHtml, htmlText, markdownEmailHtml } from "./safe-html.ts";

/** How a kind's body is written: what its values are escaped for (each kind names its own). */
export type Format = "text" | "markdown" | "slack" | "html" | "json";

export const LIMITS = { title: 250, body: 4000 } as const;

/** The names a template may use (tags.KEY for any tag). */
export const VARIABLES = [
  "event",
  "description",
  "channel",
  "project",
  "icon",
  "user_id",
  "tags",
  "url",
  "priority",
] as const;

/** What a template is rendered over: an event, or the sample of the preview and the checks. */
export type TemplateEvent = {
  name: string;
  description: string | null;
  channel: string;
  project: string;
  icon: string | null;
  userId: string | null;
  tags: Tags | null;
  priority: number;
};

/** A message as queued: a plain title, the body in the kind's format, and HTML where the kind sends it. */
export type Message = { title: string; body: string; html?: string; json?: string };

/** The view a template sees (no prototype: a name like constructor finds nothing). */
export function templateView(e: TemplateEvent, url: string): Record<string, unknown> {
  const tags: Record<string, unknown> = Object.create(null);
  for (const [k, v] of Object.entries(e.tags ?? {})) tags[k] = v;
  return Object.assign(Object.create(null), {
    event: e.name,
    description: e.description ?? "",
    channel: e.channel,
    project: e.project,
    icon: e.icon ?? "",
    user_id: e.userId ?? "",
    tags,
    url,
    priority: e.priority,
  });
}

// --- escaping -------------------------------------------------------------------------------------

/** Every ASCII punctuation character backslashed: CommonMark and Discord both read each as itself. */
export function escapeMarkdown(text: string): string {
  return text.replace(/[!-/:-@[-`{-~]/g, "\\$&");
}

/** Slack's mrkdwn reads only these three as markup (links, mentions); escaping them keeps a value text. */
export function escapeSlack(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

const escapeJson = (text: string) => JSON.stringify(text).slice(1, -1);

const ESCAPES: Record<Format, (text: string) => string> = {
  text: (t) => t,
  markdown: escapeMarkdown,
  slack: escapeSlack,
  html: escapeHtml,
  json: escapeJson,
};

function render(source: string, view: Record<string, unknown>, escape: (text: string) => string): string {
  return Mustache.render(source, view, undefined, { escape: (value: unknown) => escape(String(value)) });
}

const oneLine = (text: string) => text.replace(/\s+/g, " ").trim().slice(0, LIMITS.title);

// --- messages -------------------------------------------------------------------------------------

/**
 * A message in a format: its templates over `view` where it has them, else the default wording
 * (`fallback`, plain text, escaped for the format). The kinds that send HTML add it
 * (integration-kinds/messages.ts).
 */
export function renderMessage(
  format: Format,
  template: Template | null,
  view: Record<string, unknown>,
  fallback: { title: string; body: string },
): Message {
  const title = template?.title ? oneLine(render(template.title, view, String)) || fallback.title : fallback.title;
  if (format === "json")
    return template?.body
      ? { title, body: fallback.body, json: render(template.body, view, escapeJson) }
      : { title, body: fallback.body };
  const body = template?.body
    ? render(template.body, view, ESCAPES[format]).trim()
    : defaultBody(format, fallback.body);
  return { title, body };
}

/**
 * A document written as Markdown (its values escaped with escapeMarkdown), such as a digest, in a
 * format that is not Markdown: HTML for e-mail, its words elsewhere.
 */
export function renderDocument(format: Exclude<Format, "markdown">, title: string, markdown: string): Message {
  const html = markdownEmailHtml(markdown);
  if (format === "html") return { title, body: htmlText(html), html };
  const text = htmlText(html);
  return { title, body: format === "slack" ? escapeSlack(text) : text };
}

/**
 * A mail's two parts: the title on top of each as well as in the Subject (a forwarded mail, or a
 * preview, shows the body without it), then the body, then the event's link. The title is plain
 * text: escaped for the HTML part.
 */
export function mailParts(m: { title: string; body: string; html?: string; url: string }): {
  text: string;
  html: string;
} {
  const body = m.html ?? `<p>${escapeHtml(m.body).replace(/\n/g, "<br>")}</p>`;
  return {
    text: `${m.title}\n\n${m.body}\n\n${m.url}\n`,
    html: `<h1>${escapeHtml(m.title)}</h1>\n${body}\n<p><a href="${escapeHtml(m.url)}">Open in Signalboard</a></p>`,
  };
}

/** The default body (plain text) in a format: kept as it reads. */
function defaultBody(format: Format, text: string): string {
  if (format === "html") return escapeHtml(text).replace(/\n/g, "<br>\n");
  return ESCAPES[format](text);
}

// --- checks ---------------------------------------------------------------------------------------

/** An event that tries everything a sender could: markup of every format, quotes, mustache braces. */
export function sampleEvent(project: string): TemplateEvent {
  return {
    name: `Payment failed <b>"quoted"</b> & *starred* _under_ [link](javascript:alert(1)) {{event}}`,
    description: 'Card declined for **acme** <script>alert(1)</script>\n\n- retry: `3`\n- back\\slash "done"',
    channel: "payments",
    project,
    icon: "💳",
    userId: "user-42",
    tags: { plan: "pro", seats: 3, trial: false },
    priority: 4,
  };
}

/** What is wrong with templates in a format, each naming its field (template.title, template.body); none when they are fine. */
export function templateProblems(format: Format, template: Template): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const field of ["title", "body"] as const) {
    const source = template[field];
    if (source === undefined) continue;
    const path = `template.${field}`;
    const problem = syntaxProblem(source);
    if (problem) {
      issues.push({ path, type: "invalid_template", message: `${path}: ${problem}` });
      continue;
    }
    if (field === "body" && format === "json") {
      const view = templateView(sampleEvent("my-app"), "https://signalboard.example.com/p/my-app/events/1");
      try {
        JSON.parse(render(source, view, escapeJson));
      } catch (error) {
        issues.push({
          path,
          type: "invalid_template",
          message: `${path}: does not make JSON (${(error as Error).message}); quote each value, as in {"text": "{{event}}"}`,
        });
      }
    }
  }
  return issues;
}

/** A mustache syntax error, a partial, or a name the view does not have; null when there is none. */
function syntaxProblem(source: string): string | null {
  let tokens: unknown[];
  try {
    tokens = Mustache.parse(source);
  } catch (error) {
    return `is not a valid template: ${(error as Error).message}`;
  }
  for (const token of tokens as [string, string][]) {
    const [type, name] = token;
    if (type === ">") return `partials ({{> ${name}}}) are not available; use ${names()}`;
    if (type === "=") return "changing the delimiters is not available";
    if (!["name", "&", "{", "#", "^"].includes(type)) continue;
    const root = name.split(".")[0]!;
    if (name !== "." && !(VARIABLES as readonly string[]).includes(root))
      return `{{${name}}} is not a variable; use ${names()}`;
  }
  return null;
}

const names = () => VARIABLES.map((v) => (v === "tags" ? "{{tags.KEY}}" : `{{${v}}}`)).join(", ");
