// Alert rules: what each expects and its state. The two reads their rounds make of the events (how
// many matched in a window, when the latest one happened) are tuned per store (sqlite/alerts.ts,
// pg/alerts.ts).
import { and, asc, eq, isNull } from "drizzle-orm";
import { alertOfRow as toAlert, alertRow as toRow } from "../../model/alert-row.ts";
import type { AlertRepository } from "../store.ts";
import type { Sql } from "./sql.ts";

/** What a round asks of the events: tuned by each store. */
export type AlertReads = Pick<AlertRepository, "counts" | "latest">;

export function alertRules({ db, t, idIn }: Sql): Omit<AlertRepository, keyof AlertReads> {
  const { alerts } = t;
  return {
    async create(alert, now) {
      const [created] = await db
        .insert(alerts)
        .values({
          ...toRow(alert),
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
      const rows = await db.select().from(alerts).where(eq(alerts.projectId, projectId)).orderBy(asc(alerts.id));
      return rows.map(toAlert);
    },

    async active() {
      return (await db.select().from(alerts).where(eq(alerts.paused, false)).orderBy(asc(alerts.id))).map(toAlert);
    },

    async update(id, changes, now) {
      const [updated] = await db
        .update(alerts)
        .set({ ...toRow(changes), updatedAt: now })
        .where(eq(alerts.id, id))
        .returning();
      return updated ? toAlert(updated) : null;
    },

    async delete(id) {
      return (await db.delete(alerts).where(eq(alerts.id, id)).returning({ id: alerts.id })).length > 0;
    },

    async transition({ id, from, to }, now) {
      // Compared and set in one statement: of two writers that saw the same state, one changes it.
      const changed = await db
        .update(alerts)
        .set({
          state: to.state,
          since: to.since,
          lastNotified: to.lastNotified,
          streak: to.streak,
          notified: to.notified,
          lastChecked: now,
        })
        .where(
          and(
            eq(alerts.id, id),
            eq(alerts.paused, false),
            eq(alerts.state, from.state),
            eq(alerts.since, from.since),
            eq(alerts.streak, from.streak),
            eq(alerts.notified, from.notified),
            from.lastNotified === null ? isNull(alerts.lastNotified) : eq(alerts.lastNotified, from.lastNotified),
          ),
        )
        .returning({ id: alerts.id });
      return changed.length > 0;
    },

    async checked(ids, at) {
      // One statement for a round's rules, however many.
      if (ids.length) await db.update(alerts).set({ lastChecked: at }).where(idIn(alerts.id, ids));
    },
  };
}
