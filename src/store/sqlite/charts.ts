// Saved charts and funnels, and the cards of each project's dashboard.
import { asc, eq } from "drizzle-orm";
import { type CardRef, type Chart, type ChartChanges, chartOfRow, type NewChart } from "../../model/chart.ts";
import type { Db } from "./db.ts";
import { charts, dashboards } from "./schema.ts";

type ChartRow = typeof charts.$inferSelect;

const toChart = (row: ChartRow): Chart => chartOfRow(row);

export function chartStore(db: Db) {
  return {
    create(chart: NewChart, now: number): Chart {
      return toChart(
        db
          .insert(charts)
          .values({ ...chart, definition: JSON.stringify(chart.definition), updatedAt: now })
          .returning()
          .get(),
      );
    },

    find(id: number): Chart | null {
      const row = db.select().from(charts).where(eq(charts.id, id)).get();
      return row ? toChart(row) : null;
    },

    list(projectId: number): Chart[] {
      return db.select().from(charts).where(eq(charts.projectId, projectId)).orderBy(asc(charts.id)).all().map(toChart);
    },

    update(id: number, changes: ChartChanges, now: number): Chart | null {
      const { definition, name } = changes;
      const row = db
        .update(charts)
        .set({
          ...(name === undefined ? {} : { name }),
          ...(definition === undefined ? {} : { definition: JSON.stringify(definition) }),
          updatedAt: now,
        })
        .where(eq(charts.id, id))
        .returning()
        .get();
      return row ? toChart(row) : null;
    },

    delete(id: number): boolean {
      return db.delete(charts).where(eq(charts.id, id)).returning({ id: charts.id }).all().length > 0;
    },

    // Writes run one at a time in the writer: a layout read in a transaction cannot change under it.
    layout(projectId: number, _options?: { lock?: boolean }): CardRef[] | null {
      const row = db
        .select({ cards: dashboards.cards })
        .from(dashboards)
        .where(eq(dashboards.projectId, projectId))
        .get();
      return row ? (JSON.parse(row.cards) as CardRef[]) : null;
    },

    setLayout(projectId: number, cards: CardRef[], now: number): void {
      const value = { cards: JSON.stringify(cards), updatedAt: now };
      db.insert(dashboards)
        .values({ projectId, ...value })
        .onConflictDoUpdate({ target: dashboards.projectId, set: value })
        .run();
    },
  };
}
