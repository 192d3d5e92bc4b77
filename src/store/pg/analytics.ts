// Series on PostgreSQL, answered by the database on the read pool (store/reads.ts): only the
// lines come back, never the events, since rows are read on the thread that acknowledges writes.
// The whole is counted a bucket at a time from the index that answers the filter (an index-only
// range per bucket, unless rare words filter it); a split by channel, by name or by a tag's value counts each
// channel, name or value that way when nothing else narrows the events and they are few.
// Distinct users over at most 64 buckets are one bigint per user (and group), a bit a bucket. Anything
// else is one statement that places each event in its bucket (width_bucket), keeps the groups with
// the most and adds up the rest.
import { and, type SQL, sql } from "drizzle-orm";
import { rowsOn } from "./db.ts";
import type { RetentionCounts, RetentionQuery, SeriesLine, SeriesQuery } from "../../model/analytics.ts";
import type { EventFilter } from "../../model/filter.ts";
import { combine, narrowsEvents, otherLine, topGroups, withUntagged, zeros } from "../series.ts";
import type { AnalyticsRepository } from "../store.ts";
import type { Ctx } from "./context.ts";
import { tsQuery } from "./event-source.ts";
import { funnelQueries } from "./funnel.ts";
import { summaryReads } from "./summary-reads.ts";
import { summarySeries } from "../summary/series.ts";
import { summaryRetention } from "../summary/retention.ts";
import { type Source, eventSource as sourceOf, groupOf, within } from "./event-source.ts";

/** Channels or tag values counted one by one, at most: past it (or past this many counts in all), one statement groups them. */
const MAX_GROUPS = 1000;
/** Words matching at most this many events of a range are found once, through the search index (fewMatches). */
const FEW_MATCHES = 5000;
const MAX_CELLS = 100_000;

export function analyticsStore(ctx: Ctx): AnalyticsRepository {
  const { db } = ctx;
  const rows = rowsOn(db);

  /** One count per bucket, each an index range. */
  const perBucket = (source: Source, bounds: number[], extra?: SQL) => sql`(
    SELECT array_agg((SELECT count(*) FROM ${source.from} WHERE ${and(source.where, extra)} AND ${within(source, sql`b.lo`, sql`b.hi`)})::int ORDER BY b.i)
      FROM unnest(${`{${bounds.slice(0, -1).join(",")}}`}::bigint[], ${`{${bounds.slice(1).join(",")}}`}::bigint[]) WITH ORDINALITY AS b(lo, hi, i))`;

  async function whole(filter: EventFilter, bounds: number[]): Promise<{ total: number; counts: number[] }> {
    // Common words are checked event by event along the time index, never through the search index:
    // once a statement runs on a generic plan (its sixth run), the planner cannot see how common they
    // are and matched them through the search index in every bucket (30 s for a word most events hold).
    const words = tsQuery(filter.terms ?? []);
    const source = words ? sourceOf({ ...filter, terms: [] }, true) : sourceOf(filter, false);
    const [row] = await rows<{ counts: number[] | null }>(
      sql`SELECT ${perBucket(source, bounds, words ? sql`(events.search @@ ${words}::tsquery) IS TRUE` : undefined)} AS counts`,
    );
    const counts = row?.counts ? Array.from(row.counts) : zeros(bounds.length - 1); // int[] comes as an Int32Array
    return { total: counts.reduce((a, b) => a + b, 0), counts };
  }

  /**
   * Whether a filter's words match few events of the range. Each statement matches words anew, and
   * the planner matches rare ones through the search index: counted a bucket at a time they would be
   * looked up once a bucket (a second by hour over 30 days for a rare prefix). Common ones are checked
   * event by event along the time index, which a count per bucket does once.
   */
  async function fewMatches(filter: EventFilter, bounds: number[]): Promise<boolean> {
    const source = sourceOf(filter, false);
    const [row] = await rows<{ n: number }>(sql`
      SELECT count(*)::int AS n FROM (SELECT 1 FROM ${source.from} WHERE ${source.where} AND ${within(source, bounds[0]!, bounds.at(-1)!)} LIMIT ${FEW_MATCHES + 1}) x`);
    return (row?.n ?? 0) <= FEW_MATCHES;
  }

  /** Each event of the range placed in its bucket by one statement (width_bucket), only the buckets' counts back. */
  async function placed(filter: EventFilter, bounds: number[]): Promise<{ total: number; counts: number[] }> {
    const n = bounds.length - 1;
    const source = sourceOf(filter, false);
    const found = await rows<{ b: number; n: number }>(sql`
      SELECT width_bucket(${source.ts}, ${`{${bounds.join(",")}}`}::bigint[]) - 1 AS b, count(*)::int AS n
        FROM ${source.from} WHERE ${source.where} AND ${within(source, bounds[0]!, bounds[n]!)} GROUP BY 1`);
    const counts = zeros(n);
    for (const row of found) counts[row.b] = row.n;
    return { total: counts.reduce((a, b) => a + b, 0), counts };
  }

  /** Split by channel, each channel's events counted from its own index (channel, time); null when there are too many. */
  async function byChannel(q: SeriesQuery): Promise<SeriesLine[] | null> {
    const n = q.bounds.length - 1;
    const lo = q.bounds[0]!;
    const hi = q.bounds[n]!;
    const list = await rows<{ id: number; name: string }>(sql`
      SELECT c.id, c.name FROM channels c
       WHERE c.project_id = ${q.filter.projectId} ${q.filter.channel === undefined ? sql`` : sql`AND c.name = ${q.filter.channel}`}
         AND EXISTS (SELECT 1 FROM events e WHERE e.channel_id = c.id AND e.ts >= ${lo} AND e.ts < ${hi})
       LIMIT ${MAX_GROUPS + 1}`);
    if (list.length > MAX_GROUPS || list.length * n > MAX_CELLS) return null;
    if (!list.length) return [];
    const counted = await rows<{ name: string; counts: number[] }>(sql`
      SELECT c.name, ${perBucket({ from: sql`events`, where: sql`events.channel_id = c.id`, ts: sql`events.ts` }, q.bounds)} AS counts
        FROM channels c WHERE c.id IN ${list.map((c) => c.id)}`);
    return combine(
      counted.map((c) => ({ group: c.name, counts: Array.from(c.counts), total: c.counts.reduce((a, b) => a + b, 0) })),
      q.limit,
    );
  }

  /** Split by a tag: each value's events counted from the tag index; the events without the tag are the rest of the whole. Null when there are too many values. */
  async function byTag(q: SeriesQuery, key: string): Promise<SeriesLine[] | null> {
    const n = q.bounds.length - 1;
    const projectId = q.filter.projectId;
    // The distinct values, one index seek each (PostgreSQL does not skip through an index by itself).
    const values = await rows<{ value: string }>(sql`
      WITH RECURSIVE v(value) AS (
        (SELECT value FROM event_tags WHERE project_id = ${projectId} AND key = ${key} ORDER BY value LIMIT 1)
        UNION ALL
        SELECT (SELECT t.value FROM event_tags t WHERE t.project_id = ${projectId} AND t.key = ${key} AND t.value > v.value ORDER BY t.value LIMIT 1) FROM v WHERE v.value IS NOT NULL)
      SELECT value FROM v WHERE value IS NOT NULL LIMIT ${MAX_GROUPS + 1}`);
    if (values.length > MAX_GROUPS || values.length * n > MAX_CELLS) return null;
    const tagged = {
      from: sql`event_tags`,
      where: sql`event_tags.project_id = ${projectId} AND event_tags.key = ${key} AND event_tags.value = v.value`,
      ts: sql`event_tags.ts`,
    };
    const counted = values.length
      ? await rows<{ value: string; counts: number[] }>(
          sql`SELECT v.value, ${perBucket(tagged, q.bounds)} AS counts FROM json_array_elements_text(${JSON.stringify(values.map((v) => v.value))}::text::json) AS v(value)`,
        )
      : [];
    const lines = counted.map((c) => ({
      group: c.value as string | null,
      counts: Array.from(c.counts),
      total: c.counts.reduce((a, b) => a + b, 0),
    }));
    const all = await whole(q.filter, q.bounds);
    return withUntagged(lines, all, q.limit);
  }

  /** Split by name: each name's events counted from the (project, name, time) index; null when there are too many names. */
  async function byName(q: SeriesQuery): Promise<SeriesLine[] | null> {
    const n = q.bounds.length - 1;
    const projectId = q.filter.projectId;
    // The distinct names, one index seek each, as byTag finds a tag's values.
    const names = await rows<{ event: string }>(sql`
      WITH RECURSIVE v(event) AS (
        (SELECT event FROM events WHERE project_id = ${projectId} ORDER BY event LIMIT 1)
        UNION ALL
        SELECT (SELECT e.event FROM events e WHERE e.project_id = ${projectId} AND e.event > v.event ORDER BY e.event LIMIT 1) FROM v WHERE v.event IS NOT NULL)
      SELECT event FROM v WHERE event IS NOT NULL LIMIT ${MAX_GROUPS + 1}`);
    if (names.length > MAX_GROUPS || names.length * n > MAX_CELLS) return null;
    if (!names.length) return [];
    const named = {
      from: sql`events`,
      where: sql`events.project_id = ${projectId} AND events.event = v.event`,
      ts: sql`events.ts`,
    };
    const counted = await rows<{ event: string; counts: number[] }>(
      sql`SELECT v.event, ${perBucket(named, q.bounds)} AS counts FROM json_array_elements_text(${JSON.stringify(names.map((v) => v.event))}::text::json) AS v(event)`,
    );
    return combine(
      counted.map((c) => ({
        group: c.event,
        counts: Array.from(c.counts),
        total: c.counts.reduce((a, b) => a + b, 0),
      })),
      q.limit,
    );
  }

  /** One statement: each event placed in its bucket, the groups with the most kept, the rest added up (users counted once). */
  async function grouped(q: SeriesQuery): Promise<SeriesLine[]> {
    const n = q.bounds.length - 1;
    const users = q.measure === "users";
    const source = sourceOf(q.filter, true);
    const { from, group } = groupOf(q.groupBy, source.from);
    const measure = users ? sql`count(DISTINCT u)::int` : sql`count(*)::int`;
    const found = await rows<{ rest: boolean; g: string | null; total: number; b: number[]; n: number[] }>(sql`
      WITH r AS MATERIALIZED (
        SELECT width_bucket(${source.ts}, ${`{${q.bounds.join(",")}}`}::bigint[]) - 1 AS b, ${group} AS g, events.user_id AS u
          FROM ${from} WHERE ${source.where} AND ${within(source, q.bounds[0]!, q.bounds[n]!)} ${users ? sql`AND events.user_id IS NOT NULL` : sql``}),
      t AS (SELECT g, ${measure} AS total FROM r GROUP BY g),
      top AS (SELECT g, total FROM t ORDER BY total DESC, g COLLATE "C" NULLS FIRST LIMIT ${q.groupBy ? q.limit : 1}),
      k AS (SELECT r.*, top.total IS NULL AS rest FROM r LEFT JOIN top ON coalesce(top.g, '') = coalesce(r.g, '') AND (top.g IS NULL) = (r.g IS NULL)),
      c AS (SELECT rest, CASE WHEN rest THEN NULL ELSE g END AS g, b, ${measure} AS n FROM k GROUP BY 1, 2, 3)
      SELECT c.rest, c.g, array_agg(c.b ORDER BY c.b) AS b, array_agg(c.n ORDER BY c.b) AS n,
             CASE WHEN c.rest THEN ${users ? sql`(SELECT count(DISTINCT u)::int FROM k WHERE rest)` : sql`(SELECT sum(total)::int FROM t WHERE NOT EXISTS (SELECT 1 FROM top WHERE coalesce(top.g, '') = coalesce(t.g, '') AND (top.g IS NULL) = (t.g IS NULL)))`}
                  ELSE (SELECT top.total FROM top WHERE coalesce(top.g, '') = coalesce(c.g, '') AND (top.g IS NULL) = (c.g IS NULL)) END AS total
        FROM c GROUP BY c.rest, c.g`);
    return seriesOf(
      found.map((row) => {
        const counts = zeros(n);
        row.b.forEach((b, i) => (counts[b] = row.n[i]!));
        return { group: row.g, total: row.total, counts, rest: row.rest };
      }),
      q,
    );
  }

  /**
   * Distinct users per group and bucket, with at most 64 buckets: each user's buckets in a group are
   * one bigint's bits (bit_or), so a user is one row per group instead of one per event, and the
   * database sorts nothing to count them (count(DISTINCT) sorts every event, twice). The rest of the
   * groups are counted by user again, their masks put together, so a user counts once there too.
   */
  async function groupedUsers(q: SeriesQuery): Promise<SeriesLine[]> {
    const n = q.bounds.length - 1;
    const source = sourceOf(q.filter, true);
    const { from, group } = groupOf(q.groupBy, source.from);
    const bits = bitCounts(n);
    const same = (a: string, b: string) =>
      sql.raw(`coalesce(${a}.g, '') = coalesce(${b}.g, '') AND (${a}.g IS NULL) = (${b}.g IS NULL)`);
    const found = await rows<{ rest: boolean; g: string | null; total: number; counts: number[] }>(sql`
      WITH r AS MATERIALIZED (
        SELECT g, u, bit_or(1::bigint << b) AS mask FROM (
          SELECT width_bucket(${source.ts}, ${`{${q.bounds.join(",")}}`}::bigint[]) - 1 AS b, ${group} AS g, events.user_id AS u
            FROM ${from} WHERE ${source.where} AND ${within(source, q.bounds[0]!, q.bounds[n]!)} AND events.user_id IS NOT NULL) e
        GROUP BY g, u),
      top AS (SELECT g, count(*) AS total FROM r GROUP BY g ORDER BY total DESC, g COLLATE "C" NULLS FIRST LIMIT ${q.groupBy ? q.limit : 1})
      SELECT false AS rest, r.g, count(*)::int AS total, ARRAY[${bits}] AS counts FROM r JOIN top ON ${same("top", "r")} GROUP BY r.g
      UNION ALL
      SELECT true, NULL, count(*)::int, ARRAY[${bits}] FROM (SELECT bit_or(mask) AS mask FROM r WHERE NOT EXISTS (SELECT 1 FROM top WHERE ${same("top", "r")}) GROUP BY u) x HAVING count(*) > 0`);
    return seriesOf(
      found.map((row) => ({ group: row.g, total: row.total, counts: Array.from(row.counts), rest: row.rest })),
      q,
    );
  }

  /**
   * A project's distinct users per bucket, user by user in the order of its (project, user, time)
   * index. With at most 64 buckets, each user's buckets are one bigint's bits (bit_or), and each
   * bucket's users are counted from those: a user is one row, not a row per event and bucket.
   * With more, a user counts in a bucket when their bucket changes from their event before.
   */
  async function usersOfProject(q: SeriesQuery): Promise<SeriesLine[]> {
    const n = q.bounds.length - 1;
    const bucket = sql`width_bucket(ts, ${`{${q.bounds.join(",")}}`}::bigint[]) - 1`;
    const events = sql`FROM events WHERE project_id = ${q.filter.projectId} AND user_id IS NOT NULL AND ts >= ${q.bounds[0]} AND ts < ${q.bounds[n]}`;
    if (n <= 64) {
      const [row] = await rows<{ users: number; counts: number[] }>(sql`
        SELECT count(*)::int AS users, ARRAY[${bitCounts(n)}] AS counts
          FROM (SELECT bit_or(1::bigint << ${bucket}) AS mask ${events} GROUP BY user_id) u`);
      return [{ group: null, other: false, total: row?.users ?? 0, counts: row ? Array.from(row.counts) : zeros(n) }];
    }
    const found = await rows<{ b: number; n: number; users: number }>(sql`
      SELECT b, count(*) FILTER (WHERE b IS DISTINCT FROM before)::int AS n, count(*) FILTER (WHERE before IS NULL)::int AS users
        FROM (SELECT b, lag(b) OVER (PARTITION BY user_id ORDER BY ts) AS before FROM (SELECT user_id, ts, ${bucket} AS b ${events}) e) x
       GROUP BY b`);
    const counts = zeros(n);
    for (const row of found) counts[row.b] = row.n;
    return [{ group: null, other: false, total: found.reduce((sum, row) => sum + row.users, 0), counts }];
  }

  const summaries = summaryReads(ctx);

  /** The series from the events themselves: what the summaries answer, when they cannot. */
  async function rawSeries(q: SeriesQuery): Promise<SeriesLine[]> {
    const { filter, groupBy, measure } = q;
    if (measure === "events" && !groupBy) {
      const few = filter.terms?.length ? await fewMatches(filter, q.bounds) : false;
      return [{ group: null, other: false, ...(await (few ? placed(filter, q.bounds) : whole(filter, q.bounds))) }];
    }
    if (measure === "users" && !groupBy && !narrowsEvents(filter) && filter.channel === undefined)
      return usersOfProject(q);
    const plain = measure === "events" && !narrowsEvents(filter);
    if (plain && groupBy?.by === "channel") return (await byChannel(q)) ?? grouped(q);
    if (plain && groupBy?.by === "tag" && filter.channel === undefined)
      return (await byTag(q, groupBy.key)) ?? grouped(q);
    if (plain && groupBy?.by === "event" && filter.channel === undefined) return (await byName(q)) ?? grouped(q);
    if (measure === "users" && q.bounds.length - 1 <= 64) return groupedUsers(q);
    return grouped(q);
  }

  return {
    async series(q) {
      if (q.raw) return rawSeries(q);
      return (await summarySeries(q, summaries)) ?? rawSeries(q);
    },

    async retention(q: RetentionQuery): Promise<RetentionCounts> {
      if (!q.raw) {
        const answer = await summaryRetention(q, summaries);
        if (answer) return answer;
      }
      // Each user's periods with each event (distinct), joined by user: only the counts come back.
      const source = sourceOf({ ...q.filter, event: undefined }, true);
      const lo = q.bounds[0]!;
      const hi = q.bounds.at(-1)!;
      const periods = (name: string) => sql`
        SELECT DISTINCT events.user_id AS u, width_bucket(${source.ts}, ${`{${q.bounds.join(",")}}`}::bigint[]) - 1 AS p
          FROM ${source.from} WHERE ${source.where} AND events.user_id IS NOT NULL AND events.event = ${name}
           AND ${within(source, lo, hi)}`;
      const found = await rows<{ c: number; k: number; n: number }>(sql`
        WITH s AS MATERIALIZED (${periods(q.startEvent)}), r AS MATERIALIZED (${periods(q.returnEvent)})
        SELECT p AS c, -1 AS k, count(*)::int AS n FROM s WHERE p < ${q.cohorts} GROUP BY 1
        UNION ALL
        SELECT s.p, r.p - s.p, count(*)::int FROM s JOIN r ON r.u = s.u AND r.p >= s.p AND r.p <= s.p + ${q.periods}
         WHERE s.p < ${q.cohorts} GROUP BY 1, 2`);
      const out: RetentionCounts = Array.from({ length: q.cohorts }, () => ({
        users: 0,
        returned: new Array<number>(q.periods + 1).fill(0),
      }));
      for (const { c, k, n } of found) {
        if (k < 0) out[c]!.users = n;
        else out[c]!.returned[k] = n;
      }
      return out;
    },
    ...funnelQueries(ctx, summaries),
  };
}

/** How many rows' `mask` has each of the first n bits set: a bucket's users, when a user's buckets are one bigint's bits. */
const bitCounts = (n: number) =>
  sql.join(
    Array.from(
      { length: n },
      (_, b) =>
        sql`count(*) FILTER (WHERE mask & ${sql.raw(`(${BigInt.asIntN(64, 1n << BigInt(b))})`)}::bigint <> 0)::int`,
    ),
    sql`, `,
  );

/** The series of a statement's lines: its top groups, and the rest as one line; one empty line when it found nothing ungrouped. */
function seriesOf(lines: { group: string | null; total: number; counts: number[]; rest: boolean }[], q: SeriesQuery) {
  const { top } = topGroups(
    lines.filter((l) => !l.rest),
    q.limit,
  );
  const out: SeriesLine[] = top.map(({ group, total, counts }) => ({ group, other: false, total, counts }));
  const rest = lines.find((l) => l.rest);
  if (rest) out.push(otherLine(rest.counts, rest.total));
  return q.groupBy || out.length ? out : [{ group: null, other: false, total: 0, counts: zeros(q.bounds.length - 1) }];
}
