// OTLP metric data points as our metrics (docs/api.md, "OpenTelemetry"): a gauge's point sets the
// value; a sum's point adds to it when its temporality is delta and sets it when cumulative; a
// histogram (and an exponential histogram, and a summary) is kept as two metrics, its count and its
// sum, "NAME.count" and "NAME.sum", added to or set the same way. A metric's title is its name and
// its point's attributes: "http.requests (method=GET, status=200)".
import { LIMITS } from "../input-fields.ts";
import type { MetricInput } from "../ingest-writes.ts";
import { clean, cut, textOf } from "./names.ts";
import type { Attributes, DataPoint, MetricData } from "./records.ts";

/** A metric's input without its project, which the token and the request decide (service.ts). */
export type MetricDraft = Omit<MetricInput, "project">;

/** The metrics one data point makes, or why it makes none; [] for a point that recorded no value. */
export function metricInputsOf(metric: MetricData, point: DataPoint): { inputs: MetricDraft[] } | { refused: string } {
  const name = clean(metric.name).trim();
  if (!name) return { refused: "a metric has no name" };
  if ("empty" in point) return { inputs: [] };
  const increment = metric.delta;
  if (point.value !== undefined) {
    if (!Number.isFinite(point.value)) return { refused: `${name}: a data point's value is not a finite number` };
    return { inputs: [{ title: titleOf(name, point.attributes), value: point.value, increment }] };
  }
  if (!Number.isFinite(point.count) || (point.sum !== null && !Number.isFinite(point.sum)))
    return { refused: `${name}: a data point's count or sum is not a finite number` };
  const inputs: MetricDraft[] = [{ title: titleOf(`${name}.count`, point.attributes), value: point.count, increment }];
  if (point.sum !== null) inputs.push({ title: titleOf(`${name}.sum`, point.attributes), value: point.sum, increment });
  return { inputs };
}

/** The name, then the attributes in the order of their keys (so a series keeps its title), at most LIMITS.metricTitle. */
export function titleOf(name: string, attributes: Attributes): string {
  const pairs = [...attributes]
    .filter(([, value]) => value !== null && value !== "")
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => `${clean(key)}=${clean(textOf(value))}`);
  return cut(pairs.length ? `${name} (${pairs.join(", ")})` : name, LIMITS.metricTitle);
}
