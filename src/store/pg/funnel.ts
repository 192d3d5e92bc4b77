// Funnels on PostgreSQL, in SQL, by the rule and order of store/funnel-walk.ts (chains()): each
// step is one window over the user's events of the step before (with the latest start that
// reached it there) and of this step, in time order, each step's events read from the (project,
// name, time) index. As the walk on SQLite, a funnel reads backwards from its latest event, in
// spans that double: each round walks the users not settled yet on the events of its span to the
// end, and settles those who reach the last step there (their latest conversion is in it, so
// nothing earlier can change their answer); the last round walks the rest on the whole range. Only
// counts and each step's times from the step before come back (a float8 array decodes at once).
import { and, type SQL, sql } from "drizzle-orm";
import { rowsOn } from "./db.ts";
import type { DroppedQuery, FunnelCounts, FunnelQuery } from "../../model/analytics.ts";
import type { AnalyticsRepository } from "../store.ts";
import type { Ctx } from "./context.ts";
import { firstSpan, firstStepDays, median } from "../funnel-walk.ts";
import type { SummaryReads } from "../summary/reads.ts";

import { conditions } from "./event-source.ts";

/**
 * The events of step j in its range with their user (the first step's from `from` to `to`, the
 * others' until `window` after), from the (project, name, time) index: `m` holds the steps each
 * matches as bits (j's, and another step's of the same name when its channel and tags match too).
 */
/** A funnel walked in a round: its events from `lo` on (else from `from`), of users not in `settled`. */
type Round = FunnelQuery & { lo?: number; settled?: string[]; whole?: string[] };

function stepEvents(q: Round, j: number): SQL {
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
  const end = j === 0 ? q.to : q.to + q.window;
  const lo = Math.max(q.from, q.lo ?? q.from);
  const unsettled = q.settled?.length ? sql`AND NOT (events.user_id = ANY(${toArray(q.settled)}::text[]))` : sql``;
  return sql`SELECT events.user_id AS u, events.ts, events.id, ${sql.join(bits, sql` + `)} AS m FROM events
    WHERE ${matches(j)} AND events.user_id IS NOT NULL AND events.ts >= ${lo} AND events.ts < ${end} ${unsettled}`;
}

/**
 * The steps as CTEs, l0 … l{last}: the events that reached each step (`nxt`), with s, the latest
 * start of a chain that reached it there, and p, when that chain did the step before (its earliest
 * event there). Each step is one window over the step before's events and this step's, where a
 * running max gives the start (past step 2, the start with its earliest event, as an array).
 * l1 also keeps each user's first event of step 1 (not `nxt`): step 1's users, counted from the
 * same pass instead of a second read of its events.
 */
function levels(q: Round, last: number): SQL {
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

type RoundRow = { seen: number; settled: string[]; counts: ArrayLike<number> } & Record<string, unknown>;

const toArray = (texts: string[]) =>
  `{${texts.map((t) => `"${t.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`).join(",")}}`;

/**
 * One round: the users walked on the events of its span (`seen`), those who reached the last step
 * (`settled`: not walked again), and per step the users counted and their times from the step
 * before (d1 …, ms) in the chain with the latest start, of the settled users (or, in the final
 * round, of every user walked).
 */
function roundSql(q: Round, last: number, final: boolean): SQL {
  const counted = final ? sql`true` : sql`u IN (SELECT u FROM settled)`;
  const best = (j: number) =>
    sql`(SELECT coalesce(array_agg(d), '{}') FROM (SELECT DISTINCT ON (hashtext(u), u) u, (ts - p)::float8 AS d FROM ${sql.raw(`l${j}`)}
          WHERE nxt AND ${counted} ORDER BY hashtext(u), u, s DESC, ts) b) AS ${sql.raw(`d${j}`)}`;
  const count = (j: number) =>
    j === 0
      ? sql`(SELECT count(*) FROM l1 WHERE NOT nxt AND ${counted})::int`
      : sql`(SELECT count(DISTINCT u) FROM ${sql.raw(`l${j}`)} WHERE nxt AND ${counted})::int`;
  return sql`WITH ${levels(q, last)},
      settled AS (SELECT DISTINCT u FROM ${sql.raw(`l${last}`)} WHERE nxt
        ${q.whole?.length ? sql`UNION SELECT u FROM l1 WHERE NOT nxt AND u = ANY(${toArray(q.whole)}::text[])` : sql``})
    SELECT (SELECT count(*) FROM l1 WHERE NOT nxt)::int AS seen,
           ${final ? sql`'{}'::text[]` : sql`(SELECT coalesce(array_agg(u), '{}') FROM settled)`} AS settled,
           ARRAY[${sql.join(
             q.steps.map((_, j) => count(j)),
             sql`, `,
           )}] AS counts
           ${sql.join(
             q.steps.slice(1).map((_, i) => sql`, ${best(i + 1)}`),
             sql``,
           )}`;
}

const someUser = (days: Map<string, number>, test: (user: string, day: number) => boolean): boolean => {
  for (const [user, day] of days) if (test(user, day)) return true;
  return false;
};

export function funnelQueries(ctx: Ctx, summaries: SummaryReads): Pick<AnalyticsRepository, "funnel" | "dropped"> {
  const { db } = ctx;
  const rows = rowsOn(db);

  return {
    async funnel(q): Promise<FunnelCounts> {
      const last = q.steps.length - 1;
      const users = new Array<number>(q.steps.length).fill(0);
      const deltas = q.steps.map(() => [] as number[]);
      const [newest] = await rows<{ ts: number | null }>(sql`
        SELECT max(ts)::float8 AS ts FROM (${sql.join(
          q.steps.map((_, j) => sql`SELECT max(e.ts) AS ts FROM (${stepEvents({ ...q, to: q.to + q.window }, j)}) e`),
          sql` UNION ALL `,
        )}) x`);
      if (newest?.ts != null && newest.ts >= q.from) {
        // When each user first did the first step in the range, to the day (null: the summaries cannot tell).
        const firstDays = q.raw ? null : await firstStepDays(summaries, q);
        const settled = new Set<string>();
        let span = q.raw ? Number.POSITIVE_INFINITY : await firstSpan(summaries, q, newest.ts + 1);
        for (;;) {
          // A span past half of the range reads all of it: the next round would read it all again anyway.
          const final = newest.ts + 1 - 2 * span <= q.from;
          const lo = final ? q.from : newest.ts + 1 - span;
          // Users with no first step before `lo`: every chain of theirs is in the round, which settles them.
          const whole: string[] = [];
          if (firstDays && !final) for (const [user, day] of firstDays) if (day >= lo) whole.push(user);
          const [round] = await rows<RoundRow>(roundSql({ ...q, lo, settled: [...settled], whole }, last, final));
          if (!round) break;
          Array.from(round.counts).forEach((n, j) => (users[j]! += n));
          for (let j = 1; j <= last; j++) deltas[j]!.push(...Array.from(round[`d${j}`] as ArrayLike<number>));
          if (final) break;
          for (const user of round.settled) settled.add(user);
          // Everyone who did the first step before `lo` is settled: nothing before it counts.
          if (firstDays && !someUser(firstDays, (user, day) => day < lo && !settled.has(user))) break;
          span *= 2;
        }
      }
      return users.map((n, j) => ({ users: n, medianMs: j > 0 ? median(deltas[j]!) : null }));
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
