// What events add to the summaries, the same for both stores: a count per hour × channel × name, a
// count per hour × tag value, and who was active when (per UTC month and user, a bit per day and a
// bit per hour). Worked out here for a whole group commit at once, so each summary row a batch
// touches is written once, however many of its events fall in it (store/sqlite/summaries.ts applies
// them; PostgreSQL's trigger does the same in SQL: drizzle/pg/0008_summaries.sql).
import type { Tags } from "../../model/event.ts";
import { tagText } from "../../model/event.ts";

export const HOUR = 3_600_000;

/**
 * A tag key (or a project's event names) with more distinct values than this is "wide": its
 * summaries stop growing and questions about it read the events themselves. A key such as a
 * request id would otherwise add a summary row per event.
 */
export const MAX_VALUES = 1000;

/** What an activity row is about: every event of the user, events with one tag value, or events of one name. */
export const ACTIVITY = { all: 0, tag: 1, event: 2 } as const;
export type ActivityKind = (typeof ACTIVITY)[keyof typeof ACTIVITY];

/** The summaries' kinds of values, as summary_keys and summary_values name them. */
export const VALUES = { tag: 1, event: 2 } as const;

/** The summaries' tables, with their keys. */
export const SUMMARY_TABLES: Record<string, string> = {
  event_counts: "project_id, hour, channel_id, event",
  tag_counts: "project_id, key, value, hour",
  activity: "project_id, kind, key, value, month, user_id",
  summary_keys: "project_id, kind, key",
  summary_values: "project_id, kind, key, value",
};

/** Days in a month, at most: an activity row holds a bit per day (days) and 24 bits per day (d0 … d30). */
export const MONTH_DAYS = 31;

/** A UTC time as the summaries place it: its hour since 1970, its month (year × 12 + month from 0), day of the month from 0 and hour of the day. */
export type Placed = { hour: number; month: number; day: number; hourOfDay: number };

/** Civil date of a day since 1970 (proleptic Gregorian, UTC): H. Hinnant's days_from_civil, inverted. */
export function civil(dayIndex: number): { year: number; month: number; day: number } {
  const z = dayIndex + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month: month - 1, day };
}

export function place(ts: number): Placed {
  const hour = Math.floor(ts / HOUR);
  const dayIndex = Math.floor(hour / 24);
  const { year, month, day } = civil(dayIndex);
  return { hour, month: year * 12 + month, day: day - 1, hourOfDay: hour - dayIndex * 24 };
}

/** The first instant of a month index (UTC ms). */
export const monthStart = (month: number): number => Date.UTC(Math.floor(month / 12), month % 12, 1);

/** An event as the summaries see it. */
export type Summarized = {
  projectId: number;
  channelId: number;
  name: string;
  ts: number;
  userId: string | null;
  tags: Tags | null;
};

/** An event being deleted, as its summaries need it. */
export type Victim = Summarized & { id: number };

/** A build under way (summary_builds): store/sqlite/summaries.ts says how it goes. */
export type Build = {
  projectId: number;
  through: number;
  counted: number;
  activeThrough: number | null;
  activeUser: string | null;
  activeTs: number | null;
  activeId: number | null;
  activeDone: number;
};

export type CountDelta = { projectId: number; hour: number; channelId: number; name: string; n: number };
export type TagDelta = { projectId: number; key: string; value: string; hour: number; n: number };
export type ActivityDelta = {
  projectId: number;
  kind: ActivityKind;
  key: string;
  value: string;
  month: number;
  userId: string;
  days: number;
  /** A day's hours, by day of the month (d0 … d30); zero where the user did nothing. */
  d: number[];
};

/** Which summaries: the counts (per hour of each channel and name, of each tag value), who was active, or both. */
export type Parts = "all" | "counts" | "activity";

/** Summary rows to add, merged: one per row touched, whatever the number of events in it. */
export class SummaryDeltas {
  readonly counts = new Map<string, CountDelta>();
  readonly tags = new Map<string, TagDelta>();
  /** The activity rows, each once. */
  readonly activity: ActivityDelta[] = [];
  /** The rows by project and user, then by what they are about and their month (a user's events come together). */
  private readonly byUser = new Map<string, Map<string, ActivityDelta>>();
  private lastUser = "";
  private lastRows: Map<string, ActivityDelta> | null = null;

  get empty(): boolean {
    return this.counts.size === 0 && this.tags.size === 0 && this.activity.length === 0;
  }

  /** What `e` adds (`n` of it: -1 takes a deleted event's counts out), to the counts, the activity or both. */
  add(e: Summarized, n = 1, parts: Parts = "all"): void {
    const at = place(e.ts);
    if (parts !== "activity") this.count(e, n, at);
    if (e.userId === null || n < 0 || parts === "counts") return;
    this.active(e.projectId, ACTIVITY.all, "", "", e.userId, at);
    this.active(e.projectId, ACTIVITY.event, "", e.name, e.userId, at);
    if (e.tags)
      for (const key in e.tags) this.active(e.projectId, ACTIVITY.tag, key, tagText(e.tags[key]!), e.userId, at);
  }

  private count(e: Summarized, n: number, at: Placed): void {
    // The name is last in its key (and a tag's value in its): no two rows share a key.
    const ck = `${e.projectId}:${at.hour}:${e.channelId}:${e.name}`;
    const count = this.counts.get(ck);
    if (count) count.n += n;
    else this.counts.set(ck, { projectId: e.projectId, hour: at.hour, channelId: e.channelId, name: e.name, n });
    if (e.tags) {
      for (const key in e.tags) {
        const value = tagText(e.tags[key]!);
        const tk = `${e.projectId}:${at.hour}:${key}:${value}`;
        const tag = this.tags.get(tk);
        if (tag) tag.n += n;
        else this.tags.set(tk, { projectId: e.projectId, key, value, hour: at.hour, n });
      }
    }
  }

  private active(projectId: number, kind: ActivityKind, key: string, value: string, userId: string, at: Placed): void {
    const user = `${projectId}:${userId}`;
    let rows = this.lastRows;
    if (user !== this.lastUser || !rows) {
      rows = this.byUser.get(user) ?? null;
      if (!rows) this.byUser.set(user, (rows = new Map()));
      [this.lastUser, this.lastRows] = [user, rows];
    }
    // A tag key has no ":" (lowercase letters, digits and dashes): the value, last, cannot be mistaken.
    const k = `${kind}:${at.month}:${key}:${value}`;
    let row = rows.get(k);
    if (!row) {
      row = { projectId, kind, key, value, month: at.month, userId, days: 0, d: new Array<number>(MONTH_DAYS).fill(0) };
      rows.set(k, row);
      this.activity.push(row);
    }
    row.days |= 1 << at.day;
    row.d[at.day]! |= 1 << at.hourOfDay;
  }
}
