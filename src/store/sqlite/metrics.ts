// Metrics: the current value per (project, title), and a per-minute history for charts.
import { type EndRow, endsOf, metricColumns, metricValue, type SpanRow, toBuckets, toMetric } from "../rows.ts";
import { and, asc, desc, eq, gte, lt, lte } from "drizzle-orm";
import type { Db } from "./db.ts";
import { metricHistory, metrics, projects } from "./schema.ts";
import type { Metric, MetricBucket, MetricPoint, MetricValue } from "../../model/metric.ts";

const MINUTE = 60_000;

export function metricStore(db: Db) {
  // The ingest path: plain prepared statements.
  const find = db.$client.prepare<
    { id: number; valueNum: number | null; valueText: string | null; icon: string | null },
    [number, string]
  >("SELECT id, value_num AS valueNum, value_text AS valueText, icon FROM metrics WHERE project_id = ? AND title = ?");
  const upsert = db.$client.prepare<{ id: number; icon: string | null }, (string | number | null)[]>(
    `INSERT INTO metrics (project_id, title, value_num, value_text, icon, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)
     ON CONFLICT (project_id, title) DO UPDATE SET value_num = excluded.value_num, value_text = excluded.value_text,
       icon = coalesce(excluded.icon, metrics.icon), updated_at = excluded.updated_at
     RETURNING id, icon`,
  );
  // Adds to the number where the metric holds one; no row comes back where it holds text.
  const increment = db.$client.prepare<{ id: number; value: number; icon: string | null }, (string | number | null)[]>(
    `INSERT INTO metrics (project_id, title, value_num, value_text, icon, created_at, updated_at) VALUES (?1, ?2, ?3, NULL, ?4, ?5, ?5)
     ON CONFLICT (project_id, title) DO UPDATE SET value_num = metrics.value_num + excluded.value_num,
       icon = coalesce(excluded.icon, metrics.icon), updated_at = excluded.updated_at
     WHERE metrics.value_text IS NULL
     RETURNING id, value_num AS value, icon`,
  );
  const record = db.$client.prepare<never, (string | number | null)[]>(
    `INSERT INTO metric_history (metric_id, minute, value_num, value_text) VALUES (?, ?, ?, ?)
     ON CONFLICT (metric_id, minute) DO UPDATE SET value_num = excluded.value_num, value_text = excluded.value_text`,
  );

  // A metric's history in spans. Grouping sorts the range's rows (SQLite has no hash aggregate):
  // 160 ms for a year of minutes in 12-hour spans, where a walk that aggregates one span at a time
  // along the primary key takes 75 ms; for narrow spans the walk's statement per span costs more
  // (a week in 15-minute spans: 18 ms, grouped 3 ms). So spans of two hours or more are walked.
  const spanColumns =
    "count(*) AS count, min(minute) AS firstAt, max(minute) AS lastAt, min(value_num) AS min, max(value_num) AS max, count(value_text) AS texts";
  const spansGrouped = db.$client.prepare<SpanRow, [number, number, number, number]>(
    `SELECT minute - ((minute % ?1) + ?1) % ?1 AS at, ${spanColumns}
     FROM metric_history WHERE metric_id = ?2 AND minute >= ?3 AND minute <= ?4 GROUP BY at ORDER BY at`,
  );
  const span = db.$client.prepare<Omit<SpanRow, "at">, [number, number, number]>(
    `SELECT ${spanColumns} FROM metric_history WHERE metric_id = ? AND minute >= ? AND minute <= ?`,
  );
  const nextMinute = db.$client.prepare<{ minute: number }, [number, number, number]>(
    "SELECT minute FROM metric_history WHERE metric_id = ? AND minute >= ? AND minute <= ? ORDER BY minute LIMIT 1",
  );
  const pointsAt = db.$client.prepare<EndRow, [number, string]>(
    "SELECT minute, value_num AS num, value_text AS text FROM metric_history WHERE metric_id = ? AND minute IN (SELECT value FROM json_each(?))",
  );
  const WALKED = 120 * MINUTE;

  function spansWalked(metricId: number, since: number, until: number, width: number): SpanRow[] {
    const spans: SpanRow[] = [];
    for (let from = since; from <= until; ) {
      const at = from - (((from % width) + width) % width);
      const found = span.get(metricId, from, Math.min(at + width - 1, until))!;
      if (found.count) spans.push({ at, ...found });
      // An empty span: the next point, found in one step, is where the walk goes on.
      const next = found.count ? { minute: at + width } : nextMinute.get(metricId, at + width, until);
      if (!next) break;
      from = next.minute;
    }
    return spans;
  }

  const selectRow = {
    id: metrics.id,
    projectId: metrics.projectId,
    project: projects.name,
    title: metrics.title,
    valueNum: metrics.valueNum,
    valueText: metrics.valueText,
    icon: metrics.icon,
    updatedAt: metrics.updatedAt,
  };

  return {
    current(projectId: number, title: string): { id: number; value: MetricValue | null; icon: string | null } | null {
      const row = find.get(projectId, title);
      return row ? { id: row.id, value: metricValue(row.valueNum, row.valueText), icon: row.icon } : null;
    },

    /** Stores the value as current and as this minute's point in the history. */
    save(m: { projectId: number; title: string; value: MetricValue; icon: string | null; now: number }): {
      id: number;
      icon: string | null;
    } {
      const { valueNum, valueText } = metricColumns(m.value);
      const saved = upsert.get(m.projectId, m.title, valueNum, valueText, m.icon, m.now)!;
      record.run(saved.id, m.now - (m.now % MINUTE), valueNum, valueText);
      return saved;
    },

    increment(m: {
      projectId: number;
      title: string;
      delta: number;
      icon: string | null;
      now: number;
    }): { id: number; value: number; icon: string | null } | { holds: MetricValue } {
      const saved = increment.get(m.projectId, m.title, m.delta, m.icon, m.now);
      if (!saved) {
        const row = find.get(m.projectId, m.title)!;
        return { holds: metricValue(row.valueNum, row.valueText)! };
      }
      record.run(saved.id, m.now - (m.now % MINUTE), saved.value, null);
      return saved;
    },

    list(projectId: number): Metric[] {
      return db
        .select(selectRow)
        .from(metrics)
        .innerJoin(projects, eq(projects.id, metrics.projectId))
        .where(eq(metrics.projectId, projectId))
        .orderBy(asc(metrics.title))
        .all()
        .map(toMetric);
    },

    find(projectId: number, title: string): Metric | null {
      const row = db
        .select(selectRow)
        .from(metrics)
        .innerJoin(projects, eq(projects.id, metrics.projectId))
        .where(and(eq(metrics.projectId, projectId), eq(metrics.title, title)))
        .get();
      return row ? toMetric(row) : null;
    },

    history(
      metricId: number,
      since: number,
      until: number,
      limit: number,
      order: "asc" | "desc" = "asc",
    ): MetricPoint[] {
      return db
        .select({ at: metricHistory.minute, valueNum: metricHistory.valueNum, valueText: metricHistory.valueText })
        .from(metricHistory)
        .where(
          and(eq(metricHistory.metricId, metricId), gte(metricHistory.minute, since), lte(metricHistory.minute, until)),
        )
        .orderBy(order === "desc" ? desc(metricHistory.minute) : asc(metricHistory.minute))
        .limit(limit)
        .all()
        .map((p) => ({ at: p.at, value: metricValue(p.valueNum, p.valueText) }));
    },

    buckets(metricId: number, since: number, until: number, width: number): MetricBucket[] {
      const spans =
        width >= WALKED ? spansWalked(metricId, since, until, width) : spansGrouped.all(width, metricId, since, until);
      return spans.length ? toBuckets(spans, pointsAt.all(metricId, JSON.stringify(endsOf(spans)))) : [];
    },

    pointBefore(metricId: number, before: number): MetricPoint | null {
      const row = db
        .select({ at: metricHistory.minute, valueNum: metricHistory.valueNum, valueText: metricHistory.valueText })
        .from(metricHistory)
        .where(and(eq(metricHistory.metricId, metricId), lt(metricHistory.minute, before)))
        .orderBy(desc(metricHistory.minute))
        .limit(1)
        .get();
      return row ? { at: row.at, value: metricValue(row.valueNum, row.valueText) } : null;
    },

    delete(metricId: number): void {
      db.delete(metrics).where(eq(metrics.id, metricId)).run();
    },
  };
}
