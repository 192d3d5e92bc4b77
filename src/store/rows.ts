// Rows as both dialects select them, turned into the model's entities: the columns are the same
// in each schema (by name), so the mapping is written once.
import type { StoredEvent, Tags } from "../model/event.ts";
import type { Metric, MetricValue } from "../model/metric.ts";

/** An event row as selected (tags as their JSON text). */
export type EventRow = Omit<StoredEvent, "tags"> & { tags: string | null };

export const toEvent = (row: EventRow): StoredEvent => ({ ...row, tags: row.tags ? (JSON.parse(row.tags) as Tags) : null });

/** A metric's value from its two columns: text, or else the number. */
export const metricValue = (num: number | null, text: string | null): MetricValue | null => text ?? num;

/** A metric row as selected (its value in two columns). */
export type MetricRow = { valueNum: number | null; valueText: string | null } & Omit<Metric, "value">;

export const toMetric = ({ valueNum, valueText, ...rest }: MetricRow): Metric => ({ ...rest, value: metricValue(valueNum, valueText) });
