// Saved charts and funnels, and the cards of each project's dashboard.
import { asc, eq } from "drizzle-orm";
import type { CardRef, Chart } from "../../model/chart.ts";
import type { ChartRepository } from "../store.ts";
import type { Sql } from "./sql.ts";

export function chartStore({ db, t, forUpdate }: Sql): ChartRepository {
  const toChart = (row: typeof t.charts.$inferSelect): Chart => ({
    ...row,
    definition: JSON.parse(row.definition) as Chart["definition"],
  });
  return {
    async create(chart, now) {
      const [row] = await db
        .insert(t.charts)
        .values({ ...chart, definition: JSON.stringify(chart.definition), updatedAt: now })
        .returning();
      return toChart(row!);
    },

    async find(id) {
      const [row] = await db.select().from(t.charts).where(eq(t.charts.id, id)).limit(1);
      return row ? toChart(row) : null;
    },

    async list(projectId) {
      const rows = await db.select().from(t.charts).where(eq(t.charts.projectId, projectId)).orderBy(asc(t.charts.id));
      return rows.map(toChart);
    },

    async update(id, changes, now) {
      const { definition, name } = changes;
      const [row] = await db
        .update(t.charts)
        .set({
          ...(name === undefined ? {} : { name }),
          ...(definition === undefined ? {} : { definition: JSON.stringify(definition) }),
          updatedAt: now,
        })
        .where(eq(t.charts.id, id))
        .returning();
      return row ? toChart(row) : null;
    },

    async delete(id) {
      return (await db.delete(t.charts).where(eq(t.charts.id, id)).returning({ id: t.charts.id })).length > 0;
    },

    async layout(projectId, options) {
      // Locked, the row is held to the end of the transaction, so two changes made at once from the
      // same layout (two pins on two instances) both land; a project never arranged has no row to
      // lock, so one is made for it first ("null": no layout yet).
      if (options?.lock)
        await db.insert(t.dashboards).values({ projectId, cards: "null", updatedAt: 0 }).onConflictDoNothing();
      const read = db
        .select({ cards: t.dashboards.cards })
        .from(t.dashboards)
        .where(eq(t.dashboards.projectId, projectId))
        .limit(1);
      const [row] = options?.lock ? await forUpdate(read) : await read;
      return row ? (JSON.parse(row.cards) as CardRef[] | null) : null;
    },

    async setLayout(projectId, cards, now) {
      const value = { cards: JSON.stringify(cards), updatedAt: now };
      await db
        .insert(t.dashboards)
        .values({ projectId, ...value })
        .onConflictDoUpdate({ target: t.dashboards.projectId, set: value });
    },
  };
}
