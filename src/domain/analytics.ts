// Questions about a project's events, for the API and the dashboard alike: how many events (or
// distinct users) per hour, day, week or month in a time zone, whole or split by channel, name or a
// tag's value; and funnels, with the users who dropped at each step. Parameters are checked here
// (a 400 names the parameter as the API spells it); the store answers on the read path.
import { type FieldIssue, NotFound, ValidationError } from "../errors.ts";
import type { FunnelStep, GroupBy, Interval, Measure, SeriesLine } from "../model/analytics.ts";
import type { EventFilter } from "../model/filter.ts";
import type { Store } from "../store/store.ts";
import { bucketStarts, zoneName } from "./calendar.ts";
import { type FeedService, parseTagFilter } from "./feed.ts";
import { requireProject } from "./projects.ts";
import { isTagKey } from "./input-fields.ts";

export const INTERVALS: Interval[] = ["hour", "day", "week", "month"];
export const MEASURES: Measure[] = ["events", "users"];
export const MAX_BUCKETS = 10_000;
export const MAX_STEPS = 10;
export const DEFAULT_GROUPS = 10;
export const MAX_GROUPS = 100;
/**
 * A split series' lines hold at most this many points in all (buckets times the lines: the groups
 * kept, "other" and the events without the tag). Its answer is built and written on the event loop,
 * at about 0.2 µs a point: 100 groups by hour over 10,000 buckets (a million points, 23 MB of JSON)
 * held it for 200 ms.
 */
export const MAX_POINTS = 100_000;
export const DEFAULT_RANGE_MS = 30 * 86_400_000;
export const DEFAULT_WINDOW_MS = 7 * 86_400_000;
export const MAX_WINDOW_MS = 366 * 86_400_000;
export const DROPPED_PAGE = 100;
export const MAX_DROPPED_PAGE = 1000;
/** Times are after 1970 (as events are) and before the year 5138 (Unix seconds of 11 digits). */
const LATEST = 1e14;

/** A series, asked with the API's names for things (times in Unix ms). */
export type SeriesInput = {
  project: string;
  channel?: string;
  event?: string;
  /** "key:value" pairs; every one must match. */
  tags?: string[];
  userId?: string;
  q?: string;
  from?: number;
  to?: number;
  interval?: string;
  tz?: string;
  measure?: string;
  /** "channel", "event" or "tag:KEY". */
  groupBy?: string;
  limit?: number;
};

export type SeriesPoint = { t: number; value: number };

/** A line of the answer: `group` null for the whole (or, split by a tag, the events without it); `other` for the groups past the limit. */
export type Series = { group: string | null; other: boolean; total: number; points: SeriesPoint[] };

export type SeriesAnswer = {
  interval: Interval;
  tz: string;
  measure: Measure;
  groupBy: string | null;
  from: number;
  to: number;
  series: Series[];
};

export type FunnelStepInput = { event: string; channel?: string; tags?: string[] };

export type FunnelInput = {
  project: string;
  steps: (string | FunnelStepInput)[];
  from?: number;
  to?: number;
  window?: number;
};

export type FunnelStepAnswer = {
  event: string;
  channel: string | null;
  tags: string[];
  users: number;
  /** Of the users of step 1 (0 when it has none). */
  conversion: number;
  /** Of the users of the step before (1 for step 1 with users, 0 without). */
  conversionFromPrevious: number;
  /** The users of the step before who are not here (0 for step 1). */
  dropped: number;
  /** Median ms from the step before (null for step 1, and when nobody reached it). */
  medianMs: number | null;
};

export type FunnelAnswer = { from: number; to: number; window: number; steps: FunnelStepAnswer[] };

export type DroppedInput = FunnelInput & { at: number; cursor?: string; limit?: number };

export const RETENTION_INTERVALS: Interval[] = ["day", "week"];
export const DEFAULT_PERIODS = 7;
export const MAX_PERIODS = 90;
/** A retention grid holds at most this many cells (cohorts times their periods). */
export const MAX_CELLS = 20_000;

/** Retention, asked with the API's names for things (times in Unix ms); the filters apply to both events. */
export type RetentionInput = Omit<SeriesInput, "event" | "measure" | "groupBy" | "limit"> & {
  startEvent: string;
  returnEvent: string;
  periods?: number;
};

/** A cohort: its period's start, its users, and per period from 0 (its own) how many came back; null for a period not begun yet. */
export type Cohort = { start: number; users: number; returned: (number | null)[] };

export type RetentionAnswer = {
  interval: Interval;
  tz: string;
  from: number;
  to: number;
  periods: number;
  startEvent: string;
  returnEvent: string;
  cohorts: Cohort[];
};

export type DroppedPage = { at: number; users: string[]; nextCursor: string | null };

/** The share of a cohort's users (percent, to one decimal) that `returned` is; 0 of a cohort of none. */
export const retentionPercent = (returned: number, users: number): number =>
  users ? Math.round((1000 * returned) / users) / 10 : 0;

const issue = (path: string, message: string): FieldIssue => ({ path, type: "custom", message: `${path}: ${message}` });

/** Checks what was asked; the first problem of each parameter is kept. */
class Issues {
  readonly list: FieldIssue[] = [];
  add(path: string, message: string): void {
    if (!this.list.some((i) => i.path === path)) this.list.push(issue(path, message));
  }
  throwIfAny(): void {
    if (this.list.length) throw new ValidationError(this.list, "query");
  }
}

/** from and to (Unix ms) with their defaults (the last 30 days, to now), checked. */
function range(
  issues: Issues,
  from: number | undefined,
  to: number | undefined,
  now: number,
): { from: number; to: number } {
  const end = Math.round(to ?? now);
  const start = Math.round(from ?? end - DEFAULT_RANGE_MS);
  for (const [name, t] of [
    ["from", start],
    ["to", end],
  ] as const) {
    if (!Number.isFinite(t) || t < 0 || t >= LATEST)
      issues.add(name, "must be Unix seconds after 1970 and before the year 5138");
  }
  if (start >= end) issues.add("from", `must be before to (from ${start / 1000}, to ${end / 1000})`);
  return { from: start, to: end };
}

function parseGroupBy(issues: Issues, text: string | undefined): GroupBy | null {
  if (text === undefined || text === "") return null;
  if (text === "channel" || text === "event") return { by: text };
  if (text.startsWith("tag:") && isTagKey(text.slice(4))) return { by: "tag", key: text.slice(4) };
  issues.add(
    "group_by",
    `must be channel, event or tag:KEY (a tag key of lowercase letters, digits or dashes, as in tag:plan); got ${JSON.stringify(text.slice(0, 80))}`,
  );
  return null;
}

/** The series' plan: what the store is asked, and the buckets' starts (the first may be before `from`). */
export type SeriesPlan = {
  answer: Omit<SeriesAnswer, "series">;
  starts: number[];
  bounds: number[];
  groupBy: GroupBy | null;
  limit: number;
  measure: Measure;
};

/** Checks a series' parameters (all of them at once) and works out its buckets; throws a 400 naming each bad one. */
export function planSeries(input: SeriesInput, now: number): SeriesPlan {
  const issues = new Issues();
  const interval = (input.interval ?? "day") as Interval;
  if (!INTERVALS.includes(interval))
    issues.add(
      "interval",
      `must be hour, day, week or month; got ${JSON.stringify(String(input.interval).slice(0, 40))}`,
    );
  const measure = (input.measure ?? "events") as Measure;
  if (!MEASURES.includes(measure))
    issues.add("measure", `must be events or users; got ${JSON.stringify(String(input.measure).slice(0, 40))}`);
  const tz = zoneName(input.tz ?? "UTC");
  if (!tz)
    issues.add(
      "tz",
      `${JSON.stringify(String(input.tz).slice(0, 60))} is not a time zone; use an IANA name such as Europe/Paris or America/New_York, or UTC`,
    );
  const groupBy = parseGroupBy(issues, input.groupBy);
  const limit = input.limit ?? DEFAULT_GROUPS;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_GROUPS)
    issues.add("limit", `must be a whole number from 1 to ${MAX_GROUPS}`);
  const { from, to } = range(issues, input.from, input.to, now);
  issues.throwIfAny();
  const starts = bucketStarts(from, to, interval, tz!, MAX_BUCKETS);
  if (!starts) {
    issues.add(
      "interval",
      `from ${from / 1000} to ${to / 1000} makes more than ${MAX_BUCKETS.toLocaleString("en-US")} buckets of ${interval === "hour" ? "an" : "a"} ${interval}; choose a longer interval or a shorter range`,
    );
    issues.throwIfAny();
  }
  const buckets = starts!.length;
  // At most MAX_BUCKETS buckets leave room for 8 groups at least.
  if (groupBy && buckets * (limit + 2) > MAX_POINTS) {
    issues.add(
      "limit",
      `must be at most ${Math.floor(MAX_POINTS / buckets) - 2} with ${buckets.toLocaleString("en-US")} buckets of ${interval === "hour" ? "an" : "a"} ${interval}: a split series holds at most ${MAX_POINTS.toLocaleString("en-US")} points (buckets times lines); keep fewer groups, or choose a longer interval or a shorter range`,
    );
    issues.throwIfAny();
  }
  const bounds = [from, ...starts!.slice(1), to];
  return {
    answer: { interval, tz: tz!, measure, groupBy: groupBy ? (input.groupBy as string) : null, from, to },
    starts: starts!,
    bounds,
    groupBy,
    limit,
    measure,
  };
}

type Steps = { steps: FunnelStep[]; answer: Pick<FunnelStepAnswer, "event" | "channel" | "tags">[] };

function planSteps(issues: Issues, input: FunnelInput["steps"]): Steps {
  if (input.length < 2 || input.length > MAX_STEPS)
    issues.add("step", `a funnel has 2 to ${MAX_STEPS} steps; got ${input.length}`);
  const steps: FunnelStep[] = [];
  const answer: Steps["answer"] = [];
  for (const step of input) {
    const { event, channel, tags = [] } = typeof step === "string" ? { event: step } : step;
    if (typeof event !== "string" || !event.length || event.length > 200 || event.includes("\u0000"))
      issues.add("step", "each step is an event name of 1 to 200 characters");
    steps.push({ event, channel: channel || undefined, tags: [...new Set(tags)].map(parseTagFilter) });
    answer.push({ event, channel: channel || null, tags });
  }
  return { steps, answer };
}

export function analyticsService(store: Store, feed: FeedService) {
  /** The filter of a series, its names resolved (an unknown project or channel is a 404). */
  async function filterOf(input: SeriesInput): Promise<EventFilter & { projectId: number }> {
    const filter = await feed.filterOf({
      project: input.project,
      channel: input.channel,
      event: input.event,
      userId: input.userId,
      tags: input.tags,
      q: input.q,
    });
    return { ...filter, projectId: filter.projectId! };
  }

  async function planFunnel(input: FunnelInput, now: number) {
    const issues = new Issues();
    const { steps, answer } = planSteps(issues, input.steps);
    const window = Math.round(input.window ?? DEFAULT_WINDOW_MS);
    if (!Number.isFinite(window) || window < 0 || window > MAX_WINDOW_MS)
      issues.add("window", `must be seconds from 0 to ${MAX_WINDOW_MS / 1000} (366 days)`);
    const { from, to } = range(issues, input.from, input.to, now);
    issues.throwIfAny();
    const project = await requireProject(store, input.project);
    for (const step of steps) {
      if (step.channel && !(await store.projects.findChannel(project.id, step.channel)))
        throw new NotFound(`Channel "${step.channel}" does not exist in project "${project.name}".`);
    }
    return { query: { projectId: project.id, steps, from, to, window }, answer };
  }

  return {
    planSeries,

    async series(input: SeriesInput, now = Date.now()): Promise<SeriesAnswer> {
      const plan = planSeries(input, now);
      const filter = await filterOf(input);
      // Nothing stored holds a NUL character: a filter value with one matches nothing (and is not asked).
      const none = [filter.userId, filter.event, ...(filter.tags ?? []).flat()].some((v) => v?.includes("\u0000"));
      const lines: SeriesLine[] = none
        ? plan.groupBy
          ? []
          : [{ group: null, other: false, total: 0, counts: plan.starts.map(() => 0) }]
        : await store.analytics.series({
            filter,
            bounds: plan.bounds,
            measure: plan.measure,
            groupBy: plan.groupBy,
            limit: plan.limit,
          });
      const series = lines.map((l) => ({
        group: l.group,
        other: l.other,
        total: l.total,
        points: plan.starts.map((t, b) => ({ t, value: l.counts[b] ?? 0 })),
      }));
      return { ...plan.answer, series };
    },

    planFunnel,

    async funnel(input: FunnelInput, now = Date.now()): Promise<FunnelAnswer> {
      const { query, answer } = await planFunnel(input, now);
      const counts = await store.analytics.funnel(query);
      const first = counts[0]?.users ?? 0;
      const steps = answer.map((step, j) => {
        const users = counts[j]?.users ?? 0;
        const before = j ? (counts[j - 1]?.users ?? 0) : users;
        return {
          ...step,
          users,
          conversion: first ? users / first : 0,
          conversionFromPrevious: before ? users / before : 0,
          dropped: j ? before - users : 0,
          medianMs: counts[j]?.medianMs ?? null,
        };
      });
      return { from: query.from, to: query.to, window: query.window, steps };
    },

    planRetention,

    /** Of the users who did the start event in each period, how many did the return event in that period and each after. */
    async retention(input: RetentionInput, now = Date.now()): Promise<RetentionAnswer> {
      const plan = planRetention(input, now);
      const filter = await filterOf({ ...input, event: undefined });
      const counts = await store.analytics.retention({
        filter,
        startEvent: input.startEvent,
        returnEvent: input.returnEvent,
        bounds: plan.bounds,
        cohorts: plan.cohorts,
        periods: plan.periods,
      });
      return {
        interval: plan.interval,
        tz: plan.tz,
        from: plan.from,
        to: plan.to,
        periods: plan.periods,
        startEvent: input.startEvent,
        returnEvent: input.returnEvent,
        cohorts: counts.map((c, i) => ({
          start: plan.bounds[i]!,
          users: c.users,
          returned: c.returned.map((n, k) => (plan.bounds[i + k]! > now ? null : n)),
        })),
      };
    },

    /** The users who reached the step before `at` (1-based) but not `at`, a page at a time by id. */
    async funnelDropped(input: DroppedInput, now = Date.now()): Promise<DroppedPage> {
      const issues = new Issues();
      if (!Number.isInteger(input.at) || input.at < 2 || input.at > Math.max(2, input.steps.length))
        issues.add("at", `must be the number of a step after the first, from 2 to ${Math.max(2, input.steps.length)}`);
      const limit = input.limit ?? DROPPED_PAGE;
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_DROPPED_PAGE)
        issues.add("limit", `must be a whole number from 1 to ${MAX_DROPPED_PAGE}`);
      const after = input.cursor === undefined ? null : decodeUserCursor(input.cursor);
      if (after === undefined) issues.add("cursor", "is not valid; pass next_cursor from the previous page unchanged");
      issues.throwIfAny();
      const { query } = await planFunnel(input, now);
      const users = await store.analytics.dropped({ ...query, step: input.at, after: after ?? null, limit: limit + 1 });
      const page = users.slice(0, limit);
      return {
        at: input.at,
        users: page,
        nextCursor: users.length > limit ? Buffer.from(page.at(-1)!).toString("base64url") : null,
      };
    },
  };
}

/** A retention's periods: the cohorts' (each period of `interval` that overlaps from … to), then `periods` more; checked. */
export function planRetention(input: RetentionInput, now: number) {
  const issues = new Issues();
  const interval = (input.interval ?? "day") as Interval;
  if (!RETENTION_INTERVALS.includes(interval))
    issues.add("interval", `must be day or week; got ${JSON.stringify(String(input.interval).slice(0, 40))}`);
  const tz = zoneName(input.tz ?? "UTC");
  if (!tz)
    issues.add(
      "tz",
      `${JSON.stringify(String(input.tz).slice(0, 60))} is not a time zone; use an IANA name such as Europe/Paris or America/New_York, or UTC`,
    );
  const periods = input.periods ?? DEFAULT_PERIODS;
  if (!Number.isInteger(periods) || periods < 1 || periods > MAX_PERIODS)
    issues.add("periods", `must be a whole number from 1 to ${MAX_PERIODS}`);
  for (const [name, value] of [
    ["start_event", input.startEvent],
    ["return_event", input.returnEvent],
  ] as const) {
    if (typeof value !== "string" || !value.length || value.length > 200 || value.includes("\u0000"))
      issues.add(name, "must be an event name of 1 to 200 characters");
  }
  const { from, to } = range(issues, input.from, input.to, now);
  issues.throwIfAny();
  const step = interval === "day" ? 25 * 3_600_000 : 7 * 86_400_000 + 3_600_000;
  const cohorts = bucketStarts(from, to, interval, tz!, MAX_CELLS);
  if (!cohorts || cohorts.length * (periods + 1) > MAX_CELLS) {
    issues.add(
      "from",
      `from ${from / 1000} to ${to / 1000} makes too many cohorts for ${periods} periods of ${interval === "day" ? "a day" : "a week"}: a grid holds at most ${MAX_CELLS.toLocaleString("en-US")} cells; choose a shorter range or fewer periods`,
    );
    issues.throwIfAny();
  }
  const all = bucketStarts(
    cohorts![0]!,
    cohorts!.at(-1)! + (periods + 2) * step,
    interval,
    tz!,
    cohorts!.length + periods + 4,
  )!;
  const bounds = all.slice(0, cohorts!.length + periods + 1);
  return { interval, tz: tz!, from, to, periods, cohorts: cohorts!.length, bounds };
}

/** The user id a cursor continues after; undefined when it is not one this server made. */
function decodeUserCursor(cursor: string): string | undefined {
  const text =
    cursor.length <= 400 && /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, "base64url").toString() : "";
  return text && Buffer.from(text).toString("base64url") === cursor ? text : undefined;
}

export type AnalyticsService = ReturnType<typeof analyticsService>;
