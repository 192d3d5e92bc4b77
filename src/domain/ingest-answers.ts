// What ingest answers: `{"success": true, "statusCode": 200, ...}` with the event or metric as the
// API shows it. Written here, beside the writes, because an Idempotency-Key's answer is stored in
// the same transaction as its write, by name (a writer thread cannot be sent a function).
import { eventJson } from "./event-json.ts";
import type { StoredEvent } from "../model/event.ts";
import type { Metric } from "../model/metric.ts";

export type AnswerKind = "event" | "metric" | "plain";

export function metricJson(m: Metric) {
  return { project: m.project, title: m.title, value: m.value, icon: m.icon, updated_at: m.updatedAt / 1000 };
}

export const success = (fields: Record<string, unknown> = {}) =>
  JSON.stringify({ success: true, statusCode: 200, ...fields });

export function answer(kind: AnswerKind, result: unknown): string {
  // The event's JSON with the success fields put in front: no object copied (this runs per event).
  if (kind === "event")
    return `{"success":true,"statusCode":200,${JSON.stringify(eventJson(result as StoredEvent)).slice(1)}`;
  if (kind === "metric") return success(metricJson(result as Metric));
  return success();
}
