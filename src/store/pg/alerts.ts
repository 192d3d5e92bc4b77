// Alert rules, and the two reads their rounds make of the events: how many matched in a window, and
// when the latest one happened.
import { and, asc, eq, inArray, max, sql } from "drizzle-orm";
import type { Alert, AlertChanges } from "../../model/alert.ts";
import { alertOfRow, alertRow } from "../../model/alert-row.ts";
import type { AlertRepository } from "../store.ts";
import type { Ctx } from "./context.ts";
import { analyticsStore } from "./analytics.ts";
import { conditions } from "./events.ts";
import { alerts, events } from "./schema.ts";

type Row = typeof alerts.$inferSelect;

const toAlert = (row: Row): Alert => alertOfRow(row);

export function alertStore(ctx: Ctx): AlertRepository {
  const { db } = ctx;
  const analytics = analyticsStore(ctx);
  const row = (changes: AlertChanges) => alertRow(changes);
  return {
    async create(alert, now) {
      const [created] = await db
        .insert(alerts)
        .values({
          ...row(alert),
          state: "ok",
          since: now,
          createdAt: now,
          updatedAt: now,
        } as typeof alerts.$inferInsert)
        .returning();
      return toAlert(created!);
    },

    async find(id) {
      const [found] = await db.select().from(alerts).where(eq(alerts.id, id)).limit(1);
      return found ? toAlert(found) : null;
    },

    async list(projectId) {
      return (await db.select().from(alerts).where(eq(alerts.projectId, projectId)).orderBy(asc(alerts.id))).map(
        toAlert,
      );
    },

    async active() {
      return (await db.select().from(alerts).where(eq(alerts.paused, false)).orderBy(asc(alerts.id))).map(toAlert);
    },

    async update(id, changes, now) {
      const [updated] = await db
        .update(alerts)
        .set({ ...row(changes), updatedAt: now })
        .where(eq(alerts.id, id))
        .returning();
      return updated ? toAlert(updated) : null;
    },

    async delete(id) {
      return (await db.delete(alerts).where(eq(alerts.id, id)).returning({ id: alerts.id })).length > 0;
    },

    async transition(t, now) {
      // Compared and set in one statement: of two writers that saw the same state, one changes it.
      const changed = await db
        .update(alerts)
        .set({ state: t.to.state, since: t.to.since, lastNotified: t.to.lastNotified, lastChecked: now })
        .where(
          and(
            eq(alerts.id, t.id),
            eq(alerts.paused, false),
            eq(alerts.state, t.from.state),
            eq(alerts.since, t.from.since),
            sql`${alerts.lastNotified} IS NOT DISTINCT FROM ${t.from.lastNotified}::bigint`,
          ),
        )
        .returning({ id: alerts.id });
      return changed.length > 0;
    },

    async checked(ids, at) {
      if (ids.length) await db.update(alerts).set({ lastChecked: at }).where(inArray(alerts.id, ids));
    },

    async counts(questions) {
      const out: number[] = [];
      for (const { filter, from, to } of questions)
        out.push(
          (await analytics.series({ filter, bounds: [from, to], measure: "events", groupBy: null, limit: 1 }))[0]
            ?.total ?? 0,
        );
      return out;
    },

    async latest(filters, until) {
      const out: (number | null)[] = [];
      for (const filter of filters) {
        const [found] = await db
          .select({ ts: max(events.ts) })
          .from(events)
          .where(and(...conditions(filter, filter.tags ?? []), sql`${events.ts} <= ${until}`));
        out.push(found?.ts === null || found?.ts === undefined ? null : Number(found.ts));
      }
      return out;
    },
  };
}
