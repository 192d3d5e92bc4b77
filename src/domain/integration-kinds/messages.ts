// A message or a document in a kind's format (templates.ts renders the format), with the HTML of
// the kinds that send it.
import type { Template } from "../../model/notification.ts";
import { type Message, renderDocument, renderMessage } from "../templates.ts";
import { kindNamed } from "./registry.ts";

/** The message a kind gets: its templates over `view` where it has them, else the default wording (`fallback`). */
export function kindMessage(
  kind: string,
  template: Template | null,
  view: Record<string, unknown>,
  fallback: { title: string; body: string },
): Message {
  const k = kindNamed(kind);
  const message = renderMessage(k.format, template, view, fallback);
  return k.finish ? { ...message, ...k.finish(message.body) } : message;
}

/** A document written as Markdown, such as a digest: as it is where the kind reads Markdown, else as renderDocument makes it. */
export function kindDocument(kind: string, title: string, markdown: string): Message {
  const { format } = kindNamed(kind);
  if (format === "markdown") return kindMessage(kind, { body: "{{{markdown}}}" }, { markdown }, { title, body: "" });
  return renderDocument(format, title, markdown);
}
