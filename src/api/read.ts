// Read routes for full-access tokens: events with filters and cursor pagination, metrics.
import { Elysia } from "elysia";
import { z } from "zod";
import type { Deps } from "../app.ts";
import { assertCanRead } from "../domain/access.ts";
import { MAX_PAGE } from "../domain/feed.ts";
import * as rule from "../domain/rules.ts";
import { validate } from "../domain/validation.ts";
import { apiEvent, apiMetric, apiPoint, ok } from "./views.ts";

const optional = <T extends z.ZodType>(schema: T) => schema.optional();

/** Unix seconds (fractions allowed) or an ISO 8601 date, to Unix milliseconds. */
export const timeParam = z.string().transform((text, ctx) => {
  const ms = /^\d+(\.\d+)?$/.test(text) ? Number(text) * 1000 : Date.parse(text);
  if (Number.isFinite(ms)) return Math.round(ms);
  ctx.addIssue({ code: "custom", message: `must be Unix seconds or an ISO 8601 date, got ${JSON.stringify(text.slice(0, 40))}` });
  return z.NEVER;
});

export const eventsQuery = z.object({
  project: optional(rule.projectName),
  channel: optional(rule.channelName),
  user_id: optional(rule.userId),
  tag: z.array(z.string().max(400)).max(8, "at most 8 tag filters"),
  q: optional(z.string().max(200, "must be at most 200 characters")),
  from: optional(timeParam),
  to: optional(timeParam),
  limit: optional(z.coerce.number().int("must be a whole number").min(1, "must be at least 1").max(MAX_PAGE, `must be at most ${MAX_PAGE}`)),
  cursor: optional(z.string().max(200)),
});

export const eventParams = z.object({ id: z.string().regex(/^\d{1,15}$/, "must be an event id (a positive integer)").transform(Number) });
export const metricsQuery = z.object({ project: optional(rule.projectName) });
export const historyQuery = z.object({ project: optional(rule.projectName), title: rule.metricTitle, from: optional(timeParam), to: optional(timeParam) });

function queryOf(request: Request): Record<string, string | string[]> {
  const params = new URL(request.url).searchParams;
  const out: Record<string, string | string[]> = { tag: params.getAll("tag") };
  for (const [key, value] of params) if (key !== "tag") out[key] = value;
  return out;
}

export function readApi({ guard, feed, config }: Deps) {
  return new Elysia({ name: "api.read" })
    .get("/v1/events", ({ request, server }) => {
      assertCanRead(guard.authenticate(request, server));
      const q = validate(eventsQuery, queryOf(request), "query");
      const page = feed.listEvents({ project: q.project, channel: q.channel, userId: q.user_id, tags: q.tag, q: q.q, from: q.from, to: q.to, limit: q.limit, cursor: q.cursor });
      return ok({ events: page.events.map(apiEvent), next_cursor: page.nextCursor });
    })
    .get("/v1/events/:id", ({ request, server, params }) => {
      assertCanRead(guard.authenticate(request, server));
      const { id } = validate(eventParams, params, "query");
      return ok({ event: apiEvent(feed.getEvent(id)) });
    })
    .get("/v1/metrics", ({ request, server }) => {
      assertCanRead(guard.authenticate(request, server));
      const q = validate(metricsQuery, queryOf(request), "query");
      return ok({ metrics: feed.listMetrics(q.project ?? config.defaultProject).map(apiMetric) });
    })
    .get("/v1/metrics/history", ({ request, server }) => {
      assertCanRead(guard.authenticate(request, server));
      const q = validate(historyQuery, queryOf(request), "query");
      const { metric, points } = feed.metricHistory(q.project ?? config.defaultProject, q.title, q.from ?? Date.now() - 7 * 86_400_000, q.to ?? undefined);
      return ok({ metric: apiMetric(metric), points: points.map(apiPoint) });
    });
}
