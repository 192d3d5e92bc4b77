// Questions for full-access tokens: counts per bucket of time (GET /v1/analytics/series) and funnels
// (GET /v1/analytics/funnel, and the users who dropped at a step). The query strings are read here;
// the service checks what they mean (a 400 names the parameter) and the store answers off the loop.
import { z } from "zod";
import {
  DEFAULT_GROUPS,
  DEFAULT_PERIODS,
  MAX_PERIODS,
  RETENTION_INTERVALS,
  type RetentionAnswer,
  retentionPercent,
  type FunnelAnswer,
  INTERVALS,
  MAX_DROPPED_PAGE,
  MAX_GROUPS,
  MAX_STEPS,
  MEASURES,
  type SeriesAnswer,
} from "../domain/analytics.ts";
import * as rule from "../domain/input-fields.ts";
import { validate } from "../domain/validation.ts";
import { projectInQuery, queryOf, type Route, route } from "../http/routes.ts";
import type { Services } from "../services.ts";
import { timeParam } from "./read.ts";
import { ok } from "./views.ts";

const seconds = (ms: number) => ms / 1000;
const whole = (what: string) =>
  z.coerce.number({ error: `must be a number` }).int("must be a whole number").meta({ description: what });
const doc = <T extends z.ZodType>(schema: T, description: string, extra: Record<string, unknown> = {}) =>
  schema.meta({ description, ...extra });

const range = {
  project: doc(rule.projectName.optional(), "The project (default: the default project)."),
  from: doc(timeParam.optional(), "Unix seconds (or an ISO 8601 date), inclusive; default: 30 days before to."),
  to: doc(timeParam.optional(), "Unix seconds (or an ISO 8601 date), exclusive; default: now."),
};

export const seriesQuery = z.object({
  ...range,
  channel: doc(rule.channelName.optional(), "Only events of this channel."),
  event: doc(rule.eventName.optional(), "Only events of this name."),
  tag: doc(
    z
      .array(rule.noNul(z.string().max(400)))
      .max(8, "at most 8 tag filters")
      .default([]),
    "key:value; repeat for more (all must match).",
  ),
  user_id: doc(rule.userId.optional(), "Only this user's events."),
  q: doc(
    rule.noNul(z.string().max(200, "must be at most 200 characters")).optional(),
    "Words in the name or description, as the search takes them.",
  ),
  interval: doc(z.string().optional(), "The buckets (default day).", { enum: INTERVALS }),
  tz: doc(z.string().optional(), "An IANA time zone: buckets start at its midnights (default UTC).", {
    examples: ["Europe/Paris"],
  }),
  measure: doc(z.string().optional(), "Count events, or the distinct users among them (default events).", {
    enum: MEASURES,
  }),
  group_by: doc(z.string().optional(), "One line per channel, per event name or per value of a tag (tag:KEY).", {
    examples: ["channel", "event", "tag:plan"],
  }),
  limit: whole(
    `Groups kept, most first (default ${DEFAULT_GROUPS}, at most ${MAX_GROUPS}); the rest are one line, "other".`,
  ).optional(),
});

export const funnelQuery = z.object({
  ...range,
  step: doc(
    z.array(rule.eventName).max(100, `at most ${MAX_STEPS} steps`),
    `An event name; repeat, in order, for 2 to ${MAX_STEPS} steps.`,
  ),
  window: doc(
    z.coerce.number({ error: "must be a number of seconds" }).optional(),
    "Seconds the last step may come after the first (default 604800, a week).",
  ),
});

export const retentionQuery = z.object({
  ...range,
  start_event: doc(rule.eventName, "The event that puts a user in the cohort of its period."),
  return_event: doc(rule.eventName, "The event that counts a user of a cohort as back in a period."),
  interval: doc(z.string().optional(), "The periods (default day).", { enum: RETENTION_INTERVALS }),
  periods: whole(`Periods after the cohort's own (default ${DEFAULT_PERIODS}, at most ${MAX_PERIODS}).`).optional(),
  tz: seriesQuery.shape.tz,
  channel: seriesQuery.shape.channel,
  tag: seriesQuery.shape.tag,
  user_id: seriesQuery.shape.user_id,
  q: seriesQuery.shape.q,
});

export const droppedQuery = funnelQuery.extend({
  at: whole("The step (from 2): its users are those who reached the step before and not this one."),
  cursor: doc(z.string().max(400).optional(), "next_cursor of the previous page."),
  limit: whole(`Users per page (default 100, at most ${MAX_DROPPED_PAGE}).`).optional(),
});

/** A series as the API answers it: times in Unix seconds; the groups past the limit as the group "other". */
export function apiSeries(a: SeriesAnswer) {
  return {
    interval: a.interval,
    tz: a.tz,
    measure: a.measure,
    group_by: a.groupBy,
    from: seconds(a.from),
    to: seconds(a.to),
    series: a.series.map((s) => ({
      group: s.other ? "other" : s.group,
      other: s.other,
      total: s.total,
      points: s.points.map((p) => ({ t: seconds(p.t), value: p.value })),
    })),
  };
}

export function apiFunnel(a: FunnelAnswer) {
  return {
    from: seconds(a.from),
    to: seconds(a.to),
    window: seconds(a.window),
    steps: a.steps.map((s) => ({
      event: s.event,
      ...(s.channel ? { channel: s.channel } : {}),
      ...(s.tags.length ? { tags: s.tags } : {}),
      users: s.users,
      conversion: s.conversion,
      conversion_from_previous: s.conversionFromPrevious,
      dropped: s.dropped,
      median_seconds: s.medianMs === null ? null : seconds(s.medianMs),
    })),
  };
}

/** Retention as the API answers it: times in Unix seconds; per cohort the users back in each period and their percentage. */
export function apiRetention(a: RetentionAnswer) {
  return {
    interval: a.interval,
    tz: a.tz,
    from: seconds(a.from),
    to: seconds(a.to),
    periods: a.periods,
    start_event: a.startEvent,
    return_event: a.returnEvent,
    cohorts: a.cohorts.map((c) => ({
      start: seconds(c.start),
      users: c.users,
      returned: c.returned,
      percent: c.returned.map((n) => (n === null ? null : retentionPercent(n, c.users))),
    })),
  };
}

const SERIES_EXAMPLE = {
  success: true,
  statusCode: 200,
  interval: "day",
  tz: "UTC",
  measure: "events",
  group_by: "tag:plan",
  from: 1767225600,
  to: 1767398400,
  series: [
    {
      group: "pro",
      other: false,
      total: 42,
      points: [
        { t: 1767225600, value: 30 },
        { t: 1767312000, value: 12 },
      ],
    },
    {
      group: "other",
      other: true,
      total: 5,
      points: [
        { t: 1767225600, value: 2 },
        { t: 1767312000, value: 3 },
      ],
    },
  ],
};
const FUNNEL_EXAMPLE = {
  success: true,
  statusCode: 200,
  from: 1764633600,
  to: 1767225600,
  window: 604800,
  steps: [
    { event: "Signed up", users: 200, conversion: 1, conversion_from_previous: 1, dropped: 0, median_seconds: null },
    {
      event: "Subscribed",
      users: 50,
      conversion: 0.25,
      conversion_from_previous: 0.25,
      dropped: 150,
      median_seconds: 86400,
    },
  ],
};

const RETENTION_EXAMPLE = {
  success: true,
  statusCode: 200,
  interval: "day",
  tz: "UTC",
  from: 1767225600,
  to: 1767398400,
  periods: 2,
  start_event: "Signed up",
  return_event: "Opened app",
  cohorts: [
    { start: 1767225600, users: 120, returned: [120, 54, 40], percent: [100, 45, 33.3] },
    { start: 1767312000, users: 80, returned: [80, 30, null], percent: [100, 37.5, null] },
  ],
};

export function analyticsRoutes({ analytics, config }: Services): Route[] {
  const funnelInput = (q: z.output<typeof funnelQuery>) => ({
    project: q.project ?? config.defaultProject,
    steps: q.step,
    from: q.from,
    to: q.to,
    window: q.window === undefined ? undefined : q.window * 1000,
  });
  return [
    route({
      method: "GET",
      path: "/v1/analytics/series",
      access: "full",
      project: projectInQuery(config.defaultProject),
      doc: {
        summary: "Events (or users) per hour, day, week or month",
        description:
          "Counts the events matching the filters (those of GET /v1/events) with from <= time < to, in buckets that start at the time zone's hours, midnights, Mondays or first days of the month; " +
          'a point for every bucket, zeros included (the first starts at or before from). With group_by, one line per group, most first, and the rest as "other". Full-access tokens only.',
        query: seriesQuery,
        example: SERIES_EXAMPLE,
      },
      async handle({ request }) {
        const q = validate(seriesQuery, queryOf(request, ["tag"]), "query");
        const answer = await analytics.series({
          project: q.project ?? config.defaultProject,
          channel: q.channel,
          event: q.event,
          tags: q.tag,
          userId: q.user_id,
          q: q.q,
          from: q.from,
          to: q.to,
          interval: q.interval,
          tz: q.tz,
          measure: q.measure,
          groupBy: q.group_by,
          limit: q.limit,
        });
        return ok(apiSeries(answer));
      },
    }),
    route({
      method: "GET",
      path: "/v1/analytics/funnel",
      access: "full",
      project: projectInQuery(config.defaultProject),
      doc: {
        summary: "A funnel",
        description:
          "A user reaches step k with events of steps 1..k at t1 <= t2 <= ... <= tk, from <= t1 < to and tk - t1 <= window; events without user_id do not count. " +
          "Per step: its users, conversion from step 1 and from the step before, the users who dropped since the step before, and the median seconds from the step before. Full-access tokens only.",
        query: funnelQuery,
        example: FUNNEL_EXAMPLE,
      },
      async handle({ request }) {
        const q = validate(funnelQuery, queryOf(request, ["step"]), "query");
        return ok(apiFunnel(await analytics.funnel(funnelInput(q))));
      },
    }),
    route({
      method: "GET",
      path: "/v1/analytics/retention",
      access: "full",
      project: projectInQuery(config.defaultProject),
      doc: {
        summary: "Retention by cohort",
        description:
          "Cohorts are the periods (days or weeks from Monday, in tz) that overlap from … to: a cohort's users did start_event in its period. " +
          "For each cohort, returned[k] counts those who did return_event in the k-th period after it (0: its own), with percent of the cohort; null for a period not begun yet. " +
          "The filters (those of GET /v1/analytics/series) apply to both events; events without user_id do not count. Full-access tokens only.",
        query: retentionQuery,
        example: RETENTION_EXAMPLE,
      },
      async handle({ request }) {
        const q = validate(retentionQuery, queryOf(request, ["tag"]), "query");
        const answer = await analytics.retention({
          project: q.project ?? config.defaultProject,
          startEvent: q.start_event,
          returnEvent: q.return_event,
          interval: q.interval,
          periods: q.periods,
          from: q.from,
          to: q.to,
          tz: q.tz,
          channel: q.channel,
          tags: q.tag,
          userId: q.user_id,
          q: q.q,
        });
        return ok(apiRetention(answer));
      },
    }),
    route({
      method: "GET",
      path: "/v1/analytics/funnel/dropped",
      access: "full",
      project: projectInQuery(config.defaultProject),
      doc: {
        summary: "The users who dropped at a step of a funnel",
        description:
          "The users who reached the step before `at` but not `at`, by id, a page at a time behind next_cursor. Full-access tokens only.",
        query: droppedQuery,
        example: { success: true, statusCode: 200, at: 2, users: ["user-17", "user-42"], next_cursor: null },
      },
      async handle({ request }) {
        const q = validate(droppedQuery, queryOf(request, ["step"]), "query");
        const page = await analytics.funnelDropped({ ...funnelInput(q), at: q.at, cursor: q.cursor, limit: q.limit });
        return ok({ at: page.at, users: page.users, next_cursor: page.nextCursor });
      },
    }),
  ];
}
