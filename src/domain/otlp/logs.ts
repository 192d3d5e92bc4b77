// An OTLP log record as an event (docs/api.md, "OpenTelemetry"): the same input /v1/log makes, so
// it is checked and written by the same ingest operation.
import { LIMITS } from "../input-fields.ts";
import type { LogInput } from "../ingest-writes.ts";
import type { Tags } from "../../model/event.ts";
import { channelOf, clean, cut, firstLine, tagKeyOf, tagValueOf, textOf } from "./names.ts";
import type { Attributes, LogRecord } from "./records.ts";

/** An event's name is the first line of its body, at most this long. */
export const NAME_LENGTH = 160;

/** A record older than this is historical, as an event sent with a `timestamp` is: stored at its time, never notified. */
export const HISTORICAL_AFTER_MS = 5 * 60_000;

// Attributes that say something other than a tag: who (user_id) and whether to notify.
const USER = "enduser.id";
export const NOTIFY_ATTRIBUTE = "signalboard.notify";

const SEVERITIES = ["trace", "debug", "info", "warn", "error", "fatal"] as const;

/** severityText as sent, else the name of severityNumber's range (1-4 trace ... 21-24 fatal), lowercase; null without either. */
export function severityOf(record: Pick<LogRecord, "severityText" | "severityNumber">): string | null {
  const text = clean(record.severityText).trim().toLowerCase();
  if (text) return cut(text, LIMITS.tagValue);
  const n = record.severityNumber;
  return n >= 1 && n <= 24 ? SEVERITIES[Math.floor((n - 1) / 4)]! : null;
}

/** An event's input without its project, which the token and the request decide (service.ts). */
export type LogDraft = Omit<LogInput, "project">;

/** The event a record makes, or why it cannot be one. `now`: when it was received. */
export function logInputOf(
  record: LogRecord,
  resource: Attributes,
  now: number,
): { input: LogDraft } | { refused: string } {
  const body = clean(textOf(record.body));
  const name =
    firstLine(body, NAME_LENGTH) ||
    cut(clean(record.eventName).trim(), NAME_LENGTH) ||
    severityOf(record) ||
    "log record";
  const input: LogDraft = { channel: channelOf(resource.get("service.name")), event: name };
  if (body) input.description = cut(body, LIMITS.description);
  const tags = tagsOf(record);
  if (Object.keys(tags).length) input.tags = tags;

  const user = record.attributes.get(USER);
  if (user !== undefined && user !== null && typeof user !== "object") {
    const id = clean(String(user));
    if (id.length > LIMITS.userId) return { refused: `${USER} is longer than ${LIMITS.userId} characters` };
    if (id) input.userId = id;
  }

  const at = record.time ?? record.observed;
  if (at !== null) {
    if (at > now + LIMITS.futureSeconds * 1000)
      return { refused: "its timeUnixNano is more than a day in the future (is the sender's clock right?)" };
    if (at < now - HISTORICAL_AFTER_MS) input.timestamp = at / 1000;
    else input.time = Math.min(Math.round(at), now);
  }
  const notify = record.attributes.get(NOTIFY_ATTRIBUTE);
  if (notify === true || notify === "true") input.notify = true;
  return { input };
}

/** severity, trace-id (tag keys take dashes, not underscores), then the record's scalar attributes, keys made valid; at most LIMITS.tags. */
function tagsOf(record: LogRecord): Tags {
  const tags: Tags = Object.create(null);
  const severity = severityOf(record);
  if (severity) tags.severity = severity;
  if (record.traceId) tags["trace-id"] = record.traceId;
  for (const [key, value] of record.attributes) {
    if (Object.keys(tags).length >= LIMITS.tags) break;
    if (key === USER || key === NOTIFY_ATTRIBUTE) continue;
    const tagKey = tagKeyOf(key);
    const tagValue = tagValueOf(value);
    if (!tagKey || tagValue === null || tagKey in tags) continue;
    tags[tagKey] = tagValue;
  }
  return tags;
}
