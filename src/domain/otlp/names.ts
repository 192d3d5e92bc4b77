// OpenTelemetry's names and text made into ours: a service name into a channel, attribute keys
// into tag keys, values into tag values, a body into an event's name and description.
import { LIMITS } from "../input-fields.ts";
import type { AnyValue } from "./records.ts";

/** The channel of records whose resource has no service.name. */
export const NO_SERVICE_CHANNEL = "otel";

/** Lowercase letters, digits and single dashes, at most `max` long: "checkout.API_v2" → "checkout-api-v2"; "" when nothing is left. */
export function slug(text: string, max: number): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+/, "")
    .slice(0, max)
    .replace(/-+$/, "");
}

export const channelOf = (serviceName: AnyValue | undefined): string =>
  (typeof serviceName === "string" && slug(serviceName, LIMITS.name)) || NO_SERVICE_CHANNEL;

export const tagKeyOf = (key: string): string => slug(key, LIMITS.tagKey);

/** Text we can store: no NUL character (PostgreSQL cannot), no lone surrogate. */
export const clean = (text: string): string => text.replaceAll("\u0000", "").toWellFormed();

/** At most `max` UTF-16 units, never cut through a surrogate pair; "…" ends text that was cut. */
export function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  if (/[\ud800-\udbff]/.test(text[end - 1] ?? "")) end--;
  return `${text.slice(0, end)}…`;
}

/** A value as one line of text: a string as it is, anything else as JSON. */
export function textOf(value: AnyValue): string {
  if (typeof value === "string") return value;
  if (value === null) return "";
  return JSON.stringify(value);
}

/** A scalar attribute as a tag value; null for lists, maps, empty values and numbers beyond finite. */
export function tagValueOf(value: AnyValue): string | number | boolean | null {
  if (typeof value === "string") return value === "" ? null : cut(clean(value), LIMITS.tagValue);
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value === "boolean") return value;
  return null;
}

/** The first line of the body that holds something, at most `max` characters. */
export function firstLine(body: string, max: number): string {
  const line = body.trimStart().split(/\r?\n/, 1)[0]!.trimEnd();
  return cut(line, max);
}
