// Saved charts and funnels, and their places on a project's dashboard.
import { and, asc, eq, notInArray, sql } from "drizzle-orm";
import type { Chart } from "../../model/chart.ts";
import type { ChartRepository } from "../store.ts";
import type { Ctx } from "./context.ts";
import { charts } from "./schema.ts";

type ChartRow = typeof charts.$inferSelect;

const toChart = (row: ChartRow): Chart => ({ ...row, definition: JSON.parse(row.definition) as Chart["definition"] });

export function chartStore(ctx: Ctx): ChartRepository {
  const { db } = ctx;
  return {
    async create(chart, now) {
      const [row] = await db.insert(charts).values({ ...chart, definition: JSON.stringify(chart.definition), updatedAt: now }).returning();
      return toChart(row!);
    },

    async find(id) {
      const [row] = await db.select().from(charts).where(eq(charts.id, id)).limit(1);
      return row ? toChart(row) : null;
    },

    async list(projectId) {
      const rows = await db.select().from(charts).where(eq(charts.projectId, projectId)).orderBy(sql`${charts.position} IS NULL`, asc(charts.position), asc(charts.id));
      return rows.map(toChart);
    },

    async update(id, changes, now) {
      const { definition, ...rest } = changes;
      const [row] = await db
        .update(charts)
        .set({ ...rest, ...(definition === undefined ? {} : { definition: JSON.stringify(definition) }), updatedAt: now })
        .where(eq(charts.id, id))
        .returning();
      return row ? toChart(row) : null;
    },

    async delete(id) {
      return (await db.delete(charts).where(eq(charts.id, id)).returning({ id: charts.id })).length > 0;
    },

    async arrange(projectId, ids, now) {
      for (const [position, id] of ids.entries()) await db.update(charts).set({ position, updatedAt: now }).where(and(eq(charts.id, id), eq(charts.projectId, projectId)));
      const others = and(eq(charts.projectId, projectId), ids.length ? notInArray(charts.id, ids) : undefined);
      await db.update(charts).set({ position: null, updatedAt: now }).where(and(others, sql`${charts.position} IS NOT NULL`));
    },
  };
}
