// Reading events and metrics: filters by name, keyset pagination behind an opaque cursor.
import { BadRequest, ChannelNeedsProject, NotFound } from "../errors.ts";
import type { EventFilter, Position } from "../model/filter.ts";
import type { Store } from "../store/store.ts";
import { eventMatcher } from "./filter.ts";
import { listUsers, type UserPage } from "./user-list.ts";
import { requireProject } from "./projects.ts";
import { searchTerms } from "../store/search-tokens.ts";
import { isTagKey } from "./input-fields.ts";
import type { StoredEvent } from "../model/event.ts";
import type { Metric } from "../model/metric.ts";
import { type HistoryPage, type HistoryQuery, historyPage, type MetricChart, metricChart } from "./metric-history.ts";
import type { Profile, Properties, UserSummary } from "../model/profile.ts";
import type { Project } from "../model/project.ts";

export const MAX_PAGE = 200;
/** A search counts its matches up to this many (reading at most one more); beyond, it says "more than". */
export const SEARCH_COUNT_CAP = 10_000;

export type EventQuery = {
  project?: string;
  channel?: string;
  userId?: string;
  /** The event's name, exactly. */
  event?: string;
  /** "key:value" pairs; every one must match. */
  tags?: string[];
  q?: string;
  /** Unix milliseconds, inclusive. */
  from?: number;
  /** Unix milliseconds, exclusive. */
  to?: number;
  limit?: number;
  cursor?: string;
};

export type EventPage = { events: StoredEvent[]; nextCursor: string | null };

/** How many channels the activity chart shows by name; the rest are "other". */
export const ACTIVITY_TOP = 6;

export type Activity = {
  channels: { channel: string; counts: number[]; total: number }[];
  other: { channels: number; counts: number[]; total: number } | null;
};

export function encodeCursor(p: Position): string {
  return Buffer.from(`${p.ts}:${p.id}`).toString("base64url");
}

export function decodeCursor(cursor: string): Position {
  const m = /^(-?\d+):(\d+)$/.exec(Buffer.from(cursor, "base64url").toString());
  if (!m)
    throw new BadRequest(
      `cursor ${JSON.stringify(cursor.slice(0, 60))} is not valid; pass next_cursor from the previous page unchanged`,
      "invalid_cursor",
    );
  return { ts: Number(m[1]), id: Number(m[2]) };
}

export function parseTagFilter(filter: string): [string, string] {
  const at = filter.indexOf(":");
  // A key no event can have (tag keys are lowercase) would match nothing: say so instead.
  if (at < 1 || !isTagKey(filter.slice(0, at)))
    throw new BadRequest(
      `tag filter ${JSON.stringify(filter.slice(0, 80))} must look like key:value with a key of lowercase letters, digits or dashes, for example tag=plan:pro`,
      "invalid_tag_filter",
    );
  return [filter.slice(0, at), filter.slice(at + 1)];
}

export function feedService(store: Store) {
  /** The query's names resolved: an unknown project or channel is a 404 here, not an empty page. */
  async function resolve(query: EventQuery): Promise<EventFilter> {
    const project = query.project ? await requireProject(store, query.project) : null;
    if (query.channel) {
      if (!project) throw new ChannelNeedsProject();
      if (!(await store.projects.findChannel(project.id, query.channel)))
        throw new NotFound(`Channel "${query.channel}" does not exist in project "${project.name}".`);
    }
    return {
      projectId: project?.id,
      channel: query.channel || undefined,
      userId: query.userId || undefined,
      event: query.event || undefined,
      tags: query.tags && [...new Set(query.tags)].map(parseTagFilter), // a tag asked twice is one condition
      terms: query.q ? searchTerms(query.q) : undefined,
      from: query.from,
      to: query.to,
    };
  }

  return {
    filterOf: resolve,

    /** Newest first by event time. */
    async listEvents(query: EventQuery): Promise<EventPage> {
      const limit = Math.min(Math.max(query.limit ?? 50, 1), MAX_PAGE);
      const filter = await resolve(query);
      // Nothing stored holds a NUL character: a filter value with one matches nothing (and is not asked).
      if ([filter.userId, filter.event, ...(filter.tags ?? []).flat()].some((v) => v?.includes("\u0000")))
        return { events: [], nextCursor: null };
      const rows = await store.events.list({
        ...filter,
        before: query.cursor ? decodeCursor(query.cursor) : undefined,
        limit: limit + 1,
      });
      const events = rows.slice(0, limit);
      const last = events.at(-1);
      return { events, nextCursor: rows.length > limit && last ? encodeCursor(last) : null };
    },

    /**
     * How many events the query matches (its cursor and limit aside), counted up to `cap`: past it,
     * cap + 1, read as "more than cap". A read of its own kind on the read path (store/reads.ts).
     */
    async countEvents(query: EventQuery, cap = SEARCH_COUNT_CAP): Promise<number> {
      const filter = await resolve(query);
      if ([filter.userId, filter.event, ...(filter.tags ?? []).flat()].some((v) => v?.includes("\u0000"))) return 0;
      return store.events.count(filter, cap);
    },

    /** The id of the newest stored event (0 when there is none). */
    newestId(): Promise<number> {
      return store.events.lastId();
    },

    /**
     * What a stream missed: the events matching `filter` among ids (after, through], oldest
     * first, reading at most `limit` events of the filter's project; `through` is how far it read.
     */
    async missed(
      filter: EventFilter,
      after: number,
      through: number,
      limit: number,
    ): Promise<{ events: StoredEvent[]; through: number }> {
      const rows = await store.events.range(filter.projectId, after, through, limit);
      const matches = eventMatcher(filter);
      return { events: rows.filter(matches), through: rows.length < limit ? through : rows.at(-1)!.id };
    },

    async getEvent(id: number): Promise<StoredEvent> {
      const event = await store.events.findById(id);
      if (!event) throw new NotFound(`Event ${id} does not exist.`);
      return event;
    },

    /** An event of one project (a page's URL names both). */
    async eventOf(project: Project, id: number): Promise<StoredEvent> {
      const event = await store.events.findById(id);
      if (!event || event.projectId !== project.id)
        throw new NotFound(`Event ${id} does not exist in project "${project.name}".`);
      return event;
    },

    /**
     * Events per channel per day, for `days` days from `start` (Unix ms), of the events `query`
     * matches (a feed's filters; the project is `project`): the `top` channels with the most in
     * the window, most first, and the rest summed as `other` (null when there is no rest).
     */
    async activity(
      project: Project,
      start: number,
      days: number,
      query: Omit<EventQuery, "project"> = {},
      top = ACTIVITY_TOP,
    ): Promise<Activity> {
      const filter = await resolve({ ...query, project: project.name });
      // Nothing stored holds a NUL character: a filter value with one matches nothing (and is not asked).
      const none = [filter.userId, filter.event, ...(filter.tags ?? []).flat()].some((v) => v?.includes("\u0000"));
      const rows = none ? [] : await store.events.activity(project.id, start, days, filter);
      const counted = rows
        .map((r) => ({ ...r, total: r.counts.reduce((a, b) => a + b, 0) }))
        .filter((r) => r.total > 0);
      counted.sort((a, b) => b.total - a.total || (a.channel < b.channel ? -1 : 1));
      // "Other" stands for two channels or more: a single one is shown under its own name.
      const rest = counted.length === top + 1 ? [] : counted.slice(top);
      const other = rest.length
        ? {
            channels: rest.length,
            counts: Array.from({ length: days }, (_, d) => rest.reduce((sum, r) => sum + r.counts[d]!, 0)),
            total: rest.reduce((sum, r) => sum + r.total, 0),
          }
        : null;
      return { channels: rest.length ? counted.slice(0, top) : counted, other };
    },

    /**
     * A user's properties, groups, and when they were first and last seen (as the users list
     * counts it: their events and identify calls); `summary` null when nothing knows the id.
     */
    async user(
      project: Project,
      userId: string,
    ): Promise<{
      profile: Profile | null;
      groups: { groupId: string; properties: Properties }[];
      summary: UserSummary | null;
    }> {
      const [profile, groups, summary] = await Promise.all([
        store.profiles.find(project.id, userId),
        store.profiles.groupsOf(project.id, userId),
        store.profiles.summary(project.id, userId),
      ]);
      return { profile, groups, summary };
    },

    /** The project's users, newest activity first, searched with `q` (domain/user-list.ts). */
    users(project: Project, query: { q?: string; cursor?: string; limit?: number }): Promise<UserPage> {
      return listUsers(store, project, query);
    },

    /** The users of the project named `projectName` (the read API). */
    async usersOf(projectName: string, query: { q?: string; cursor?: string; limit?: number }): Promise<UserPage> {
      return listUsers(store, await requireProject(store, projectName), query);
    },

    /** One user of the project named `projectName`, as the list shows them; NotFound when nothing knows the id. */
    async userOf(projectName: string, userId: string): Promise<UserSummary> {
      const project = await requireProject(store, projectName);
      const summary = await store.profiles.summary(project.id, userId);
      if (!summary)
        throw new NotFound(
          `No user "${userId}" in project "${project.name}": no event carries this user id, and it was never identified.`,
        );
      return summary;
    },

    async listMetrics(projectName: string): Promise<Metric[]> {
      return store.metrics.list((await requireProject(store, projectName)).id);
    },

    /** A page of a metric's history, its points or spans of them (domain/metric-history.ts). */
    metricHistory(query: HistoryQuery): Promise<HistoryPage> {
      return historyPage(store, query);
    },

    /** What a metric's page draws over [since, until] (domain/metric-history.ts). */
    metricChart(projectName: string, title: string, since: number, until: number): Promise<MetricChart> {
      return metricChart(store, projectName, title, since, until);
    },
  };
}

export type FeedService = ReturnType<typeof feedService>;
