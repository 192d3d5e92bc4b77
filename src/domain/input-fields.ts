// Every input field's schema and limits (names, text, icons, tags, properties, timestamps,
// priorities, metric values), whatever the input comes from (API, dashboard, CLI). docs/api.md's
// "Limits" section documents exactly these numbers.
import { get as emojiByShortcode } from "node-emoji";
import { z } from "zod";
import type { TagValue } from "../model/event.ts";
import type { Properties } from "../model/profile.ts";

export const LIMITS = {
  name: 64,
  eventName: 200,
  description: 10_000,
  tags: 32,
  tagKey: 64,
  tagValue: 256,
  userId: 256,
  metricTitle: 200,
  metricText: 256,
  properties: 100,
  propertyKey: 64,
  propertyValue: 1024,
  futureSeconds: 24 * 3600,
} as const;

const NAME = /^[a-z0-9-]{1,64}$/;
const TAG_KEY = /^[a-z0-9-]{1,64}$/;

export function isName(value: string): boolean {
  return NAME.test(value);
}

export function isTagKey(value: string): boolean {
  return TAG_KEY.test(value);
}

export function nameRule(what: "project" | "channel") {
  return z.string().regex(NAME, {
    error: (issue) =>
      `must be 1-${LIMITS.name} lowercase letters, digits or dashes (a ${what} name like "my-app"), got ${JSON.stringify(String(issue.input).slice(0, 80))}`,
  });
}

export const projectName = nameRule("project");
export const channelName = nameRule("channel");

/**
 * `checks` (a string schema with length checks) run only once the value is known to be a string.
 * zod runs length checks on any value with a `length` field, even one that already failed the type
 * check, and a body such as {"event": {"length": {"toString": {}}}} made them throw.
 */
export function onlyStrings<T extends z.ZodType<string, string>>(checks: T) {
  const { $schema: _, ...documented } = z.toJSONSchema(checks); // the API docs show the checks' lengths
  return z.string().pipe(checks).meta(documented);
}

/** Text holds no NUL character (U+0000): no name or message needs one, and PostgreSQL cannot store it. */
export const noNul = (s: z.ZodString) =>
  s.refine((v) => !v.includes("\u0000"), "must not contain the NUL character (U+0000)");

/** A string of at most `max` characters (and, with `nonEmpty`, at least one), without NUL. */
export function text(max: number, { nonEmpty = false, tooLong = `must be at most ${max} characters` } = {}) {
  const string = noNul(z.string().max(max, tooLong));
  return onlyStrings(nonEmpty ? string.min(1, "must not be empty") : string);
}

export const eventName = text(LIMITS.eventName, { nonEmpty: true });

export const description = text(LIMITS.description);

export const userId = text(LIMITS.userId, { nonEmpty: true });

// One RGI emoji (flags, keycaps, skin tones and ZWJ families included), or a lone pictograph such as ❤.
const ONE_EMOJI = /^(\p{RGI_Emoji}|\p{Extended_Pictographic}\uFE0F?)$/v;

/** One emoji, or a `:shortcode:` turned into its emoji; null when it is neither. */
export function normalizeIcon(raw: string): string | null {
  const text = raw.trim();
  if (/^:[\w+-]+:$/.test(text)) return emojiByShortcode(text) ?? null;
  return ONE_EMOJI.test(text) ? text : null;
}

export const icon = z.string().transform((raw, ctx) => {
  const emoji = normalizeIcon(raw);
  if (emoji) return emoji;
  ctx.addIssue({
    code: "custom",
    message: `must be a single emoji such as "🚀" or a shortcode such as ":rocket:"; got ${JSON.stringify(raw.slice(0, 40))}`,
  });
  return z.NEVER;
});

// Not z.record: it drops a "__proto__" key silently, and we want every key seen and judged.
function plainObject(what: string) {
  return z.custom<Record<string, unknown>>((v) => typeof v === "object" && v !== null && !Array.isArray(v), {
    error: (issue) => (issue.input === undefined ? "is required" : `${what} must be an object of key-value pairs`),
  });
}

export const tags = plainObject("tags").transform((input, ctx) => {
  const entries = Object.entries(input);
  if (entries.length > LIMITS.tags) {
    ctx.addIssue({
      code: "too_big",
      origin: "object",
      maximum: LIMITS.tags,
      message: `at most ${LIMITS.tags} tags are allowed, got ${entries.length}`,
    });
    return z.NEVER;
  }
  const out: Record<string, TagValue> = Object.create(null);
  for (const [key, value] of entries) {
    const problem = tagProblem(key, value);
    if (problem) ctx.addIssue({ code: "custom", path: [key], message: problem });
    else out[key] = value as TagValue;
  }
  return out;
});

function tagProblem(key: string, value: unknown): string | null {
  if (!TAG_KEY.test(key))
    return `tag keys use 1-${LIMITS.tagKey} lowercase letters, digits or dashes, like "plan" or "user-type"`;
  if (typeof value === "string")
    return value.length > LIMITS.tagValue ? `tag values must be at most ${LIMITS.tagValue} characters` : null;
  if (typeof value === "number") return Number.isFinite(value) ? null : "tag values must be finite numbers";
  if (typeof value === "boolean") return null;
  return `tag values must be a string, number or boolean, got ${value === null ? "null" : Array.isArray(value) ? "an array" : typeof value}`;
}

export const properties = plainObject("properties").transform((input, ctx) => {
  const entries = Object.entries(input);
  if (entries.length > LIMITS.properties) {
    ctx.addIssue({
      code: "too_big",
      origin: "object",
      maximum: LIMITS.properties,
      message: `at most ${LIMITS.properties} properties are allowed, got ${entries.length}`,
    });
    return z.NEVER;
  }
  const out: Properties = Object.create(null);
  for (const [key, value] of entries) {
    const problem = propertyProblem(key, value);
    if (problem) ctx.addIssue({ code: "custom", path: [key], message: problem });
    else out[key] = value as Properties[string];
  }
  return out;
});

const CONTROL = /[\u0000-\u001f\u007f]/;

function propertyProblem(key: string, value: unknown): string | null {
  if (key.length < 1 || key.length > LIMITS.propertyKey)
    return `property keys must be 1-${LIMITS.propertyKey} characters`;
  // SQLite's JSON merge reads keys as C strings: "\u0000a" and "\u0000" would become one property.
  if (CONTROL.test(key)) return "property keys cannot contain control characters";
  if (value === null || typeof value === "boolean") return null;
  if (typeof value === "number") return Number.isFinite(value) ? null : "property values must be finite numbers";
  if (typeof value === "string")
    return value.length > LIMITS.propertyValue
      ? `property values must be at most ${LIMITS.propertyValue} characters`
      : null;
  return `property values must be a string, number, boolean or null, got ${Array.isArray(value) ? "an array" : typeof value}`;
}

/**
 * Unix seconds, fractions allowed (LogSnag's Python client sends floats). Anything past the year
 * 5138 can only be milliseconds, and is refused with a message that says so.
 */
export const timestamp = z.number().superRefine((seconds, ctx) => {
  const problem = timestampProblem(seconds, Date.now());
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

export function timestampProblem(seconds: number, now: number): string | null {
  if (!Number.isFinite(seconds)) return "must be a finite number of Unix seconds";
  if (seconds > 1e11)
    return `looks like milliseconds (${seconds}); send Unix seconds, for example Math.floor(Date.now() / 1000)`;
  if (seconds < 0) return "must be Unix seconds after 1970-01-01";
  if (seconds > now / 1000 + LIMITS.futureSeconds)
    return "is more than a day in the future; send the Unix time in seconds the event happened";
  return null;
}

/** An event's priority: 1 (min) to 5 (urgent); 3 when not sent (LogSnag's clients never send it). */
export const PRIORITY = { min: 1, normal: 3, max: 5 } as const;

export const isPriority = (value: unknown): value is number =>
  typeof value === "number" && Number.isInteger(value) && value >= PRIORITY.min && value <= PRIORITY.max;

export const priority = z
  .number({ error: "must be a whole number from 1 (min) to 5 (urgent); 3 is the default" })
  .refine(isPriority, "must be a whole number from 1 (min) to 5 (urgent); 3 is the default");

/** The most a rule or check may wait (rounds firing, failures in a row) before it notifies (quiet.ts). */
export const MAX_NOTIFY_AFTER = 1000;

/** notify_after: a whole number of `what` (rounds, failures) from 1 to MAX_NOTIFY_AFTER. */
export const notifyAfter = (what: string, description: string) =>
  z
    .number({ error: `must be a whole number of ${what}` })
    .int(`must be a whole number of ${what}`)
    .min(1, "must be at least 1")
    .max(MAX_NOTIFY_AFTER, `must be at most ${MAX_NOTIFY_AFTER}`)
    .optional()
    .meta({ description });

export const metricTitle = text(LIMITS.metricTitle, { nonEmpty: true });

export const metricValue = z.union(
  [
    z.number().refine(Number.isFinite, "must be a finite number"),
    z.boolean(),
    text(LIMITS.metricText, { tooLong: `text values must be at most ${LIMITS.metricText} characters` }),
  ],
  {
    error: (issue) =>
      issue.input === undefined
        ? "is required (a number, a string or a boolean)"
        : "must be a number, a string or a boolean",
  },
);
