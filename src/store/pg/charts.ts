// Saved charts and funnels, and the cards of each project's dashboard.
import { asc, eq } from "drizzle-orm";
import { type CardRef, type Chart, chartOfRow } from "../../model/chart.ts";
import type { ChartRepository } from "../store.ts";
import type { Ctx } from "./context.ts";
import { charts, dashboards } from "./schema.ts";

type ChartRow = typeof charts.$inferSelect;

const toChart = (row: ChartRow): Chart => chartOfRow(row);

export function chartStore(ctx: Ctx): ChartRepository {
  const { db } = ctx;
  return {
    async create(chart, now) {
      const [row] = await db
        .insert(charts)
        .values({ ...chart, definition: JSON.stringify(chart.definition), updatedAt: now })
        .returning();
      return toChart(row!);
    },

    async find(id) {
      const [row] = await db.select().from(charts).where(eq(charts.id, id)).limit(1);
      return row ? toChart(row) : null;
    },

    async list(projectId) {
      return (await db.select().from(charts).where(eq(charts.projectId, projectId)).orderBy(asc(charts.id))).map(
        toChart,
      );
    },

    async update(id, changes, now) {
      const { definition, name } = changes;
      const [row] = await db
        .update(charts)
        .set({
          ...(name === undefined ? {} : { name }),
          ...(definition === undefined ? {} : { definition: JSON.stringify(definition) }),
          updatedAt: now,
        })
        .where(eq(charts.id, id))
        .returning();
      return row ? toChart(row) : null;
    },

    async delete(id) {
      return (await db.delete(charts).where(eq(charts.id, id)).returning({ id: charts.id })).length > 0;
    },

    async layout(projectId, options) {
      // Locked, the row is held to the end of the transaction, so two changes made at once from
      // the same layout (two pins on two instances) both land; a project never arranged has no row
      // to lock, so one is made for it first.
      if (options?.lock)
        await db.insert(dashboards).values({ projectId, cards: "null", updatedAt: 0 }).onConflictDoNothing();
      const read = db.select({ cards: dashboards.cards }).from(dashboards).where(eq(dashboards.projectId, projectId));
      const [row] = options?.lock ? await read.for("update") : await read.limit(1);
      return row ? (JSON.parse(row.cards) as CardRef[] | null) : null;
    },

    async setLayout(projectId, cards, now) {
      const value = { cards: JSON.stringify(cards), updatedAt: now };
      await db
        .insert(dashboards)
        .values({ projectId, ...value })
        .onConflictDoUpdate({ target: dashboards.projectId, set: value });
    },
  };
}
