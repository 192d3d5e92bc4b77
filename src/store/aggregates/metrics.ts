// Metrics: the current value per (project, title), and a per-minute history for charts. What ingest
// writes (the current value, an increment, this minute's point) and the history's buckets are tuned
// per store (sqlite/metrics.ts, pg/metrics.ts): their planners want different SQL.
import { and, asc, desc, eq, gte, lt, lte, type SQL } from "drizzle-orm";
import type { MetricRepository } from "../store.ts";
import { metricValue, toMetric } from "../rows.ts";
import { hasNul, type Sql } from "./sql.ts";

/** What each store tunes of metrics. */
export type TunedMetrics = Pick<MetricRepository, "current" | "save" | "increment" | "buckets">;

export function metricStore({ db, t }: Sql): Omit<MetricRepository, keyof TunedMetrics> {
  const { metricHistory, metrics, projects } = t;
  const select = (where: SQL | undefined) =>
    db
      .select({
        id: metrics.id,
        projectId: metrics.projectId,
        project: projects.name,
        title: metrics.title,
        valueNum: metrics.valueNum,
        valueText: metrics.valueText,
        icon: metrics.icon,
        updatedAt: metrics.updatedAt,
      })
      .from(metrics)
      .innerJoin(projects, eq(projects.id, metrics.projectId))
      .where(where);
  const points = (where: SQL | undefined) =>
    db
      .select({ at: metricHistory.minute, valueNum: metricHistory.valueNum, valueText: metricHistory.valueText })
      .from(metricHistory)
      .where(where);
  const point = (p: { at: number; valueNum: number | null; valueText: string | null }) => ({
    at: p.at,
    value: metricValue(p.valueNum, p.valueText),
  });

  return {
    async list(projectId) {
      return (await select(eq(metrics.projectId, projectId)).orderBy(asc(metrics.title))).map(toMetric);
    },

    async find(projectId, title) {
      if (hasNul(title)) return null;
      const [row] = await select(and(eq(metrics.projectId, projectId), eq(metrics.title, title))).limit(1);
      return row ? toMetric(row) : null;
    },

    async history(metricId, since, until, limit, order = "asc") {
      const rows = await points(
        and(eq(metricHistory.metricId, metricId), gte(metricHistory.minute, since), lte(metricHistory.minute, until)),
      )
        .orderBy(order === "desc" ? desc(metricHistory.minute) : asc(metricHistory.minute))
        .limit(limit);
      return rows.map(point);
    },

    async pointBefore(metricId, before) {
      const [row] = await points(and(eq(metricHistory.metricId, metricId), lt(metricHistory.minute, before)))
        .orderBy(desc(metricHistory.minute))
        .limit(1);
      return row ? point(row) : null;
    },

    async delete(metricId) {
      await db.delete(metrics).where(eq(metrics.id, metricId));
    },
  };
}
