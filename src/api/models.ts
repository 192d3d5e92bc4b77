// The API's request bodies, as zod schemas over the shared rules, and their mapping onto the
// services' inputs. Unknown fields are ignored (clients add fields over time); null means absent.
import { z } from "zod";
import type { GroupInput, IdentifyInput, LogInput, MetricInput } from "../domain/ingest.ts";
import { type PageViewInput, referrerHost } from "../domain/page-views.ts";
import * as rule from "../domain/input-fields.ts";

// null is accepted as "absent" (some clients send every field); the transforms below drop it.
const optional = <T extends z.ZodType>(schema: T) => schema.nullish();
const body = <T extends z.ZodRawShape>(shape: T) =>
  z.object(shape, {
    error: (i) => (i.input === undefined ? "is required: send a JSON object" : "must be a JSON object"),
  });
// Descriptions and examples travel with the schemas into the OpenAPI document (openapi.ts).
const doc = <T extends z.ZodType>(schema: T, description: string, example?: unknown) =>
  schema.meta(example === undefined ? { description } : { description, examples: [example] });

// Tags and properties are checked by hand (domain/input-fields.ts), which JSON Schema cannot read:
// their shape is told here, on the object itself, so that null stays a choice beside it (anyOf) as
// for every field.
const tagsDoc = {
  type: "object",
  propertyNames: { pattern: "^[a-z0-9-]{1,64}$" },
  additionalProperties: {
    anyOf: [{ type: "string", maxLength: rule.LIMITS.tagValue }, { type: "number" }, { type: "boolean" }],
  },
  maxProperties: rule.LIMITS.tags,
};

const eventFields = {
  project: doc(rule.projectName, "The project; it must exist.", "my-saas"),
  channel: doc(rule.channelName, "The channel; created by its first event.", "payments"),
  icon: doc(optional(rule.icon), "One emoji, or a shortcode such as :rocket:.", "💰"),
  notify: doc(optional(z.boolean()), "Send a push notification (ignored for historical events)."),
  tags: optional(rule.tags.meta(tagsDoc)).meta({
    description:
      "Filterable key-value pairs: keys of lowercase letters, digits and dashes; values strings (up to 256 characters), numbers or booleans.",
    examples: [{ plan: "pro", seats: 3 }],
  }),
  user_id: doc(optional(rule.userId), "Links the event to a user (see /v1/identify).", "user-42"),
  timestamp: doc(optional(rule.timestamp), "Unix seconds (fractions allowed): makes the event historical.", 1767225600),
  priority: doc(
    optional(rule.priority),
    "1 (min) to 5 (urgent), default 3: shown on the event when not 3, routes notifications (an integration's min_priority) and sets each receiver's priority.",
    4,
  ),
};

/** POST /v1/log, LogSnag's names. */
export const logBody = body({
  ...eventFields,
  event: doc(rule.eventName, "The event's name.", "New subscription"),
  description: doc(optional(rule.description), "Details; markdown when parser is markdown.", "Pro plan, 3 seats"),
  parser: doc(
    optional(z.enum(["text", "markdown"], { error: 'must be "text" or "markdown"' })),
    "How to show the description (default text).",
  ),
}).transform(
  (b): LogInput => ({
    project: b.project,
    channel: b.channel,
    event: b.event,
    description: b.description ?? undefined,
    icon: b.icon ?? undefined,
    notify: b.notify ?? undefined,
    tags: b.tags ?? undefined,
    parser: b.parser ?? undefined,
    userId: b.user_id ?? undefined,
    timestamp: b.timestamp ?? undefined,
    priority: b.priority ?? undefined,
  }),
);

/** POST /log-event: the same operation with title and message. */
export const logEventBody = body({
  ...eventFields,
  title: doc(rule.eventName, "The event's name.", "New subscription"),
  message: doc(optional(rule.description), "Details; markdown when parser is markdown."),
  parser: doc(
    optional(z.enum(["text", "markdown"], { error: 'must be "text" or "markdown"' })),
    "How to show the message (default text).",
  ),
}).transform(
  (b): LogInput => ({
    project: b.project,
    channel: b.channel,
    event: b.title,
    description: b.message ?? undefined,
    icon: b.icon ?? undefined,
    notify: b.notify ?? undefined,
    tags: b.tags ?? undefined,
    parser: b.parser ?? undefined,
    userId: b.user_id ?? undefined,
    timestamp: b.timestamp ?? undefined,
    priority: b.priority ?? undefined,
  }),
);

/** POST /send-metric */
export const sendMetricBody = body({
  project: doc(
    optional(rule.projectName),
    "Default: the token's project for a public token, else the default project.",
  ),
  title: doc(rule.metricTitle, "The metric's name.", "Active users"),
  value: doc(rule.metricValue, "A number, a string such as online, or a boolean.", 1254),
  icon: doc(optional(rule.icon), "One emoji or shortcode.", "👥"),
  increment: doc(
    optional(z.boolean()),
    "Add value to the stored number (a new metric starts at 0) instead of setting it.",
  ),
}).transform(
  (b): MetricInput => ({
    project: b.project ?? undefined,
    title: b.title,
    value: b.value,
    icon: b.icon ?? undefined,
    increment: b.increment ?? undefined,
  }),
);

/** POST /v1/insight: set. */
export const insightBody = body({
  project: doc(rule.projectName, "The project.", "my-saas"),
  title: doc(rule.metricTitle, "The metric's name.", "Status"),
  value: doc(rule.metricValue, "A number, a string or a boolean.", "online"),
  icon: doc(optional(rule.icon), "One emoji or shortcode."),
}).transform((b): MetricInput => ({ project: b.project, title: b.title, value: b.value, icon: b.icon ?? undefined }));

/** PATCH /v1/insight: {"value": {"$inc": n}}. */
export const insightIncrementBody = body({
  project: doc(rule.projectName, "The project.", "my-saas"),
  title: doc(rule.metricTitle, "The metric's name.", "Active users"),
  value: doc(
    z.object(
      { $inc: z.number().refine(Number.isFinite, "must be a finite number") },
      { error: 'must be an object like {"$inc": 1}' },
    ),
    "How much to add.",
    { $inc: 5 },
  ),
  icon: doc(optional(rule.icon), "One emoji or shortcode."),
}).transform(
  (b): MetricInput => ({
    project: b.project,
    title: b.title,
    value: b.value.$inc,
    icon: b.icon ?? undefined,
    increment: true,
  }),
);

const propertiesDoc = {
  type: "object",
  propertyNames: { minLength: 1, maxLength: rule.LIMITS.propertyKey },
  additionalProperties: {
    anyOf: [
      { type: "string", maxLength: rule.LIMITS.propertyValue },
      { type: "number" },
      { type: "boolean" },
      { type: "null" },
    ],
  },
  maxProperties: rule.LIMITS.properties,
};

export const identifyBody = body({
  project: doc(rule.projectName, "The project.", "my-saas"),
  user_id: doc(rule.userId, "The user.", "user-42"),
  properties: optional(rule.properties.meta(propertiesDoc)).meta({
    description: "Merged into the stored properties; null removes one.",
    examples: [{ plan: "pro", seats: 3 }],
  }),
}).transform((b): IdentifyInput => ({ project: b.project, userId: b.user_id, properties: b.properties ?? {} }));

export const groupBody = body({
  project: doc(rule.projectName, "The project.", "my-saas"),
  group_id: doc(rule.userId, "The group (a company, a team).", "acme"),
  user_id: doc(optional(rule.userId), "Adds this user to the group."),
  properties: optional(rule.properties.meta(propertiesDoc)).meta({
    description: "Merged into the group's stored properties.",
  }),
}).transform(
  (b): GroupInput => ({
    project: b.project,
    groupId: b.group_id,
    userId: b.user_id ?? undefined,
    properties: b.properties ?? {},
  }),
);

/** POST /v1/page: LogSnag's page view, stored as an event in the pageviews channel (domain/page-views.ts). */
export const pageBody = body({
  project: doc(rule.projectName, "The project.", "my-saas"),
  user_id: doc(optional(rule.userId), "The user who saw the page: the view appears on their journey.", "user-42"),
  payload: z.object(
    {
      path: doc(rule.eventName, "The page's path: the event's name.", "/pricing"),
      referrer: doc(
        optional(rule.text(2048)).refine(
          (r) => r == null || r.trim() === "" || referrerHost(r) !== null,
          "must be a URL such as https://example.com/page, or a host name",
        ),
        "Where the visitor came from: a URL or a host; only the host is kept (tag referrer).",
        "https://news.example.com/item?id=1",
      ),
      utm_source: doc(optional(rule.text(rule.LIMITS.tagValue)), "Kept as the tag utm-source.", "newsletter"),
      title: doc(optional(rule.description), "The page's title: the event's description.", "Pricing"),
      user_agent: doc(optional(z.string()), "Accepted for LogSnag's clients, not stored."),
    },
    {
      error: (i) =>
        i.input === undefined
          ? 'is required: an object like {"path": "/pricing"}'
          : 'must be an object like {"path": "/pricing"}',
    },
  ),
}).transform(
  (b): PageViewInput => ({
    project: b.project,
    userId: b.user_id ?? undefined,
    path: b.payload.path,
    referrer: b.payload.referrer ?? undefined,
    utmSource: b.payload.utm_source || undefined,
    title: b.payload.title ?? undefined,
  }),
);
