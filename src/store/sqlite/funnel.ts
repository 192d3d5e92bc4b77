// Funnels on SQLite, in a reader process: the events of the funnel's steps in its range (one
// statement, along the project's time index) are walked here, user by user. SQLite lets a query
// keep no state from row to row, and bun:sqlite registers no functions, so the walk that follows a
// user's chain of steps is code; the PostgreSQL store (store/pg/funnel.ts) asks the same of SQL.
import { and, sql } from "drizzle-orm";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import type { DroppedQuery, FunnelCounts, FunnelQuery } from "../../model/analytics.ts";
import type { Db } from "./db.ts";
import { byCodePoint } from "../series.ts";
import { conditions } from "./events.ts";

const dialect = new SQLiteSyncDialect();
type Bind = string | number | null;

/** An event of one of the steps: which ones it matches are the bits of `m` (step j, from 0: bit j). */
type StepEvent = { ts: number; id: number; m: number };

/** An event that reached a step: the latest start (step 1's time) of a chain that reaches it there, and when that chain did the step before. */
type Reached = StepEvent & { s: number; p: number };

export function funnelStore(db: Db) {
  /** Each user's events of the steps, oldest first (by time, then as stored). */
  function stepEvents(q: FunnelQuery): Map<string, StepEvent[]> {
    const matches = q.steps.map(
      (step) =>
        and(...conditions({ projectId: q.projectId, event: step.event, channel: step.channel }, step.tags ?? []))!,
    );
    const mask = sql.join(
      matches.map((m, j) => sql`(CASE WHEN ${m} THEN ${1 << j} ELSE 0 END)`),
      sql` + `,
    );
    const query =
      dialect.sqlToQuery(sql`SELECT events.user_id, events.ts, events.id, ${mask} FROM events INDEXED BY events_project_ts
      WHERE events.project_id = ${q.projectId} AND events.user_id IS NOT NULL AND events.ts >= ${q.from} AND events.ts < ${q.to + q.window}
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
    funnel(q: FunnelQuery): FunnelCounts {
      const users = new Array<number>(q.steps.length).fill(0);
      const deltas = q.steps.map(() => [] as number[]);
      for (const events of stepEvents(q).values()) {
        const levels = chains(events, q);
        levels.forEach((level, j) => {
          users[j]!++;
          if (j > 0) deltas[j]!.push(latest(level).ts - latest(level).p);
        });
      }
      return users.map((n, j) => ({ users: n, medianMs: j > 0 ? median(deltas[j]!) : null }));
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

/**
 * A user's chains, step by step: the events that reach each step (an empty step ends the list).
 * A step's event takes the latest start among the events of the step before that come before it
 * (the later the start, the more of the window is left), if it is within the window of it. At equal
 * times an event of only the earlier step comes first, one of only the later step last, and one
 * of both steps in stored order, so one event never counts for two steps of a chain.
 */
export function chains(events: StepEvent[], q: Pick<FunnelQuery, "steps" | "from" | "to" | "window">): Reached[][] {
  const first = events.filter((e) => e.m & 1 && e.ts >= q.from && e.ts < q.to).map((e) => ({ ...e, s: e.ts, p: e.ts }));
  const levels: Reached[][] = first.length ? [first] : [];
  for (let j = 1; j < q.steps.length && levels.length === j; j++) {
    const bit = 1 << j;
    const before = 1 << (j - 1);
    const rows = [
      ...levels[j - 1]!.map((e) => ({ e, next: false, g: e.m & bit ? 1 : 0, tie: e.m & bit ? e.id : 0, sub: 1 })),
      ...events
        .filter((e) => e.m & bit)
        .map((e) => ({ e, next: true, g: e.m & before ? 1 : 2, tie: e.m & before ? e.id : 0, sub: 0 })),
    ].sort((a, b) => a.e.ts - b.e.ts || a.g - b.g || a.tie - b.tie || a.sub - b.sub);
    let start = Number.NEGATIVE_INFINITY;
    let previous = 0;
    const reached: Reached[] = [];
    for (const { e, next } of rows) {
      if (!next) {
        const s = (e as Reached).s;
        if (s > start) [start, previous] = [s, e.ts];
      } else if (e.ts - start <= q.window) reached.push({ ...e, s: start, p: previous });
    }
    if (reached.length) levels.push(reached);
  }
  return levels;
}

/** The chain that reached a step with the latest start, at its earliest event there. */
function latest(level: Reached[]): Reached {
  return level.reduce((best, r) => (r.s > best.s || (r.s === best.s && r.ts < best.ts) ? r : best));
}

function median(values: number[]): number | null {
  if (!values.length) return null;
  values.sort((a, b) => a - b);
  const mid = values.length >> 1;
  return values.length % 2 ? values[mid]! : (values[mid - 1]! + values[mid]!) / 2;
}
