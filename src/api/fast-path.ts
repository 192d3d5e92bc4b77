// The common event body, checked without zod: a plain walk over the fields that gives exactly
// what logBody (api/models.ts) gives, or null, in which case the request takes the full path (zod,
// with its error messages). It handles only bodies it is sure of: every field one it knows, each
// of the right type and within its limits. test/unit/fast-path.test.ts holds it to zod's answers
// on random bodies. (zod's object parsing costs a few microseconds a request; ingest is the hot path.)
import type { LogInput } from "../domain/ingest.ts";
import { isName, isPriority, isTagKey, LIMITS, normalizeIcon, timestampProblem } from "../domain/input-fields.ts";

type Names = { event: "event" | "title"; description: "description" | "message" };

const KNOWN: Record<Names["event"], Set<string>> = {
  event: new Set([
    "project",
    "channel",
    "event",
    "description",
    "icon",
    "notify",
    "tags",
    "parser",
    "user_id",
    "timestamp",
    "priority",
  ]),
  title: new Set([
    "project",
    "channel",
    "title",
    "message",
    "icon",
    "notify",
    "tags",
    "parser",
    "user_id",
    "timestamp",
    "priority",
  ]),
};

// Icons repeat (most clients send a handful): their check is remembered.
const icons = new Map<string, string | null>();

function icon(raw: string): string | null {
  let normalized = icons.get(raw);
  if (normalized === undefined) {
    normalized = normalizeIcon(raw);
    if (icons.size < 1000) icons.set(raw, normalized);
  }
  return normalized;
}

const absent = (v: unknown) => v === undefined || v === null;
const text = (v: unknown, min: number, max: number): v is string =>
  typeof v === "string" && v.length >= min && v.length <= max && v.isWellFormed() && !v.includes("\u0000");

function tagsOf(v: unknown): Record<string, string | number | boolean> | null | undefined {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return undefined;
  const out: Record<string, string | number | boolean> = Object.create(null);
  let n = 0;
  for (const key in v) {
    if (!Object.hasOwn(v, key)) return undefined;
    if (++n > LIMITS.tags || !isTagKey(key)) return undefined;
    const value = (v as Record<string, unknown>)[key];
    if (typeof value === "string") {
      if (value.length > LIMITS.tagValue || !value.isWellFormed() || value.includes("\u0000")) return undefined;
    } else if (typeof value === "number") {
      if (!Number.isFinite(value)) return undefined;
    } else if (typeof value !== "boolean") return undefined;
    out[key] = value;
  }
  return out;
}

/** The LogInput for `body`, or null when only the full path can tell. */
export function fastLogInput(body: unknown, names: Names, now = Date.now()): LogInput | null {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return null;
  const b = body as Record<string, unknown>;
  const known = KNOWN[names.event];
  for (const key in b) if (!known.has(key) || !Object.hasOwn(b, key)) return null;
  const { project, channel, icon: rawIcon, notify, tags: rawTags, parser, user_id: userId, timestamp, priority } = b;
  const event = b[names.event];
  const description = b[names.description];
  if (typeof project !== "string" || !isName(project) || typeof channel !== "string" || !isName(channel)) return null;
  if (!text(event, 1, LIMITS.eventName)) return null;
  if (!absent(description) && !text(description, 0, LIMITS.description)) return null;
  if (!absent(notify) && typeof notify !== "boolean") return null;
  if (!absent(parser) && parser !== "text" && parser !== "markdown") return null;
  if (!absent(userId) && !text(userId, 1, LIMITS.userId)) return null;
  if (!absent(timestamp) && (typeof timestamp !== "number" || timestampProblem(timestamp, now) !== null)) return null;
  if (!absent(priority) && !isPriority(priority)) return null;
  let emoji: string | undefined;
  if (!absent(rawIcon)) {
    if (typeof rawIcon !== "string") return null;
    const normalized = icon(rawIcon);
    if (normalized === null) return null;
    emoji = normalized;
  }
  let tags: Record<string, string | number | boolean> | undefined;
  if (!absent(rawTags)) {
    const parsed = tagsOf(rawTags);
    if (!parsed) return null;
    tags = parsed;
  }
  return {
    project,
    channel,
    event,
    description: absent(description) ? undefined : (description as string),
    icon: emoji,
    notify: absent(notify) ? undefined : (notify as boolean),
    tags,
    parser: absent(parser) ? undefined : (parser as "text" | "markdown"),
    userId: absent(userId) ? undefined : (userId as string),
    timestamp: absent(timestamp) ? undefined : (timestamp as number),
    priority: absent(priority) ? undefined : (priority as number),
  };
}
