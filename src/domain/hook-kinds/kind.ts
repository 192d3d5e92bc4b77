// What an inbound webhook kind is (one module each, listed in index.ts): how a delivery's signature
// is checked on the raw bytes of its body, and how its JSON becomes events. Each event is the same
// input POST /v1/log makes, written by the same ingest service, once per delivery key.
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { z } from "zod";
import type { LogInput } from "../ingest-writes.ts";
import type { Hook, HookConfig } from "../../model/hook.ts";
import { isTagKey, LIMITS } from "../input-fields.ts";
import type { TagValue } from "../../model/event.ts";

/** One delivery as it arrived: its headers and the exact bytes of its body. */
export type Delivery = { headers: Headers; body: Uint8Array; now: number };

/** One event a delivery makes: the fields of POST /v1/log (no project), and the key it is stored once under. */
export type HookEvent = { input: Omit<LogInput, "project">; key: string | null };

export type HookKindModule<C extends HookConfig = HookConfig> = {
  label: string;
  /** Where its events go unless the hook names a channel. */
  defaultChannel: string;
  /** Whether a hook of this kind needs a secret to check signatures with ("none": its service signs nothing). */
  secret: "required" | "optional" | "none";
  /** Its settings beyond the name, channel and secret (the API's `config`). */
  config: z.ZodType<C>;
  /** Null when the delivery is signed as the service signs it, else why not (answered as a 401). */
  verify(delivery: Delivery, secret: string | null, config: C): string | null;
  /** Its events, from the body's JSON; an empty list for a delivery that records nothing (GitHub's ping). */
  events(body: unknown, delivery: Delivery, hook: Hook & { config: C }): HookEvent[];
};

export const defineHookKind = <C extends HookConfig>(kind: HookKindModule<C>) => kind;

/** HMAC-SHA256 of `data` with `secret`, as lowercase hex. */
export function hmacHex(secret: string, ...data: (string | Uint8Array)[]): string {
  const mac = createHmac("sha256", secret);
  for (const d of data) mac.update(d);
  return mac.digest("hex");
}

/** Whether two hex digests are equal, compared in constant time (of equal lengths; others are simply unequal). */
export function sameDigest(expected: string, given: string): boolean {
  const a = Buffer.from(expected, "utf8");
  const b = Buffer.from(given.toLowerCase(), "utf8");
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Whether a secret sent is the one kept, compared in constant time (of their digests, so whatever their lengths). */
export function sameSecret(kept: string, given: string): boolean {
  const digest = (text: string) => createHash("sha256").update(text, "utf8").digest();
  return timingSafeEqual(digest(kept), digest(given));
}

/** A JSON value's field by path ("data.object.id", "$.alerts[0].labels.env", "items.0"); undefined when absent. */
export function at(value: unknown, path: string): unknown {
  const parts = path
    .replace(/^\$\.?/, "")
    .replace(/\[(\d+)\]/g, ".$1")
    .split(".")
    .filter((p) => p !== "");
  let here = value;
  for (const part of parts) {
    if (here === null || typeof here !== "object" || !Object.hasOwn(here, part)) return undefined;
    here = (here as Record<string, unknown>)[part];
  }
  return here;
}

/** Text as an event keeps it: well-formed, without NUL, at most `max` characters. */
export function fit(value: unknown, max: number): string | undefined {
  if (value === undefined || value === null) return undefined;
  const text = (typeof value === "string" ? value : JSON.stringify(value)).toWellFormed().replaceAll("\u0000", "");
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * Text from a delivery as Markdown shows it: the characters Markdown reads as links, emphasis,
 * images, HTML or autolinks are escaped, so an issue's title such as "Fix](https://evil.example) ["
 * stays text inside its link rather than becoming a link of its own.
 */
export const markdownText = (text: string) => text.replace(/[\\`*_[\]<>~!|:]/g, "\\$&");

/** A URL from a delivery as a Markdown link's destination: what would end it early is percent-encoded. */
export const markdownUrl = (url: string) => url.replace(/[\s()<>]/g, (c) => encodeURIComponent(c));

/** A name for an event: never empty. */
export const eventName = (value: unknown, fallback: string) => fit(value, LIMITS.eventName) || fallback;

/** A string made a valid tag key ("Repository Name" → "repository-name"), or null when nothing is left. */
export function tagKey(raw: string): string | null {
  const key = raw
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, LIMITS.tagKey);
  return isTagKey(key) ? key : null;
}

/** Tags from scalar values (strings cut to the limit; others left out), at most as many as an event takes. */
export function tagsOf(entries: [string, unknown][]): Record<string, TagValue> | undefined {
  const tags: Record<string, TagValue> = {};
  for (const [raw, value] of entries) {
    if (Object.keys(tags).length >= LIMITS.tags) break;
    const key = tagKey(raw);
    if (key === null || value === undefined || value === null) continue;
    if (typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value))) tags[key] = value;
    else if (typeof value === "string" && value !== "") tags[key] = fit(value, LIMITS.tagValue)!;
  }
  return Object.keys(tags).length ? tags : undefined;
}

/** A channel name from any text, or null when nothing valid is left. */
export function channelOf(raw: unknown): string | null {
  if (typeof raw !== "string") return null;
  return tagKey(raw);
}

/** The header's value, or null. */
export const header = (d: Delivery, name: string) => d.headers.get(name);
