// Saved charts and funnels, and their places on a project's dashboard.
import { and, asc, eq, notInArray, sql } from "drizzle-orm";
import type { Chart, ChartChanges, NewChart } from "../../model/chart.ts";
import type { Db } from "./db.ts";
import { charts } from "./schema.ts";

type ChartRow = typeof charts.$inferSelect;

const toChart = (row: ChartRow): Chart => ({ ...row, definition: JSON.parse(row.definition) as Chart["definition"] });

export function chartStore(db: Db) {
  return {
    create(chart: NewChart, now: number): Chart {
      return toChart(db.insert(charts).values({ ...chart, definition: JSON.stringify(chart.definition), updatedAt: now }).returning().get());
    },

    find(id: number): Chart | null {
      const row = db.select().from(charts).where(eq(charts.id, id)).get();
      return row ? toChart(row) : null;
    },

    /** Pinned ones by position, then the rest in the order they were made. */
    list(projectId: number): Chart[] {
      return db.select().from(charts).where(eq(charts.projectId, projectId)).orderBy(sql`${charts.position} IS NULL`, asc(charts.position), asc(charts.id)).all().map(toChart);
    },

    update(id: number, changes: ChartChanges, now: number): Chart | null {
      const { definition, ...rest } = changes;
      const row = db
        .update(charts)
        .set({ ...rest, ...(definition === undefined ? {} : { definition: JSON.stringify(definition) }), updatedAt: now })
        .where(eq(charts.id, id))
        .returning()
        .get();
      return row ? toChart(row) : null;
    },

    delete(id: number): boolean {
      return db.delete(charts).where(eq(charts.id, id)).returning({ id: charts.id }).all().length > 0;
    },

    arrange(projectId: number, ids: number[], now: number): void {
      ids.forEach((id, position) => db.update(charts).set({ position, updatedAt: now }).where(and(eq(charts.id, id), eq(charts.projectId, projectId))).run());
      const others = and(eq(charts.projectId, projectId), ids.length ? notInArray(charts.id, ids) : undefined);
      db.update(charts).set({ position: null, updatedAt: now }).where(and(others, sql`${charts.position} IS NOT NULL`)).run();
    },
  };
}
