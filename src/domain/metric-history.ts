// A metric's history for readers: its points a page at a time, or reduced to spans of time (first,
// lowest, highest and last value of each) that a chart of the range can show; computed by the
// database, so a metric set every minute for years costs a reader what a chart shows, not every point.
import { NotFound, ValidationError } from "../errors.ts";
import type { Metric, MetricBucket, MetricPoint } from "../model/metric.ts";
import type { Store } from "../store/store.ts";
import { requireProject } from "./projects.ts";

/** The most points (or spans) one answer holds; the rest come a page at a time. */
export const MAX_HISTORY_PAGE = 10_000;
/** About as many spans as a chart has pixels across: more would not show. */
export const CHART_SPANS = 1_000;
/** How many of a text metric's values its page lists (the newest). */
export const LISTED_VALUES = 200;

const MINUTE = 60_000;
const MAX_DATE = 8.64e15;
// Round widths, so that spans start on the clock's minutes, hours and (UTC) days.
const WIDTHS = [1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1_440, 2_880, 10_080].map((m) => m * MINUTE);

/** The narrowest round width that cuts `span` ms into at most CHART_SPANS spans (a week's multiple beyond). */
export function chartWidth(span: number): number {
  const wanted = span / CHART_SPANS;
  const week = WIDTHS.at(-1)!;
  return WIDTHS.find((w) => w >= wanted) ?? Math.ceil(wanted / week) * week;
}

/** Where the next page starts (Unix ms), and the width of its spans (0: the points themselves). */
export type HistoryCursor = { since: number; width: number };

export function encodeHistoryCursor(c: HistoryCursor): string {
  return Buffer.from(`${c.since}:${c.width}`).toString("base64url");
}

/** null when `cursor` is not one this server made. */
export function decodeHistoryCursor(cursor: string): HistoryCursor | null {
  const m = /^(-?\d{1,16}):(\d{1,16})$/.exec(Buffer.from(cursor, "base64url").toString());
  if (!m || (Number(m[2]) && Number(m[2]) % MINUTE)) return null;
  return { since: Number(m[1]), width: Number(m[2]) };
}

export type HistoryQuery = {
  project: string;
  title: string;
  /** Unix ms, both inclusive. */
  from: number;
  to: number;
  limit: number;
  cursor?: HistoryCursor;
  /** Spans of this many ms, or "auto" (the width a chart of from..to draws); absent: the points themselves. */
  interval?: number | "auto";
};

export type HistoryPage = { metric: Metric; nextCursor: string | null } & (
  | { interval: null; points: MetricPoint[] }
  | { interval: number; buckets: MetricBucket[] }
);

/** What a metric's page draws: its spans over the window, the value held when it starts, and (text) the newest values. */
export type MetricChart = {
  metric: Metric;
  buckets: MetricBucket[];
  before: MetricPoint | null;
  recent: MetricPoint[] | null;
};

async function findMetric(store: Store, projectName: string, title: string): Promise<Metric> {
  const metric = await store.metrics.find((await requireProject(store, projectName)).id, title);
  if (!metric) throw new NotFound(`Metric "${title}" does not exist in project "${projectName}".`);
  return metric;
}

const badCursor = (message: string) =>
  new ValidationError([{ path: "cursor", type: "custom", message: `cursor: ${message}` }], "query");

/** One page of a metric's history, oldest first, and the cursor of the next (null at the end). */
export async function historyPage(store: Store, query: HistoryQuery): Promise<HistoryPage> {
  const metric = await findMetric(store, query.project, query.title);
  // No point lies beyond what a Date holds; bounding the range keeps the widths within a bigint.
  const q = { ...query, from: Math.max(query.from, -MAX_DATE), to: Math.min(query.to, MAX_DATE) };
  const since = q.cursor?.since ?? q.from;
  if (q.interval === undefined) {
    if (q.cursor?.width)
      throw badCursor(`it continues a page of spans; pass interval=${q.cursor.width / 1000} with it`);
    const rows = await store.metrics.history(metric.id, since, q.to, q.limit + 1);
    const points = rows.slice(0, q.limit);
    return {
      metric,
      interval: null,
      points,
      nextCursor: rows.length > q.limit ? encodeHistoryCursor({ since: points.at(-1)!.at + 1, width: 0 }) : null,
    };
  }
  if (q.cursor && !q.cursor.width) throw badCursor("it continues a page of points; pass it without interval");
  if (q.cursor && typeof q.interval === "number" && q.interval !== q.cursor.width)
    throw badCursor(`it continues a page with interval=${q.cursor.width / 1000}; pass that interval with it`);
  // A cursor keeps its width: "auto" worked out again from a later start would cut other spans.
  const width = q.cursor?.width || (q.interval === "auto" ? chartWidth(q.to - q.from) : q.interval);
  // The page starts at the span of the next point, so a gap in the history is never an empty page.
  const [next] = await store.metrics.history(metric.id, since, q.to, 1);
  if (!next) return { metric, interval: width, buckets: [], nextCursor: null };
  const end = Math.min(q.to, spanStart(next.at, width) + q.limit * width - 1);
  const buckets = await store.metrics.buckets(metric.id, since, end, width);
  const [more] = end < q.to ? await store.metrics.history(metric.id, end + 1, q.to, 1) : [];
  return { metric, interval: width, buckets, nextCursor: more ? encodeHistoryCursor({ since: end + 1, width }) : null };
}

/** A metric's page over [since, until]: spans narrow enough for the chart, or a text metric's newest values. */
export async function metricChart(
  store: Store,
  projectName: string,
  title: string,
  since: number,
  until: number,
): Promise<MetricChart> {
  const metric = await findMetric(store, projectName, title);
  const [buckets, before] = await Promise.all([
    store.metrics.buckets(metric.id, since, until, chartWidth(until - since)),
    store.metrics.pointBefore(metric.id, since),
  ]);
  const text =
    typeof metric.value === "string" || typeof before?.value === "string" || buckets.some((b) => b.texts > 0);
  const recent = text ? await store.metrics.history(metric.id, since, until, LISTED_VALUES, "desc") : null;
  return { metric, buckets, before, recent };
}

function spanStart(at: number, width: number): number {
  return at - (((at % width) + width) % width);
}
