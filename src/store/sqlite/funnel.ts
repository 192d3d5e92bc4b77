// Funnels on SQLite, in a reader process: the events of the funnel's steps in its range (one
// statement, along the project's time index) are walked here, user by user. SQLite lets a query
// keep no state from row to row, and bun:sqlite registers no functions, so the walk that follows a
// user's chain of steps is code; the PostgreSQL store (store/pg/funnel.ts) asks the same of SQL.
import { and, sql } from "drizzle-orm";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import type { DroppedQuery, FunnelCounts, FunnelQuery } from "../../model/analytics.ts";
import type { Db } from "./db.ts";
import { byCodePoint } from "../series.ts";
import { chains, funnelCounts, type StepEvent } from "../funnel-walk.ts";
import { conditions } from "./events.ts";

const dialect = new SQLiteSyncDialect();
type Bind = string | number | null;

/** Each step's conditions on an event. */
const stepMatches = (q: FunnelQuery) =>
  q.steps.map(
    (step) =>
      and(...conditions({ projectId: q.projectId, event: step.event, channel: step.channel }, step.tags ?? []))!,
  );

/** An event of any step. */
const stepMatch = (q: FunnelQuery) => sql.join(stepMatches(q), sql` OR `);

export function funnelStore(db: Db) {
  /** Each user's events of the steps with lo <= time < hi (the whole range by default), oldest first (by time, then as stored). */
  function stepEvents(q: FunnelQuery, lo = q.from, hi = q.to + q.window): Map<string, StepEvent[]> {
    const matches = stepMatches(q);
    const mask = sql.join(
      matches.map((m, j) => sql`(CASE WHEN ${m} THEN ${1 << j} ELSE 0 END)`),
      sql` + `,
    );
    const query =
      dialect.sqlToQuery(sql`SELECT events.user_id, events.ts, events.id, ${mask} FROM events INDEXED BY events_project_ts
      WHERE events.project_id = ${q.projectId} AND events.user_id IS NOT NULL AND events.ts >= ${lo} AND events.ts < ${hi}
        AND (${sql.join(matches, sql` OR `)})`);
    const users = new Map<string, StepEvent[]>();
    const rows = db.$client.prepare(query.sql).values(...(query.params as Bind[])) as [
      string,
      number,
      number,
      number,
    ][];
    for (const [user, ts, id, m] of rows) {
      const list = users.get(user);
      if (list) list.push({ ts, id, m });
      else users.set(user, [{ ts, id, m }]);
    }
    for (const list of users.values()) list.sort((a, b) => a.ts - b.ts || a.id - b.id);
    return users;
  }

  return {
    funnel(q: FunnelQuery): Promise<FunnelCounts> {
      return funnelCounts(q, {
        async latest(q, before) {
          const match = stepMatch(q);
          const query = dialect.sqlToQuery(sql`SELECT max(events.ts) FROM events INDEXED BY events_project_ts
            WHERE events.project_id = ${q.projectId} AND events.user_id IS NOT NULL AND events.ts < ${before} AND (${match})`);
          const [row] = db.$client.prepare(query.sql).values(...(query.params as Bind[])) as [number | null][];
          return row?.[0] ?? null;
        },
        async stepEvents(q, lo, hi, each) {
          each([...stepEvents(q, lo, hi)]);
        },
      });
    },

    dropped(q: DroppedQuery): string[] {
      const out: string[] = [];
      for (const [user, events] of stepEvents(q)) {
        if (q.after !== null && byCodePoint(user, q.after) <= 0) continue;
        if (chains(events, q).length === q.step - 1) out.push(user);
      }
      return out.sort(byCodePoint).slice(0, q.limit);
    },
  };
}
