// Funnels on PostgreSQL, in SQL, by the rule and order of store/sqlite/funnel.ts (chains()): each
// step is one window over the user's events of the step before (with the latest start that
// reached it there) and of this step, in time order, each step's events read from the (project,
// name, time) index. Only the counts come back.
import { and, type SQL, sql } from "drizzle-orm";
import type { DroppedQuery, FunnelCounts, FunnelQuery } from "../../model/analytics.ts";
import type { AnalyticsRepository } from "../store.ts";
import type { Ctx } from "./context.ts";
import { conditions } from "./events.ts";

/**
 * The events of step j in its range with their user (the first step's from `from` to `to`, the
 * others' until `window` after), from the (project, name, time) index: `m` holds the steps each
 * matches as bits (j's, and another step's of the same name when its channel and tags match too).
 */
function stepEvents(q: FunnelQuery, j: number): SQL {
  const step = q.steps[j]!;
  const matches = (k: number) => and(...conditions({ projectId: q.projectId, event: q.steps[k]!.event, channel: q.steps[k]!.channel }, q.steps[k]!.tags ?? []))!;
  const bits = q.steps.flatMap((other, k) => (other.event !== step.event ? [] : k === j ? [sql`${1 << j}`] : [sql`(CASE WHEN ${matches(k)} THEN ${1 << k} ELSE 0 END)`]));
  return sql`SELECT events.user_id AS u, events.ts, events.id, ${sql.join(bits, sql` + `)} AS m FROM events
    WHERE ${matches(j)} AND events.user_id IS NOT NULL AND events.ts >= ${q.from} AND events.ts < ${j === 0 ? q.to : q.to + q.window}`;
}

/**
 * The steps as CTEs, l0 … l{last}: the events that reached each step, with s, the latest start of
 * a chain that reached it there. Each step is one window over the step before's events and this
 * step's, where a running max gives the start.
 */
function levels(q: FunnelQuery, last: number): SQL {
  const parts = [sql`l0 AS NOT MATERIALIZED (SELECT u, ts, id, m, ts AS s FROM (${stepEvents(q, 0)}) e)`];
  // Partitioned by the id's hash first: the sort then compares integers, not ids that share their
  // first characters (user-1234, user-1235, ...).
  for (let j = 1; j <= last; j++) {
    const bit = 1 << j;
    const before = 1 << (j - 1);
    parts.push(sql`${sql.raw(`l${j}`)} AS MATERIALIZED (
      SELECT u, ts, id, m, s FROM (
        SELECT u, ts, id, m, nxt, max(s) OVER (PARTITION BY hashtext(u), u ORDER BY ts, g, tie, sub ROWS UNBOUNDED PRECEDING) AS s
          FROM (
            SELECT u, ts, id, m, s, false AS nxt, CASE WHEN m & ${bit} <> 0 THEN 1 ELSE 0 END AS g, CASE WHEN m & ${bit} <> 0 THEN id ELSE 0 END AS tie, 1 AS sub FROM ${sql.raw(`l${j - 1}`)}
            UNION ALL
            SELECT u, ts, id, m, NULL, true, CASE WHEN m & ${before} <> 0 THEN 1 ELSE 2 END, CASE WHEN m & ${before} <> 0 THEN id ELSE 0 END, 0 FROM (${stepEvents(q, j)}) e
          ) x
      ) y WHERE nxt AND s IS NOT NULL AND ts - s <= ${q.window})`);
  }
  return sql.join(parts, sql`, `);
}

/**
 * Step j's users, and the median time from the step before: per user, the chain that reached step
 * j with the latest start, at its earliest event there, and that chain's earliest event of the step
 * before (for step 2, the start itself).
 */
function stepCounts(j: number): SQL {
  const [level, before, a, u, m] = [`l${j}`, `l${j - 1}`, `a${j}`, `u${j}`, `m${j}`].map((name) => sql.raw(name));
  if (j === 0) return sql`(SELECT count(*)::int AS u0, NULL::float8 AS m0 FROM (SELECT DISTINCT u FROM l0) d) a0`;
  const best = sql`(SELECT DISTINCT ON (u COLLATE "C") u, s, ts FROM ${level} ORDER BY u COLLATE "C", s DESC, ts)`;
  const deltas =
    j === 1
      ? sql`SELECT b.ts - b.s AS d FROM ${best} b`
      : sql`SELECT b.ts - min(p.ts) AS d FROM ${best} b JOIN ${before} p ON p.u = b.u AND p.s = b.s GROUP BY b.u, b.ts`;
  return sql`(SELECT count(*)::int AS ${u}, percentile_cont(0.5) WITHIN GROUP (ORDER BY d) AS ${m} FROM (${deltas}) c) ${a}`;
}

/** The funnel's statement: one row, each step's users (u0, u1, …) and median (m0, m1, …). */
export function funnelSql(q: FunnelQuery): SQL {
  return sql`WITH ${levels(q, q.steps.length - 1)} SELECT * FROM ${sql.join(
    q.steps.map((_, j) => stepCounts(j)),
    sql` CROSS JOIN `,
  )}`;
}

export function funnelQueries(ctx: Ctx): Pick<AnalyticsRepository, "funnel" | "dropped"> {
  const { db } = ctx;
  const rows = async <T>(query: SQL): Promise<T[]> => [...((await db.execute(query)) as unknown as T[])];

  return {
    async funnel(q): Promise<FunnelCounts> {
      const [row] = await rows<Record<string, number | null>>(funnelSql(q));
      return q.steps.map((_, j) => ({ users: Number(row![`u${j}`] ?? 0), medianMs: row![`m${j}`] ?? null }));
    },

    async dropped(q: DroppedQuery): Promise<string[]> {
      const [before, at] = [sql.raw(`l${q.step - 2}`), sql.raw(`l${q.step - 1}`)];
      const found = await rows<{ u: string }>(sql`
        WITH ${levels(q, q.step - 1)}
        SELECT u FROM (SELECT DISTINCT u FROM ${before}) r
         WHERE NOT EXISTS (SELECT 1 FROM ${at} WHERE ${at}.u = r.u) ${q.after === null ? sql`` : sql`AND u COLLATE "C" > ${q.after}`}
         ORDER BY u COLLATE "C" LIMIT ${q.limit}`);
      return found.map((r) => r.u);
    },
  };
}
