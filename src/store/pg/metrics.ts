// What PostgreSQL tunes of metrics (the rest is store/aggregates/metrics.ts): the current value and
// an increment as ingest writes them (one statement each, race-free between instances), with this
// minute's point, and the history's buckets.
import { and, eq, sql } from "drizzle-orm";
import { rowsOn } from "./db.ts";
import type { TunedMetrics } from "../aggregates/metrics.ts";
import { type EndRow, endsOf, metricColumns, metricValue, type SpanRow, toBuckets } from "../rows.ts";
import type { Ctx } from "./context.ts";
import { metricHistory, metrics } from "./schema.ts";

const MINUTE = 60_000;

export function tunedMetrics({ db }: Ctx): TunedMetrics {
  const rows = rowsOn(db);
  const record = (metricId: number, now: number, valueNum: number | null, valueText: string | null) =>
    db
      .insert(metricHistory)
      .values({ metricId, minute: now - (now % MINUTE), valueNum, valueText })
      .onConflictDoUpdate({ target: [metricHistory.metricId, metricHistory.minute], set: { valueNum, valueText } });

  const find = async (projectId: number, title: string) => {
    const [row] = await db
      .select({ id: metrics.id, valueNum: metrics.valueNum, valueText: metrics.valueText, icon: metrics.icon })
      .from(metrics)
      .where(and(eq(metrics.projectId, projectId), eq(metrics.title, title)))
      .limit(1);
    return row;
  };
  /** The metric's row as ingest writes it (the same statement makes it or changes it). */
  const upsert = (m: Omit<Parameters<TunedMetrics["save"]>[0], "value">, value: ReturnType<typeof metricColumns>) =>
    db.insert(metrics).values({
      projectId: m.projectId,
      title: m.title,
      ...value,
      icon: m.icon,
      createdAt: m.now,
      updatedAt: m.now,
    });

  return {
    async current(projectId, title) {
      const row = await find(projectId, title);
      return row ? { id: row.id, value: metricValue(row.valueNum, row.valueText), icon: row.icon } : null;
    },

    async save(m) {
      const { valueNum, valueText } = metricColumns(m.value);
      const [saved] = await upsert(m, { valueNum, valueText })
        .onConflictDoUpdate({
          target: [metrics.projectId, metrics.title],
          set: { valueNum, valueText, icon: sql`coalesce(excluded.icon, ${metrics.icon})`, updatedAt: m.now },
        })
        .returning({ id: metrics.id, icon: metrics.icon });
      await record(saved!.id, m.now, valueNum, valueText);
      return saved!;
    },

    async increment(m) {
      // One statement: concurrent increments (from any instance) each add to what the last one left.
      const [sum] = await upsert(m, { valueNum: m.delta, valueText: null })
        .onConflictDoUpdate({
          target: [metrics.projectId, metrics.title],
          set: {
            valueNum: sql`${metrics.valueNum} + excluded.value_num`,
            icon: sql`coalesce(excluded.icon, ${metrics.icon})`,
            updatedAt: m.now,
          },
          setWhere: sql`${metrics.valueText} is null`,
        })
        .returning({ id: metrics.id, value: metrics.valueNum, icon: metrics.icon })
        .catch((error: { cause?: { errno?: string } }) => {
          // Past the largest double: PostgreSQL refuses the sum (SQLite makes it infinite); the caller refuses both.
          if (error?.cause?.errno === "22003") return [{ id: 0, value: Number.POSITIVE_INFINITY, icon: null }];
          throw error;
        });
      if (!sum) {
        const row = (await find(m.projectId, m.title))!;
        return { holds: metricValue(row.valueNum, row.valueText)! };
      }
      if (Number.isFinite(sum.value)) await record(sum.id, m.now, sum.value, null); // an overflow is refused by the caller
      return { id: sum.id, value: sum.value!, icon: sum.icon };
    },

    async buckets(metricId, since, until, width) {
      const spans = await rows<SpanRow>(sql`
        select minute - ((minute % ${width}::bigint) + ${width}::bigint) % ${width}::bigint as at, count(*) as count,
          min(minute) as "firstAt", max(minute) as "lastAt", min(value_num) as min, max(value_num) as max, count(value_text) as texts
        from metric_history where metric_id = ${metricId} and minute >= ${since} and minute <= ${until}
        group by 1 order by 1`);
      if (!spans.length) return [];
      // The first and last values apart: joined to the grouped spans in one statement, the planner
      // takes them for as many rows as the range and hashes the whole table.
      const ends = await rows<EndRow>(sql`
        select minute, value_num as num, value_text as text from metric_history
        where metric_id = ${metricId} and minute in (select value::bigint from jsonb_array_elements_text(${JSON.stringify(endsOf(spans))}::text::jsonb))`);
      return toBuckets(spans, ends);
    },
  };
}
