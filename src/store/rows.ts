// Rows as both dialects select them, turned into the model's entities: the columns are the same
// in each schema (by name), so the mapping is written once.
import type { StoredEvent, Tags } from "../model/event.ts";
import type { Metric, MetricBucket, MetricValue } from "../model/metric.ts";

/** An event row as selected (tags as their JSON text). */
export type EventRow = Omit<StoredEvent, "tags"> & { tags: string | null };

export const toEvent = (row: EventRow): StoredEvent => ({
  ...row,
  tags: row.tags ? (JSON.parse(row.tags) as Tags) : null,
});

/**
 * A metric's value from its two columns: text, or else the number. A boolean fills both (1 or 0,
 * so a chart can draw it, and "true" or "false"), which neither a number nor a text does.
 */
export const metricValue = (num: number | null, text: string | null): MetricValue | null =>
  num !== null && text !== null ? text === "true" : (text ?? num);

/** The two columns that hold `value`. */
export function metricColumns(value: MetricValue): { valueNum: number | null; valueText: string | null } {
  if (typeof value === "boolean") return { valueNum: value ? 1 : 0, valueText: String(value) };
  return typeof value === "number" ? { valueNum: value, valueText: null } : { valueNum: null, valueText: value };
}

/** A metric row as selected (its value in two columns). */
export type MetricRow = { valueNum: number | null; valueText: string | null } & Omit<Metric, "value">;

export const toMetric = ({ valueNum, valueText, ...rest }: MetricRow): Metric => ({
  ...rest,
  value: metricValue(valueNum, valueText),
});

/** A span of a metric's history as grouped (PostgreSQL gives bigints and counts as text). */
export type SpanRow = {
  at: number | string;
  count: number | string;
  firstAt: number | string;
  lastAt: number | string;
  min: number | null;
  max: number | null;
  texts: number | string;
};

/** A point of the history, looked up by its minute. */
export type EndRow = { minute: number | string; num: number | null; text: string | null };

/** The minutes whose values the spans' first and last points need. */
export const endsOf = (spans: SpanRow[]): number[] => spans.flatMap((s) => [Number(s.firstAt), Number(s.lastAt)]);

/** Spans with their first and last values (a span whose points went meanwhile, with their metric, is left out). */
export function toBuckets(spans: SpanRow[], ends: EndRow[]): MetricBucket[] {
  const at = new Map(ends.map((e) => [Number(e.minute), metricValue(e.num, e.text)]));
  return spans.flatMap((s) => {
    const [firstAt, lastAt] = [Number(s.firstAt), Number(s.lastAt)];
    if (!at.has(firstAt) || !at.has(lastAt)) return [];
    const first = { at: firstAt, value: at.get(firstAt) ?? null };
    const last = { at: lastAt, value: at.get(lastAt) ?? null };
    return [{ at: Number(s.at), count: Number(s.count), first, last, min: s.min, max: s.max, texts: Number(s.texts) }];
  });
}
