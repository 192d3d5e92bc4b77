// What an integration kind is made of (one module per kind beside this file, listed in
// registry.ts), and the pieces several kinds share: zod checks of URLs and tokens, a JSON request,
// an event's priority in a receiver's own terms.
import { z } from "zod";
import type { Delivery } from "../../model/notification.ts";
import type { Payload } from "../payload.ts";
import type { Format } from "../templates.ts";

/** A setting of the form that adds one (named KIND.KEY); `list`: commas or spaces between values. */
type Field = { key: string; label: string; type?: "password" | "url"; placeholder?: string; list?: boolean };

type HttpRequest = { url: string; init: RequestInit };

/** Which delivery a request is for: a kind that can tell a repeat from a new message is given what it needs. */
type DeliveryRef = Pick<Delivery, "id" | "createdAt">;

/** How a kind sends: an HTTP request, or e-mail over SMTP to these addresses. */
type Transport<C> = { request(config: C, p: Payload, d: DeliveryRef): HttpRequest } | { mail(config: C): string[] };

/** `C` is the kind's config as its schema makes it: what is shown and its secrets together. */
export type IntegrationKindModule<C extends Record<string, unknown>> = {
  /** As the kind select and the list show it. */
  label: string;
  /** The API's config keys, checked so that a bad one is a 400 naming config.KEY. */
  schema: z.ZodType<C, Record<string, unknown>>;
  /** Keys that are secrets: stored apart, written but never shown again (answers carry them masked). */
  secrets: readonly (keyof C & string)[];
  /**
   * Keys that say where the secrets are sent (its server, a proxy). A secret goes only where it was
   * sent with: a change of one of these must send the secrets again, or anyone allowed to change an
   * integration could point it at their own server and read the stored token there.
   */
  destinationKeys: readonly (keyof C & string)[];
  /** Keys that hold a URL it sends to: each is checked by the outbound rules when saved. */
  urlKeys: readonly (keyof C & string)[];
  /** Where it sends, for a list: from its masked config, so never a secret. */
  destination(masked: Partial<C>): string;
  /** The form's fields, what to make on the other side, and how a body template is written. */
  fields: Field[];
  hint: string;
  formatHint: string;
  /** How a body is written: what template values are escaped for (templates.ts). */
  format: Format;
  /** A body in its format as it is queued: HTML beside it for the kinds that send HTML. */
  finish?(body: string): { body: string; html: string };
  /** A secret made when none was given, returned once: its key and prefix. */
  generatedSecret?: { key: keyof C & string; prefix: string };
  send: Transport<C>;
};

/** A kind's module, its config's type `C` taken from its schema alone. */
export const defineKind = <C extends Record<string, unknown>>(
  kind: { schema: z.ZodType<C, Record<string, unknown>> } & IntegrationKindModule<NoInfer<C>>,
): IntegrationKindModule<C> => kind;

// --- config checks ----------------------------------------------------------------------------------

export const httpUrl = z
  .url({ protocol: /^https?$/, error: "must be an http(s) URL" })
  .max(2048, "must be at most 2048 characters");

export const apiToken = (what: string) =>
  z
    .string({ error: `is required: ${what}` })
    .trim()
    .min(1, `is required: ${what}`)
    .max(512, "must be at most 512 characters")
    .regex(/^\S+$/, `must be ${what}, without spaces`);

/** A kind whose URL is its secret (a chat service's webhook): masked like any secret, checked by the outbound rules. */
export const secretUrl = <K extends string>(key: K) => ({
  secrets: [key],
  destinationKeys: [],
  urlKeys: [key],
  destination: (c: Partial<Record<K, unknown>>) => String(c[key] ?? "…"),
});

// --- requests ---------------------------------------------------------------------------------------

export const USER_AGENT = "Signalboard";
export const LINK_TEXT = "Open in Signalboard";

/** Where a message comes from, for a footer: the event's channel and project. */
export const origin = (p: Payload) => (p.event ? `#${p.event.channel} · ${p.event.project}` : "Signalboard");

export const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
export const withoutSlash = (url: string) => url.replace(/\/+$/, "");

export function jsonRequest(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  method = "POST",
): HttpRequest {
  return {
    url,
    init: {
      method,
      headers: { "Content-Type": "application/json", "User-Agent": USER_AGENT, ...headers },
      body: JSON.stringify(body),
    },
  };
}

/** An event's priority (1 min, 3 default, 5 urgent) as one of five levels of a receiver. */
export const level = <T>(levels: readonly [T, T, T, T, T], priority: number): T =>
  levels[Math.min(5, Math.max(1, Math.round(priority || 3))) - 1]!;
