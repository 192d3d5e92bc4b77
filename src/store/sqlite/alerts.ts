// The two reads alert rules' rounds make of the events (the rules themselves are
// store/aggregates/alerts.ts): how many matched in a window (an index range per rule, as a chart's
// bucket is counted), and when the latest one happened.
import { and, type SQL, sql } from "drizzle-orm";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import type { EventFilter } from "../../model/filter.ts";
import type { WindowQuestion } from "../store.ts";
import type { Db } from "./db.ts";
import { analyticsStore } from "./analytics.ts";
import { conditions } from "./event-source.ts";

const dialect = new SQLiteSyncDialect();

export function alertReads(db: Db, searching: () => Db) {
  const analytics = analyticsStore(db, searching);
  return {
    /** Each question's events with from <= time < to, counted as a chart's bucket is. */
    async counts(questions: WindowQuestion[]): Promise<number[]> {
      const out: number[] = [];
      for (const { filter, from, to } of questions) {
        const lines = await analytics.series({
          filter,
          bounds: [from, to],
          measure: "events",
          groupBy: null,
          limit: 1,
        });
        out.push(lines[0]?.total ?? 0);
      }
      return out;
    },

    /** When each filter's latest event up to `until` happened; null when none did. */
    latest(filters: (EventFilter & { projectId: number })[], until: number): (number | null)[] {
      return filters.map((filter) => {
        const where = dialect.sqlToQuery(
          and(...conditions(filter, filter.tags ?? []), sql`events.ts <= ${until}`) as SQL,
        );
        const found = db.$client
          .prepare<{ ts: number | null }, (string | number | null)[]>(
            `SELECT max(events.ts) AS ts FROM events WHERE ${where.sql}`,
          )
          .get(...(where.params as (string | number | null)[]));
        return found?.ts ?? null;
      });
    },
  };
}
