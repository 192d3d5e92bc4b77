// What the API returns: times in Unix seconds (the unit clients send), snake_case like LogSnag.
import { z } from "zod";
import { metricJson } from "../domain/ingest-answers.ts";
import * as rule from "../domain/input-fields.ts";
import { eventJson } from "../domain/event-json.ts";
import { API_HEADERS } from "../http/on-error.ts";
import type { MetricBucket, MetricPoint } from "../model/metric.ts";
import type { UserSummary } from "../model/profile.ts";

export const apiEvent = eventJson;

export const apiMetric = metricJson;

export function apiPoint(p: MetricPoint) {
  return { timestamp: p.at / 1000, value: p.value };
}

/** A span of the history as a point: its start, and `value` its last value, as a point's is its minute's last. */
export function apiBucket(b: MetricBucket) {
  return { timestamp: b.at / 1000, value: b.last.value, first: b.first.value, min: b.min, max: b.max, count: b.count };
}

/** A success: {"success": true, "statusCode": 200, ...fields}. */
export function ok(fields: Record<string, unknown> = {}): Response {
  return new Response(JSON.stringify({ success: true, statusCode: 200, ...fields }), { headers: API_HEADERS });
}

/** A user as the API shows them: times in Unix seconds. */
export function apiUser(u: UserSummary) {
  return {
    user_id: u.userId,
    properties: u.properties ?? {},
    first_seen: u.firstSeen / 1000,
    last_seen: u.lastSeen / 1000,
    events: u.events,
  };
}

/** ?project=: the project a route reads or writes (the default project without one). */
export const projectQuery = z.object({
  project: rule.projectName.optional().meta({ description: "The project (default: the default project)." }),
});

/** /:id of `what` ("an alert rule"): a positive integer. */
export const idParams = (what: string) =>
  z.object({
    id: z
      .string()
      .regex(/^\d{1,9}$/, `must be ${what}'s id (a positive integer)`)
      .transform(Number),
  });
