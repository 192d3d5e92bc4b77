// Series on SQLite: events counted per bucket of time, in a reader process (store/reads.ts). No
// GROUP BY over the range: SQLite sorts for one, which costs more than counting. Counts come from
// the index that answers the filter, one bucket at a time (an index range per bucket: nothing but
// the index is read); a split by channel or by a tag's value counts each channel or value that
// way, when nothing else narrows the events. Whatever needs the events themselves (distinct users,
// a split by name, a split under filters) reads the matching events once, in one statement, and
// counts them here.
import { and, sql } from "drizzle-orm";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import type {
  DroppedQuery,
  FunnelQuery,
  RetentionCounts,
  RetentionQuery,
  SeriesLine,
  SeriesQuery,
} from "../../model/analytics.ts";
import type { EventFilter } from "../../model/filter.ts";
import { tagIs } from "../feed.ts";
import { bucketOf, combine, DistinctUsers, narrowsEvents, withUntagged, zeros } from "../series.ts";
import type { Db } from "./db.ts";
import { funnelStore } from "./funnel.ts";
import { eventSource, groupColumn, type Source } from "./event-source.ts";
import { eventTags } from "./manual-tables.ts";
import { summaryReads } from "./summary-reads.ts";
import { summarySeries } from "../summary/series.ts";
import { cohortCounts, summaryRetention, type UserPeriods } from "../summary/retention.ts";

const dialect = new SQLiteSyncDialect();
type Bind = string | number | null;

/** Past this many, a tag's values are not counted one by one: its events are read once instead. */
const MAX_VALUES = 1000;

export function analyticsStore(db: Db, searching: () => Db) {
  const sourceOf = (filter: EventFilter, needsEvents: boolean) => eventSource(db, searching, filter, needsEvents);

  /** Per bucket: few events are read and placed, many are counted a bucket at a time. */
  function countLine(source: Source, bounds: number[]): { total: number; counts: number[] } {
    const n = bounds.length - 1;
    const where = dialect.sqlToQuery(source.where);
    const params = where.params as Bind[];
    const client = source.db.$client;
    const body = `FROM ${source.from} WHERE ${where.sql} AND ${source.ts} >= ? AND ${source.ts} < ?`;
    const count = client.prepare<{ n: number }, Bind[]>(`SELECT count(*) AS n ${body}`);
    const total = count.get(...params, bounds[0]!, bounds[n]!)!.n;
    const counts = zeros(n);
    if (total === 0) return { total, counts };
    if (total <= n * 4) {
      const times = client.prepare(`SELECT ${source.ts} ${body}`).values(...params, bounds[0]!, bounds[n]!) as [
        number,
      ][];
      for (const [ts] of times) counts[bucketOf(bounds, ts)]!++;
      return { total, counts };
    }
    for (let b = 0; b < n; b++) counts[b] = count.get(...params, bounds[b]!, bounds[b + 1]!)!.n;
    return { total, counts };
  }

  /** The events read once: their time, their group and their user, counted per group and bucket here. */
  function scan(q: SeriesQuery): SeriesLine[] {
    const n = q.bounds.length - 1;
    const users = q.measure === "users";
    const source = sourceOf(q.filter, true);
    const where = dialect.sqlToQuery(and(source.where, users ? sql`events.user_id IS NOT NULL` : undefined)!);
    const group = groupColumn(q.groupBy);
    // Row after row (a word every event holds matches millions: held at once, they took 600 MB).
    const rows = source.db.$client
      .prepare<{ ts: number; g: string | number | null; u: string | null }, Bind[]>(
        `SELECT ${source.ts} AS ts, ${group} AS g, events.user_id AS u FROM ${source.from} WHERE ${where.sql} AND ${source.ts} >= ? AND ${source.ts} < ?`,
      )
      .iterate(...(where.params as Bind[]), q.bounds[0]!, q.bounds[n]!);
    const names = q.groupBy?.by === "channel" ? channelNames(q.filter.projectId) : null;
    const key = (g: string | number | null) =>
      g === null ? null : names ? (names.get(g as number) ?? null) : String(g);
    let lines: SeriesLine[];
    if (users) {
      const distinct = new DistinctUsers();
      for (const { ts, g, u } of rows) distinct.add(bucketOf(q.bounds, ts), key(g), u!);
      lines = distinct.lines(n, q.groupBy ? q.limit : 1);
    } else {
      const perGroup = new Map<string | null, { group: string | null; total: number; counts: number[] }>();
      for (const { ts, g } of rows) {
        const k = key(g);
        let line = perGroup.get(k);
        if (!line) perGroup.set(k, (line = { group: k, total: 0, counts: zeros(n) }));
        line.total++;
        line.counts[bucketOf(q.bounds, ts)]!++;
      }
      lines = combine([...perGroup.values()], q.groupBy ? q.limit : 1);
    }
    return q.groupBy || lines.length ? lines : [{ group: null, other: false, total: 0, counts: zeros(n) }];
  }

  function channelNames(projectId: number): Map<number, string> {
    return new Map(
      db.$client.prepare("SELECT id, name FROM channels WHERE project_id = ?").values(projectId) as [number, string][],
    );
  }

  /** Split by channel: each channel's events counted from its own index (channel, time). */
  function byChannel(q: SeriesQuery): SeriesLine[] {
    const list = [...channelNames(q.filter.projectId)].filter(
      ([, name]) => q.filter.channel === undefined || name === q.filter.channel,
    );
    const lines = list.map(([id, name]) => ({
      group: name,
      ...countLine({ db, from: "events", where: sql`events.channel_id = ${id}`, ts: "events.ts" }, q.bounds),
    }));
    return combine(lines, q.limit);
  }

  /** Split by a tag: each value's events counted from the tag index; the events without the tag are the rest of the whole. */
  function byTag(q: SeriesQuery, key: string): SeriesLine[] | null {
    const projectId = q.filter.projectId;
    const next = db.$client.prepare<{ value: string }, [number, string, string]>(
      "SELECT value FROM event_tags WHERE project_id = ? AND key = ? AND value > ? ORDER BY value LIMIT 1",
    );
    const values: string[] = [];
    // One seek per value, however many events each has (SQLite does not skip through an index by itself).
    for (let v = next.get(projectId, key, ""); v; v = next.get(projectId, key, v.value)) {
      if (values.push(v.value) > MAX_VALUES) return null;
    }
    const first = db.$client
      .prepare<{ n: number }, [number, string]>(
        "SELECT count(*) AS n FROM event_tags WHERE project_id = ? AND key = ? AND value = ''",
      )
      .get(projectId, key)!.n;
    if (first) values.unshift("");
    const lines = values.map((value) => ({
      group: value as string | null,
      ...countLine(
        {
          db,
          from: "event_tags",
          where: tagIs(eventTags, projectId, [key, value]),
          ts: "event_tags.ts",
        },
        q.bounds,
      ),
    }));
    const whole = countLine(sourceOf(q.filter, false), q.bounds);
    return withUntagged(lines, whole, q.limit);
  }

  /**
   * A project's distinct users per bucket from its (project, user, time) index alone, when the range
   * holds a good part of the project's events: its entries come user by user, each user's in time
   * order, so a user is counted in a bucket when their bucket changes, and no set is needed. Null
   * when the range is a small part (walking the time index is cheaper then).
   */
  function usersOfProject(q: SeriesQuery): SeriesLine[] | null {
    const n = q.bounds.length - 1;
    const span = db.$client
      .prepare<{ lo: number | null; hi: number | null }, [number]>(
        "SELECT min(ts) AS lo, max(ts) AS hi FROM events WHERE project_id = ?",
      )
      .get(q.filter.projectId)!;
    if (span.lo === null || span.hi === null) return null;
    const covered = Math.min(span.hi + 1, q.bounds[n]!) - Math.max(span.lo, q.bounds[0]!);
    if (covered < (span.hi + 1 - span.lo) / 4) return null;
    const rows = db.$client
      .prepare<{ u: string; ts: number }, [number, number, number]>(
        "SELECT user_id AS u, ts FROM events INDEXED BY events_user_ts WHERE project_id = ? AND user_id IS NOT NULL AND ts >= ? AND ts < ?",
      )
      .iterate(q.filter.projectId, q.bounds[0]!, q.bounds[n]!);
    const counts = zeros(n);
    let total = 0;
    let user: string | null = null;
    let bucket = -1;
    for (const { u, ts } of rows) {
      if (u !== user) [user, bucket, total] = [u, -1, total + 1];
      const b = bucketOf(q.bounds, ts);
      if (b !== bucket) counts[(bucket = b)]!++;
    }
    return [{ group: null, other: false, total, counts }];
  }

  const summaries = summaryReads(db, searching);
  const funnels = funnelStore(db, summaries);

  /** The series from the events themselves: what the summaries answer, when they cannot. */
  function rawSeries(q: SeriesQuery): SeriesLine[] {
    const { filter, groupBy, measure } = q;
    // Words are looked up in the search index by each statement that asks for them: a count per
    // bucket would look them up once a bucket (720 times by hour over 30 days), so they are read once.
    if (measure === "events" && !groupBy && !filter.terms?.length)
      return [{ group: null, other: false, ...countLine(sourceOf(filter, false), q.bounds) }];
    if (measure === "users" && !groupBy && !narrowsEvents(filter) && filter.channel === undefined) {
      const lines = usersOfProject(q);
      if (lines) return lines;
    }
    const plain = measure === "events" && !narrowsEvents(filter);
    if (plain && groupBy?.by === "channel") return byChannel(q);
    if (plain && groupBy?.by === "tag" && filter.channel === undefined) return byTag(q, groupBy.key) ?? scan(q);
    return scan(q);
  }

  return {
    async series(q: SeriesQuery): Promise<SeriesLine[]> {
      if (q.raw) return rawSeries(q);
      return snapshot(db, async () => (await summarySeries(q, summaries)) ?? rawSeries(q));
    },

    async retention(q: RetentionQuery): Promise<RetentionCounts> {
      if (!q.raw) {
        const answer = await snapshot(db, () => summaryRetention(q, summaries));
        if (answer) return answer;
      }
      // The events of the two names, each placed in its period, per user.
      const source = sourceOf({ ...q.filter, event: undefined }, true);
      const where = dialect.sqlToQuery(
        and(source.where, sql`events.user_id IS NOT NULL AND events.event IN (${q.startEvent}, ${q.returnEvent})`)!,
      );
      const rows = source.db.$client
        .prepare<{ u: string; ts: number; e: string }, Bind[]>(
          `SELECT events.user_id AS u, ${source.ts} AS ts, events.event AS e FROM ${source.from} WHERE ${where.sql} AND ${source.ts} >= ? AND ${source.ts} < ?`,
        )
        .iterate(...(where.params as Bind[]), q.bounds[0]!, q.bounds.at(-1)!);
      const users: UserPeriods = { starts: new Map(), returns: new Map() };
      const add = (map: Map<string, Iterable<number>>, user: string, period: number) => {
        const known = map.get(user) as Set<number> | undefined;
        if (known) known.add(period);
        else map.set(user, new Set([period]));
      };
      for (const { u, ts, e } of rows) {
        const period = bucketOf(q.bounds, ts);
        if (e === q.startEvent) add(users.starts, u, period);
        if (e === q.returnEvent) add(users.returns, u, period);
      }
      return cohortCounts(q, users);
    },
    // A funnel's reads (the activity rows that end its walk, then the events) see one state too.
    funnel: (q: FunnelQuery) => snapshot(db, () => funnels.funnel(q)),
    dropped: (q: DroppedQuery) => funnels.dropped(q),
  };
}

/**
 * Runs `read` in one read transaction, so its statements see one state of the database (the
 * summaries and the events they were read beside), unless one is open on this connection already.
 */
export async function snapshot<T>(db: Db, read: () => Promise<T>): Promise<T> {
  const client = db.$client;
  if (client.inTransaction) return read();
  client.exec("BEGIN");
  try {
    return await read();
  } finally {
    if (client.inTransaction) client.exec("COMMIT");
  }
}
