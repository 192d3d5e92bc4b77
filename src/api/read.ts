// Read routes for full-access tokens: events with filters and cursor pagination, metrics.
import { z } from "zod";
import { MAX_PAGE } from "../domain/feed.ts";
import { decodeHistoryCursor, MAX_HISTORY_PAGE } from "../domain/metric-history.ts";
import * as rule from "../domain/input-fields.ts";
import { validate } from "../domain/validation.ts";
import { projectInQuery, queryOf, type Route, route } from "../http/routes.ts";
import type { Services } from "../services.ts";
import { EVENT_EXAMPLE } from "./ingest.ts";
import { apiBucket, apiEvent, apiMetric, apiPoint, apiUser, ok } from "./views.ts";

const optional = <T extends z.ZodType>(schema: T) => schema.optional();

/** An ISO 8601 date, or date and time (with an offset or Z); what Date.parse takes besides ("-1", "May 5", "3/4") is refused, not read as 2001. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)?)?$/i;

/** Unix seconds (fractions allowed) or an ISO 8601 date, to Unix milliseconds. */
export const timeParam = z.string().transform((text, ctx) => {
  const ms = /^\d+(\.\d+)?$/.test(text) ? Number(text) * 1000 : ISO_TIME.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isFinite(ms)) return Math.round(ms);
  ctx.addIssue({
    code: "custom",
    message: `must be Unix seconds or an ISO 8601 date, got ${JSON.stringify(text.slice(0, 40))}`,
  });
  return z.NEVER;
});

export const eventsQuery = z.object({
  project: optional(rule.projectName),
  channel: optional(rule.channelName),
  user_id: optional(rule.userId),
  event: optional(rule.eventName),
  tag: z.array(rule.noNul(z.string().max(400))).max(8, "at most 8 tag filters"),
  q: optional(rule.noNul(z.string().max(200, "must be at most 200 characters"))),
  from: optional(timeParam),
  to: optional(timeParam),
  limit: optional(
    z.coerce
      .number()
      .int("must be a whole number")
      .min(1, "must be at least 1")
      .max(MAX_PAGE, `must be at most ${MAX_PAGE}`),
  ),
  cursor: optional(z.string().max(200)),
});

export const MAX_USERS_PAGE = 200;
export const usersQuery = z.object({
  project: rule.projectName,
  q: optional(rule.noNul(z.string().max(200, "must be at most 200 characters"))),
  limit: optional(
    z.coerce
      .number()
      .int("must be a whole number")
      .min(1, "must be at least 1")
      .max(MAX_USERS_PAGE, `must be at most ${MAX_USERS_PAGE}`),
  ),
  cursor: optional(rule.noNul(z.string().max(600, "is not a cursor of ours: pass next_cursor unchanged"))),
});
export const userQuery = z.object({ project: rule.projectName });
export const userParams = z.object({ user_id: rule.userId });
const USER_EXAMPLE = {
  user_id: "user-42",
  properties: { name: "Ann Lee", plan: "pro" },
  first_seen: 1767225600,
  last_seen: 1767312000.5,
  events: 42,
};

export const eventParams = z.object({
  id: z
    .string()
    .regex(/^\d{1,15}$/, "must be an event id (a positive integer)")
    .transform(Number),
});
export const metricsQuery = z.object({ project: optional(rule.projectName) });
const HISTORY_MAX_INTERVAL = 366 * 86_400;
export const historyQuery = z
  .object({
    project: optional(rule.projectName),
    title: rule.metricTitle,
    from: optional(timeParam),
    to: optional(timeParam),
    limit: optional(
      z.coerce
        .number()
        .int("must be a whole number")
        .min(1, "must be at least 1")
        .max(MAX_HISTORY_PAGE, `must be at most ${MAX_HISTORY_PAGE}`),
    ),
    cursor: optional(
      z.string().transform((text, ctx) => {
        const cursor = text.length <= 200 ? decodeHistoryCursor(text) : null;
        if (cursor) return cursor;
        ctx.addIssue({
          code: "custom",
          message: `${JSON.stringify(text.slice(0, 60))} is not valid; pass next_cursor from the previous page unchanged`,
        });
        return z.NEVER;
      }),
    ),
    interval: optional(
      z.string().transform((text, ctx): number | "auto" => {
        if (text === "auto") return text;
        const seconds = /^\d{1,9}$/.test(text) ? Number(text) : Number.NaN;
        if (seconds >= 60 && seconds <= HISTORY_MAX_INTERVAL && seconds % 60 === 0) return seconds;
        ctx.addIssue({
          code: "custom",
          message: `must be "auto" or seconds, a whole number of minutes from 60 to ${HISTORY_MAX_INTERVAL} (366 days), such as 300, 3600 or 86400; got ${JSON.stringify(text.slice(0, 40))}`,
        });
        return z.NEVER;
      }),
    ),
  })
  .superRefine((q, ctx) => {
    if (q.from !== undefined && q.to !== undefined && q.from > q.to)
      ctx.addIssue({ code: "custom", path: ["from"], message: "must not be after to" });
  });

export function readRoutes({ feed, config }: Services): Route[] {
  return [
    route({
      method: "GET",
      path: "/v1/events",
      access: "full",
      project: projectInQuery(),
      doc: {
        summary: "List events",
        description: "Newest first by event time; keyset pages behind next_cursor. Full-access tokens only.",
        query: eventsQuery,
        example: { success: true, statusCode: 200, events: [EVENT_EXAMPLE], next_cursor: null },
      },
      async handle({ request }) {
        const q = validate(eventsQuery, queryOf(request, ["tag"]), "query");
        const page = await feed.listEvents({
          project: q.project,
          channel: q.channel,
          userId: q.user_id,
          event: q.event,
          tags: q.tag,
          q: q.q,
          from: q.from,
          to: q.to,
          limit: q.limit,
          cursor: q.cursor,
        });
        return ok({ events: page.events.map(apiEvent), next_cursor: page.nextCursor });
      },
    }),
    route({
      method: "GET",
      path: "/v1/events/:id",
      access: "full",
      project: async ({ params }) => (await feed.getEvent(validate(eventParams, params, "query").id)).project,
      doc: {
        summary: "One event",
        description: "The event with this id (404 when there is none). Full-access tokens only.",
        params: eventParams,
        example: { success: true, statusCode: 200, event: EVENT_EXAMPLE },
      },
      async handle({ params }) {
        const { id } = validate(eventParams, params, "query");
        return ok({ event: apiEvent(await feed.getEvent(id)) });
      },
    }),
    route({
      method: "GET",
      path: "/v1/users",
      access: "full",
      project: projectInQuery(),
      doc: {
        summary: "List a project's users",
        description:
          "Everyone with events or identified through /v1/identify, newest activity first; `q` searches ids and properties (words, and key:value for one property) as the dashboard's users page does. " +
          "first_seen and last_seen (Unix seconds) count events and identify calls alike. At most `limit` (50 by default, 200 at most) a page; follow next_cursor (null at the end). Full-access tokens only.",
        query: usersQuery,
        example: { success: true, statusCode: 200, users: [USER_EXAMPLE], next_cursor: null },
      },
      async handle({ request }) {
        const q = validate(usersQuery, queryOf(request), "query");
        const page = await feed.usersOf(q.project, { q: q.q, cursor: q.cursor, limit: q.limit });
        return ok({ users: page.users.map(apiUser), next_cursor: page.nextCursor });
      },
    }),
    route({
      method: "GET",
      path: "/v1/users/:user_id",
      access: "full",
      project: projectInQuery(),
      doc: {
        summary: "One user",
        description:
          "A user of the project, as the list shows them (404 when no event carries the id and it was never identified). Full-access tokens only.",
        params: userParams,
        query: userQuery,
        example: { success: true, statusCode: 200, user: USER_EXAMPLE },
      },
      async handle({ request, params }) {
        const { user_id } = validate(userParams, params, "query");
        const q = validate(userQuery, queryOf(request), "query");
        return ok({ user: apiUser(await feed.userOf(q.project, user_id)) });
      },
    }),
    route({
      method: "GET",
      path: "/v1/metrics",
      access: "full",
      project: projectInQuery(config.defaultProject),
      doc: {
        summary: "List a project's metrics",
        description: "Current values. Full-access tokens only.",
        query: metricsQuery,
        example: {
          success: true,
          statusCode: 200,
          metrics: [{ project: "my-saas", title: "Active users", value: 1259, icon: "👥", updated_at: 1767225600 }],
        },
      },
      async handle({ request }) {
        const q = validate(metricsQuery, queryOf(request), "query");
        return ok({ metrics: (await feed.listMetrics(q.project ?? config.defaultProject)).map(apiMetric) });
      },
    }),
    route({
      method: "GET",
      path: "/v1/metrics/history",
      access: "full",
      project: projectInQuery(config.defaultProject),
      doc: {
        summary: "A metric's history",
        description:
          "The last value of each minute, oldest first, at most `limit` (10,000) points a page; follow next_cursor (null at the end). " +
          'With interval (seconds, or "auto": about 1,000 spans over the range), one point per span of that width instead: its first, min, max and last (value) values. ' +
          "Full-access tokens only.",
        query: historyQuery,
        example: {
          success: true,
          statusCode: 200,
          metric: {},
          points: [{ timestamp: 1767225600, value: 1259 }],
          next_cursor: null,
        },
      },
      async handle({ request }) {
        const q = validate(historyQuery, queryOf(request), "query");
        const to = q.to ?? Date.now();
        const page = await feed.metricHistory({
          project: q.project ?? config.defaultProject,
          title: q.title,
          from: q.from ?? to - 7 * 86_400_000,
          to,
          limit: q.limit ?? MAX_HISTORY_PAGE,
          cursor: q.cursor,
          interval: typeof q.interval === "number" ? q.interval * 1000 : q.interval,
        });
        const metric = apiMetric(page.metric);
        if (page.interval === null)
          return ok({ metric, points: page.points.map(apiPoint), next_cursor: page.nextCursor });
        return ok({
          metric,
          interval: page.interval / 1000,
          points: page.buckets.map(apiBucket),
          next_cursor: page.nextCursor,
        });
      },
    }),
  ];
}
