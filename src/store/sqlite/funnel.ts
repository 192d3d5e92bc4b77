// Funnels on SQLite, in a reader process: the events of the funnel's steps are walked here, user
// by user (store/funnel-walk.ts). A span's events come along the project's time index; the rest of
// a range, when it must be read, along its users' index, a user's events together. SQLite lets a
// query keep no state from row to row, and bun:sqlite registers no functions, so the walk that
// follows a user's chain of steps is code; the PostgreSQL store (store/pg/funnel.ts) asks the same of SQL.
import { and, type SQL, sql } from "drizzle-orm";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import type { DroppedQuery, FunnelCounts, FunnelQuery } from "../../model/analytics.ts";
import type { Db } from "./db.ts";
import { byCodePoint } from "../series.ts";
import { chains, funnelCounts, type StepEvent } from "../funnel-walk.ts";
import type { SummaryReads } from "../summary/reads.ts";
import { conditions } from "./event-source.ts";

const dialect = new SQLiteSyncDialect();
type Bind = string | number | null;
type Row = { u: string; ts: number; id: number; m: number };

/** Each step's conditions on an event. */
const stepMatches = (q: FunnelQuery) =>
  q.steps.map(
    (step) =>
      and(...conditions({ projectId: q.projectId, event: step.event, channel: step.channel }, step.tags ?? []))!,
  );

/** An event of any step. */
const stepMatch = (q: FunnelQuery) => sql.join(stepMatches(q), sql` OR `);

/** Users whose events one statement reads, when a funnel reads a few users' events. */
const USERS_PER_STATEMENT = 500;
const byUserOrder = sql`events.user_id, events.ts, events.id`;

/** Rows in user order handed to `each` a user at a time (but users in `skip`). */
function walkUsers(found: Iterable<Row>, skip: Set<string>, each: (user: string, events: StepEvent[]) => unknown) {
  let user: string | null = null;
  let events: StepEvent[] = [];
  for (const { u, ts, id, m } of found) {
    if (u !== user) {
      if (user !== null && events.length) each(user, events);
      [user, events] = [u, []];
    }
    if (!skip.has(u)) events.push({ ts, id, m });
  }
  if (user !== null && events.length) each(user, events);
}

export function funnelStore(db: Db, summaries?: SummaryReads) {
  /** The events of the steps with lo <= time < hi, as rows {u, ts, id, m}, along `index` in `order`. */
  function rows(
    q: FunnelQuery,
    lo: number,
    hi: number,
    index: string,
    order: SQL,
    users?: string[],
  ): IterableIterator<Row> {
    const matches = stepMatches(q);
    const mask = sql.join(
      matches.map((m, j) => sql`(CASE WHEN ${m} THEN ${1 << j} ELSE 0 END)`),
      sql` + `,
    );
    const query =
      dialect.sqlToQuery(sql`SELECT events.user_id AS u, events.ts AS ts, events.id AS id, ${mask} AS m FROM events INDEXED BY ${sql.raw(index)}
      WHERE events.project_id = ${q.projectId} AND events.user_id IS NOT NULL AND events.ts >= ${lo} AND events.ts < ${hi}
        AND (${sql.join(matches, sql` OR `)}) ${users ? sql`AND events.user_id IN ${users}` : sql``} ORDER BY ${order}`);
    return db.$client.prepare<Row, Bind[]>(query.sql).iterate(...(query.params as Bind[]));
  }

  /** Each user's events of the steps with lo <= time < hi, oldest first (by time, then as stored). */
  function byUser(q: FunnelQuery, lo: number, hi: number, skip: Set<string>): Map<string, StepEvent[]> {
    const users = new Map<string, StepEvent[]>();
    for (const { u, ts, id, m } of rows(q, lo, hi, "events_project_ts", sql`events.ts, events.id`)) {
      if (skip.has(u)) continue;
      const list = users.get(u);
      if (list) list.push({ ts, id, m });
      else users.set(u, [{ ts, id, m }]);
    }
    return users;
  }

  return {
    funnel(q: FunnelQuery): Promise<FunnelCounts> {
      return funnelCounts(q, {
        summaries,
        async latest(q, before) {
          const match = stepMatch(q);
          const query = dialect.sqlToQuery(sql`SELECT max(events.ts) FROM events INDEXED BY events_project_ts
            WHERE events.project_id = ${q.projectId} AND events.user_id IS NOT NULL AND events.ts < ${before} AND (${match})`);
          const [row] = db.$client.prepare(query.sql).values(...(query.params as Bind[])) as [number | null][];
          return row?.[0] ?? null;
        },
        async stepEvents(q, lo, hi, skip, only, each) {
          if (!only) {
            for (const [user, events] of byUser(q, lo, hi, skip)) each(user, events);
            return;
          }
          // A few users: each one's events from the users' index, some users a statement.
          for (let i = 0; i < only.length; i += USERS_PER_STATEMENT)
            walkUsers(
              rows(q, lo, hi, "events_user_ts", byUserOrder, only.slice(i, i + USERS_PER_STATEMENT)),
              skip,
              each,
            );
        },
        async userEvents(q, lo, hi, skip, each) {
          walkUsers(rows(q, lo, hi, "events_user_ts", byUserOrder), skip, each);
        },
      });
    },

    dropped(q: DroppedQuery): string[] {
      const out: string[] = [];
      for (const [user, events] of byUser(q, q.from, q.to + q.window, new Set())) {
        if (q.after !== null && byCodePoint(user, q.after) <= 0) continue;
        if (chains(events, q).length === q.step - 1) out.push(user);
      }
      return out.sort(byCodePoint).slice(0, q.limit);
    },
  };
}
