// Funnels on PostgreSQL, in SQL, by the rule and order of store/sqlite/funnel.ts (chains()): each
// step is one window over the user's events of the step before (with the latest start that
// reached it there) and of this step, in time order, each step's events read from the (project,
// name, time) index. Only the counts come back.
import { and, type SQL, sql } from "drizzle-orm";
import type { DroppedQuery, FunnelCounts, FunnelQuery } from "../../model/analytics.ts";
import type { AnalyticsRepository } from "../store.ts";
import type { Ctx } from "./context.ts";
import { funnelCounts, type StepEvent } from "../funnel-walk.ts";

/** A row of a funnel's step events: some users (by their id's hash), with their events' count, times, ids and steps in order. */
type BucketRow = {
  users: string[];
  counts: ArrayLike<number>;
  ts: ArrayLike<number>;
  ids: ArrayLike<number>;
  ms: ArrayLike<number>;
};
import { conditions } from "./events.ts";

/**
 * The events of step j in its range with their user (the first step's from `from` to `to`, the
 * others' until `window` after), from the (project, name, time) index: `m` holds the steps each
 * matches as bits (j's, and another step's of the same name when its channel and tags match too).
 */
function stepEvents(q: FunnelQuery, j: number, any = false): SQL {
  const step = q.steps[j]!;
  const matches = (k: number) =>
    and(
      ...conditions(
        { projectId: q.projectId, event: q.steps[k]!.event, channel: q.steps[k]!.channel },
        q.steps[k]!.tags ?? [],
      ),
    )!;
  const bits = q.steps.flatMap((other, k) =>
    other.event !== step.event
      ? []
      : k === j
        ? [sql`${1 << j}`]
        : [sql`(CASE WHEN ${matches(k)} THEN ${1 << k} ELSE 0 END)`],
  );
  const end = j === 0 && !any ? q.to : q.to + q.window;
  return sql`SELECT events.user_id AS u, events.ts, events.id, ${sql.join(bits, sql` + `)} AS m FROM events
    WHERE ${matches(j)} AND events.user_id IS NOT NULL AND events.ts >= ${q.from} AND events.ts < ${end}`;
}

/**
 * The steps as CTEs, l0 … l{last}: the events that reached each step (`nxt`), with s, the latest
 * start of a chain that reached it there, and p, when that chain did the step before (its earliest
 * event there). Each step is one window over the step before's events and this step's, where a
 * running max gives the start (past step 2, the start with its earliest event, as an array).
 * l1 also keeps each user's first event of step 1 (not `nxt`): step 1's users, counted from the
 * same pass instead of a second read of its events.
 */
function levels(q: FunnelQuery, last: number): SQL {
  // Only an event of both steps' name can be of both: else, at equal times, the step before's come first.
  const both = (j: number) => j >= 1 && j <= last && q.steps[j - 1]!.event === q.steps[j]!.event;
  // Events carry their id and steps (m) only into a step whose tie-break reads them: narrower rows to sort.
  const idm = (on: boolean) => (on ? sql`id, m, ` : sql``);
  const parts = [sql`l0 AS NOT MATERIALIZED (SELECT u, ts, ${idm(both(1))}ts AS s FROM (${stepEvents(q, 0)}) e)`];
  for (let j = 1; j <= last; j++) {
    const bit = 1 << j;
    const before = 1 << (j - 1);
    const [ties, carried] = [both(j), both(j + 1)];
    const rank = (level: boolean) =>
      !ties
        ? sql``
        : level
          ? sql`, CASE WHEN m & ${bit} <> 0 THEN 1 ELSE 0 END AS g, CASE WHEN m & ${bit} <> 0 THEN id ELSE 0 END AS tie, 1 AS sub`
          : sql`, CASE WHEN m & ${before} <> 0 THEN 1 ELSE 2 END, CASE WHEN m & ${before} <> 0 THEN id ELSE 0 END, 0`;
    // The step before's rows have an id and steps when this step's ties read them; else, carried on, they are none.
    const levelIdm = ties ? sql`id, m, ` : carried ? sql`NULL::bigint AS id, 0 AS m, ` : sql``;
    const levelRows = sql`SELECT u, ts, ${levelIdm}s, false AS nxt ${rank(true)} FROM ${sql.raw(`l${j - 1}`)} ${j === 1 ? sql`` : sql`WHERE nxt`}`;
    const window = sql`WINDOW w AS (PARTITION BY hashtext(u), u ORDER BY ${ties ? sql`ts, g, tie, sub` : sql`ts, nxt`} ROWS UNBOUNDED PRECEDING)`;
    const rows = sql`(${levelRows} UNION ALL SELECT u, ts, ${idm(ties || carried)}NULL, true ${rank(false)} FROM (${stepEvents(q, j)}) e) x`;
    const [inner, outer] = [idm(ties || carried), idm(carried)];
    // Partitioned by the id's hash first: the sort then compares integers, not ids that share their
    // first characters (user-1234, user-1235, ...). Step 1's start is its own event, so p is s there.
    parts.push(
      j === 1
        ? sql`l1 AS MATERIALIZED (
            SELECT u, ts, ${outer}s, s AS p, nxt FROM (
              SELECT u, ts, ${inner}nxt, max(s) OVER w AS s, count(*) FILTER (WHERE NOT nxt) OVER w AS k FROM ${rows} ${window}
            ) y WHERE (nxt AND s IS NOT NULL AND ts - s <= ${q.window}) OR (NOT nxt AND k = 1))`
        : sql`${sql.raw(`l${j}`)} AS MATERIALIZED (
            SELECT u, ts, ${outer}sp[1] AS s, -sp[2] AS p, nxt FROM (
              SELECT u, ts, ${inner}nxt, max(CASE WHEN NOT nxt THEN ARRAY[s, -ts] END) OVER w AS sp FROM ${rows} ${window}
            ) y WHERE nxt AND sp IS NOT NULL AND ts - sp[1] <= ${q.window})`,
    );
  }
  return sql.join(parts, sql`, `);
}

/**
 * Step j's users, and the median time from the step before: per user, the chain that reached step
 * j with the latest start, at its earliest event there, from when that chain did the step before.
 */
function stepCounts(j: number): SQL {
  const [level, a, u, m] = [`l${j}`, `a${j}`, `u${j}`, `m${j}`].map((name) => sql.raw(name));
  if (j === 0) return sql`(SELECT count(*)::int AS u0, NULL::float8 AS m0 FROM l1 WHERE NOT nxt) a0`;
  // The latest start, then the earliest time; by the id's hash first, as the steps' windows are.
  const best = sql`SELECT DISTINCT ON (hashtext(u), u) ts - p AS d FROM ${level} WHERE nxt ORDER BY hashtext(u), u, s DESC, ts`;
  return sql`(SELECT count(*)::int AS ${u}, percentile_cont(0.5) WITHIN GROUP (ORDER BY d) AS ${m} FROM (${best}) c) ${a}`;
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
      return funnelCounts(q, {
        async latest(q, before) {
          const [row] = await rows<{ ts: number | null }>(sql`
            SELECT max(ts)::float8 AS ts FROM (${sql.join(
              q.steps.map(
                (_, j) => sql`SELECT max(e.ts) AS ts FROM (${stepEvents({ ...q, to: before, window: 0 }, j)}) e`,
              ),
              sql` UNION ALL `,
            )}) x`);
          return row?.ts ?? null;
        },
        async stepEvents(q, lo, hi, each) {
          // Each user's events in order, in 64 rows (users by their id's hash): arrays of numbers
          // travel as typed arrays, and a row is a few milliseconds of this thread's time.
          const found = await rows<BucketRow>(sql`
            WITH e AS (SELECT DISTINCT ON (id) u, ts, id, m, hashtext(u) & 63 AS b FROM (${sql.join(
              q.steps.map((_, j) => stepEvents({ ...q, from: lo, to: hi, window: 0 }, j, true)),
              sql` UNION ALL `,
            )}) x WHERE ts >= ${lo} AND ts < ${hi}),
            us AS (SELECT b, u, count(*)::int AS c FROM e GROUP BY b, u)
            SELECT (SELECT array_agg(u ORDER BY u) FROM us WHERE us.b = e.b) AS users,
                   (SELECT array_agg(c ORDER BY u) FROM us WHERE us.b = e.b) AS counts,
                   array_agg(ts::float8 ORDER BY u, ts, id) AS ts, array_agg(id::float8 ORDER BY u, ts, id) AS ids,
                   array_agg(m ORDER BY u, ts, id) AS ms
              FROM e GROUP BY b`);
          for (const row of found) {
            const page: [string, StepEvent[]][] = [];
            let at = 0;
            row.users.forEach((user, i) => {
              const events: StepEvent[] = [];
              for (const end = at + row.counts[i]!; at < end; at++)
                events.push({ ts: row.ts[at]!, id: row.ids[at]!, m: row.ms[at]! });
              page.push([user, events]);
            });
            each(page);
            await new Promise((resolve) => setImmediate(resolve));
          }
        },
        pause: () => new Promise((resolve) => setImmediate(resolve)),
      });
    },

    async dropped(q: DroppedQuery): Promise<string[]> {
      // The users of the step before: step 1's are l1's rows that are not `nxt` (one per user).
      const before =
        q.step === 2
          ? sql`SELECT u FROM l1 WHERE NOT nxt`
          : sql`SELECT DISTINCT u FROM ${sql.raw(`l${q.step - 2}`)} WHERE nxt`;
      const at = sql.raw(`l${q.step - 1}`);
      const found = await rows<{ u: string }>(sql`
        WITH ${levels(q, q.step - 1)}
        SELECT u FROM (${before}) r
         WHERE NOT EXISTS (SELECT 1 FROM ${at} WHERE ${at}.u = r.u AND ${at}.nxt) ${q.after === null ? sql`` : sql`AND u COLLATE "C" > ${q.after}`}
         ORDER BY u COLLATE "C" LIMIT ${q.limit}`);
      return found.map((r) => r.u);
    },
  };
}
