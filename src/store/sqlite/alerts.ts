// Alert rules, and the two reads their rounds make of the events: how many matched in a window (an
// index range per rule, as a chart's bucket is counted), and when the latest one happened.
import { and, asc, eq, type SQL, sql } from "drizzle-orm";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import type { Alert, AlertChanges, AlertTransition, NewAlert } from "../../model/alert.ts";
import { alertOfRow, alertRow } from "../../model/alert-row.ts";
import type { EventFilter } from "../../model/filter.ts";
import type { WindowQuestion } from "../store.ts";
import type { Db } from "./db.ts";
import { analyticsStore } from "./analytics.ts";
import { conditions } from "./events.ts";
import { alerts } from "./schema.ts";

const dialect = new SQLiteSyncDialect();
type Row = typeof alerts.$inferSelect;

const toAlert = (row: Row): Alert => alertOfRow(row);

export function alertStore(db: Db, searching: () => Db) {
  const analytics = analyticsStore(db, searching);
  const row = (changes: AlertChanges) => alertRow(changes);
  return {
    create(alert: NewAlert, now: number): Alert {
      return toAlert(
        db
          .insert(alerts)
          .values({
            ...row(alert),
            state: "ok",
            since: now,
            createdAt: now,
            updatedAt: now,
          } as typeof alerts.$inferInsert)
          .returning()
          .get(),
      );
    },

    find(id: number): Alert | null {
      const found = db.select().from(alerts).where(eq(alerts.id, id)).get();
      return found ? toAlert(found) : null;
    },

    list(projectId: number): Alert[] {
      return db.select().from(alerts).where(eq(alerts.projectId, projectId)).orderBy(asc(alerts.id)).all().map(toAlert);
    },

    active(): Alert[] {
      return db.select().from(alerts).where(eq(alerts.paused, false)).orderBy(asc(alerts.id)).all().map(toAlert);
    },

    update(id: number, changes: AlertChanges & { state?: Alert["state"]; since?: number }, now: number): Alert | null {
      const updated = db
        .update(alerts)
        .set({ ...row(changes), updatedAt: now })
        .where(eq(alerts.id, id))
        .returning()
        .get();
      return updated ? toAlert(updated) : null;
    },

    delete(id: number): boolean {
      return db.delete(alerts).where(eq(alerts.id, id)).returning({ id: alerts.id }).all().length > 0;
    },

    transition(t: AlertTransition, now: number): boolean {
      const changed = db
        .update(alerts)
        .set({ state: t.to.state, since: t.to.since, lastNotified: t.to.lastNotified, lastChecked: now })
        .where(
          and(
            eq(alerts.id, t.id),
            eq(alerts.paused, false),
            eq(alerts.state, t.from.state),
            eq(alerts.since, t.from.since),
            sql`${alerts.lastNotified} IS ${t.from.lastNotified}`,
          ),
        )
        .returning({ id: alerts.id })
        .all();
      return changed.length > 0;
    },

    checked(ids: number[], at: number): void {
      // One statement for a round's rules, however many.
      db.$client
        .prepare<never, [number, string]>(
          "UPDATE alerts SET last_checked = ? WHERE id IN (SELECT value FROM json_each(?))",
        )
        .run(at, JSON.stringify(ids));
    },

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
