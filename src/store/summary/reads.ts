// What the summaries' answers (series.ts, activity.ts, retention.ts) read through each store: the
// reads' interface and the shapes they take, and how a bucket splits into whole hours and the parts
// of an hour at its ends. Apart from series.ts, so the modules that use them do not import each other.
import type { GroupBy, RetentionCounts, RetentionQuery, SeriesLine } from "../../model/analytics.ts";
import type { EventFilter } from "../../model/filter.ts";
import { type ActivityKind, HOUR } from "./deltas.ts";

export type Group = string | null;
/** A span of time: [lo, hi), in hours since 1970 for the summaries, in ms for the events. */
export type Span = [number, number];

/**
 * An activity row as read: its value (the group), month, user, its `days` bits and the day columns
 * asked for, in the order asked.
 */
export type ActivityRow = [string, number, string, number, ...number[]];

export type ActivityAsk = {
  projectId: number;
  kind: ActivityKind;
  key: string;
  /** One value, or every value of the kind and key. */
  value?: string;
  /** First and last month. */
  months: Span;
  /** Day columns (0 … 30) to read beside `days`. */
  columns: number[];
  /** Only these values (a second pass for the groups past the limit). */
  only?: Set<string>;
};

/**
 * Where a month's hours fall among the buckets: a whole day in one bucket (`day`, its bucket), or a
 * day the buckets cut (-2: its hours in `slot`); -1 outside every bucket.
 */
export type MonthMap = { day: Int32Array; slot: Int32Array };

/**
 * Distinct users to count from the activity rows of a kind, key and value (or every value, a group
 * each), in buckets mapped month by month, and from the events of the parts of an hour at their ends.
 */
export type UsersAsk = {
  projectId: number;
  kind: ActivityKind;
  key: string;
  value?: string;
  n: number;
  maps: Map<number, MonthMap>;
  rawSpans: Span[];
  rawOf: number[];
  filter: EventFilter & { projectId: number };
  groupBy: GroupBy | null;
  limit: number;
};

/** What a store reads for the summaries to answer: plain range reads, each dialect's SQL. */
export interface SummaryReads {
  /** False while the project's summaries are being built: its questions read the events meanwhile. */
  ready(projectId: number): Promise<boolean>;
  /** Whether a tag key's values (kind 1) or the event names (kind 2, key "") are too many to be summarized. */
  wide(projectId: number, kind: 1 | 2, key: string): Promise<boolean>;
  channelId(projectId: number, name: string): Promise<number | null>;
  /** Events in each span of hours, per channel (by name), per name, or all together (one group, null). */
  counts(
    q: { projectId: number; channelId?: number; name?: string; by: "channel" | "event" | null },
    spans: Span[],
  ): Promise<Map<Group, number>[]>;
  /** Events in each span of hours per value of a tag key (or of one value). */
  tagCounts(q: { projectId: number; key: string; value?: string }, spans: Span[]): Promise<Map<string, number>[]>;
  /** The activity rows asked for, handed to `each` a page at a time. */
  activity(q: ActivityAsk, each: (rows: ActivityRow[]) => void): Promise<void>;
  /** The events of `filter` in each span of ms, counted per group (a tag's value, null without it). */
  rawCounts(
    filter: EventFilter & { projectId: number },
    by: GroupBy | null,
    spans: Span[],
  ): Promise<Map<Group, number>[]>;
  /**
   * The users counted by the database (a store whose rows are read on the thread that acknowledges
   * writes: only the counts come back); without it, the rows are read and counted here.
   */
  users?(ask: UsersAsk): Promise<SeriesLine[]>;
  /** Retention counted by the database (as `users`), its periods mapped month by month; null when it cannot (too many periods). */
  cohorts?(ask: RetentionQuery & { maps: Map<number, MonthMap> }): Promise<RetentionCounts | null>;
  /** The users of the events of `filter` in each span of ms, with their group: [span index, group, user]. */
  rawUsers(
    filter: EventFilter & { projectId: number },
    by: GroupBy | null,
    spans: Span[],
  ): Promise<[number, Group, string][]>;
}

/** A bucket as the summaries answer it: whole hours, and the part of an hour at each end (ms). */
export type Cover = { hours: Span | null; raw: Span[] };

export function cover(lo: number, hi: number): Cover {
  const h0 = Math.ceil(lo / HOUR);
  const h1 = Math.floor(hi / HOUR);
  if (h0 >= h1) return { hours: null, raw: [[lo, hi]] };
  const raw: Span[] = [];
  if (lo < h0 * HOUR) raw.push([lo, h0 * HOUR]);
  if (h1 * HOUR < hi) raw.push([h1 * HOUR, hi]);
  return { hours: [h0, h1], raw };
}
