// Questions asked of a project's events: counts per span of time (a series), and funnels. What
// the store is asked is plain data (it crosses to a reader process), in Unix milliseconds; the
// calendar (time zones, days, months) is worked out before, as the buckets' bounds.
import type { EventFilter } from "./filter.ts";

export type Interval = "hour" | "day" | "week" | "month";

/** Count the events, or the distinct users among them (events without a user do not count then). */
export type Measure = "events" | "users";

/** What a series is split by: an event's channel, its name, or its value of one tag. */
export type GroupBy = { by: "channel" } | { by: "event" } | { by: "tag"; key: string };

/**
 * A series as the store answers it: the events `filter` matches (its project always set), counted
 * in the buckets between consecutive `bounds` (ascending Unix ms: bucket i holds bounds[i] <= ts <
 * bounds[i + 1]), whole or split by `groupBy`, keeping the `limit` groups with the most.
 */
export type SeriesQuery = {
  filter: EventFilter & { projectId: number };
  bounds: number[];
  measure: Measure;
  groupBy: GroupBy | null;
  limit: number;
  /** Count the events themselves, not their summaries (what a test holds the summaries' answers equal to). */
  raw?: boolean;
};

/**
 * One line of a series: `group` null for the whole (or, split by a tag, the events without it);
 * `other` for the groups past the limit, together. `total` is over the whole range (distinct users
 * over the range, for users: not the sum of the buckets).
 */
export type SeriesLine = { group: string | null; other: boolean; total: number; counts: number[] };

/** One step of a funnel: events of this name (in this channel, with these tags, when given). */
export type FunnelStep = { event: string; channel?: string; tags?: [string, string][] };

/**
 * A funnel: a user reaches step k when they have events for steps 1..k at t1 <= t2 <= ... <= tk,
 * with from <= t1 < to and tk - t1 <= window (ms); one event counts for one step. Events without a
 * user do not count. At equal times, an event of only the earlier step comes first, one of only
 * the later step last, and events of both in the order they were stored.
 */
export type FunnelQuery = {
  projectId: number;
  steps: FunnelStep[];
  from: number;
  to: number;
  window: number;
  /** Walk every event of the range at once, not the latest first (what a test holds the usual walk equal to). */
  raw?: boolean;
  /** How many events of the steps the first span back holds, about (a test's few events walk back in rounds too). */
  spanEvents?: number;
};

/**
 * Per step: the users who reached it, and the median of the time each took from the step before
 * (ms; null for the first step and when nobody reached it), in the chain that reached the step with
 * the latest start (the earliest events of that chain).
 */
export type FunnelCounts = { users: number; medianMs: number | null }[];

/** The users who reached step `step - 1` (1-based, at least 2) but not `step`, by id after `after`, at most `limit`. */
export type DroppedQuery = FunnelQuery & { step: number; after: string | null; limit: number };

/**
 * Retention: the users who did `startEvent` in each of the first `cohorts` periods (a cohort each),
 * and of them, those who did `returnEvent` in that period and each of the `periods` after it. The
 * filter (its project always set) applies to both events. `bounds` are the periods' edges
 * (ascending Unix ms; period i holds bounds[i] <= ts < bounds[i + 1]): cohorts + periods of them.
 */
export type RetentionQuery = {
  filter: EventFilter & { projectId: number };
  startEvent: string;
  returnEvent: string;
  bounds: number[];
  cohorts: number;
  periods: number;
  /** Read the events themselves, not their summaries (what a test holds the summaries' answers equal to). */
  raw?: boolean;
};

/** Per cohort: its users, and per period k from 0 (its own) to `periods`, those of them who did the return event then. */
export type RetentionCounts = { users: number; returned: number[] }[];
