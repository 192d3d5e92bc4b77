// What an export will write, worked out from its records alone: each log record's event and each
// data point's metrics, or why it makes none, per resource with the project its resource names.
// Pure and without the store, so it runs where the export is decoded (api/otlp-decode.ts, off the
// thread that serves requests); service.ts then decides each resource's project, checks the
// token's limits and writes.
import { AppError } from "../../errors.ts";
import { type LogDraft, logInputOf } from "./logs.ts";
import { type MetricDraft, metricInputsOf } from "./metrics.ts";
import type { Attributes, ResourceLogs, ResourceMetrics } from "./records.ts";

/** The resource attribute that names a project (after the token's own and the X-Signalboard-Project header). */
export const PROJECT_ATTRIBUTE = "signalboard.project";

/**
 * The most log records (or data points) one export may hold, and a public token's (a web page's
 * SDK sends 512 at a time): each becomes a write of its own, so a body of a few megabytes could
 * otherwise hold two million of them. An export over it is refused whole (413), nothing stored.
 */
export const EXPORT_LIMIT = 10_000;
export const PUBLIC_EXPORT_LIMIT = 1_000;

/** Refuses (413) an export of `count` records or data points, when it is more than its token may send at once. */
export function assertExportSize(count: number, signal: "logs" | "metrics", publicToken: boolean): void {
  const what = signal === "logs" ? "log records" : "data points";
  const limit = publicToken ? PUBLIC_EXPORT_LIMIT : EXPORT_LIMIT;
  if (count <= limit) return;
  const whose = publicToken ? "a public token's export" : "an export";
  throw new AppError(
    "too_large",
    "payload_too_large",
    `This export holds ${count} ${what}; ${whose} holds at most ${limit}, and nothing of this one was stored. Export smaller batches: the SDK's maxExportBatchSize, or the Collector's batch processor with send_batch_max_size: ${limit}.`,
  );
}

/** What one record (or data point) makes: its input(s), or why it makes none. */
export type Made<T> = T | { refused: string };

/** A resource's share of an export: the project its attributes name (null: none), and what each of its records makes. */
export type Planned<T> = { projectAttribute: string | null; made: Made<T>[] }[];

export type PlannedLogs = Planned<{ input: LogDraft }>;
export type PlannedMetrics = Planned<{ inputs: MetricDraft[] }>;

function projectAttributeOf(resource: Attributes): string | null {
  const value = resource.get(PROJECT_ATTRIBUTE);
  return typeof value === "string" && value !== "" ? value : null;
}

/** Each log record's event; `now`: when the export was received. */
export function planLogs(resources: ResourceLogs[], now: number): PlannedLogs {
  return resources.map(({ resource, records }) => ({
    projectAttribute: projectAttributeOf(resource),
    made: records.map((record) => logInputOf(record, resource, now)),
  }));
}

/** Each data point's metrics; a metric without points of a known kind is refused once. */
export function planMetrics(resources: ResourceMetrics[]): PlannedMetrics {
  return resources.map(({ resource, metrics }) => ({
    projectAttribute: projectAttributeOf(resource),
    made: metrics.flatMap((metric) =>
      metric.kind === null
        ? [{ refused: `${metric.name || "a metric"}: holds no data points of a known kind` }]
        : metric.points.map((point) => metricInputsOf(metric, point)),
    ),
  }));
}

/** How many records (or data points) a plan holds: what the export's size is counted in. */
export const plannedCount = (planned: Planned<unknown>): number =>
  planned.reduce((n, resource) => n + resource.made.length, 0);
