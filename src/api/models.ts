// The API's request bodies, as zod schemas over the shared rules, and their mapping onto the
// services' inputs. Unknown fields are ignored (clients add fields over time); null means absent.
import { z } from "zod";
import type { GroupInput, IdentifyInput, LogInput, MetricInput } from "../domain/ingest.ts";
import * as rule from "../domain/rules.ts";

// null is accepted as "absent" (some clients send every field); the transforms below drop it.
const optional = <T extends z.ZodType>(schema: T) => schema.nullish();
const body = <T extends z.ZodRawShape>(shape: T) => z.object(shape, { error: (i) => (i.input === undefined ? "is required: send a JSON object" : "must be a JSON object") });

const eventFields = {
  project: rule.projectName,
  channel: rule.channelName,
  icon: optional(rule.icon),
  notify: optional(z.boolean()),
  tags: optional(rule.tags),
  user_id: optional(rule.userId),
  timestamp: optional(rule.timestamp),
};

/** POST /v1/log, LogSnag's names. */
export const logBody = body({
  ...eventFields,
  event: rule.eventName,
  description: optional(rule.description),
  parser: optional(z.enum(["text", "markdown"], { error: 'must be "text" or "markdown"' })),
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
  }),
);

/** POST /log-event: the same operation with title and message. */
export const logEventBody = body({
  ...eventFields,
  title: rule.eventName,
  message: optional(rule.description),
  parser: optional(z.enum(["text", "markdown"], { error: 'must be "text" or "markdown"' })),
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
  }),
);

/** POST /send-metric */
export const sendMetricBody = body({
  project: optional(rule.projectName),
  title: rule.metricTitle,
  value: rule.metricValue,
  icon: optional(rule.icon),
  increment: optional(z.boolean()),
}).transform((b): MetricInput => ({ project: b.project ?? undefined, title: b.title, value: b.value, icon: b.icon ?? undefined, increment: b.increment ?? undefined }));

/** POST /v1/insight: set. */
export const insightBody = body({
  project: rule.projectName,
  title: rule.metricTitle,
  value: rule.metricValue,
  icon: optional(rule.icon),
}).transform((b): MetricInput => ({ project: b.project, title: b.title, value: b.value, icon: b.icon ?? undefined }));

/** PATCH /v1/insight: {"value": {"$inc": n}}. */
export const insightIncrementBody = body({
  project: rule.projectName,
  title: rule.metricTitle,
  value: z.object({ $inc: z.number().refine(Number.isFinite, "must be a finite number") }, { error: 'must be an object like {"$inc": 1}' }),
  icon: optional(rule.icon),
}).transform((b): MetricInput => ({ project: b.project, title: b.title, value: b.value.$inc, icon: b.icon ?? undefined, increment: true }));

export const identifyBody = body({
  project: rule.projectName,
  user_id: rule.userId,
  properties: optional(rule.properties),
}).transform((b): IdentifyInput => ({ project: b.project, userId: b.user_id, properties: b.properties ?? {} }));

export const groupBody = body({
  project: rule.projectName,
  group_id: rule.userId,
  user_id: optional(rule.userId),
  properties: optional(rule.properties),
}).transform((b): GroupInput => ({ project: b.project, groupId: b.group_id, userId: b.user_id ?? undefined, properties: b.properties ?? {} }));
