// X-axes of buckets (hours, days, weeks, months), labelled the same wherever a chart is drawn.
import type uPlot from "uplot";
import { chartBox, DAY_S } from "./draw.ts";

/** Steps of a count axis: whole numbers only. */
export const COUNT_STEPS = [
  1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 2e6, 5e6, 1e7, 2e7, 5e7, 1e8,
];

const HOUR_STEPS = [1, 2, 3, 4, 6, 12, 24, 48];
const DAY_STEPS = [1, 2, 3, 7, 14, 28, 56, 91, 182];
const WEEK_STEPS = [1, 2, 4, 8, 13, 26, 52];
const MONTH_STEPS = [1, 2, 3, 6, 12, 24];

/** What a saved question's series says of its buckets (views/charts.ts). */
export type Buckets = { interval: string; tz?: string; t: number[] };

// An x-axis of buckets (days, weeks, months): each label under its bucket's bar or point, every
// bucket or every few as the width allows, counted back from the last, so the last label is the
// newest bucket's (today), never the one after it. `xs`: where each bucket is drawn; `label(i, j)`:
// the words for bucket i (j: the bucket labelled before it, or -1); `size`: a bucket's length (s); `steps`: how many buckets a label may
// stand for. The labels depend on the buckets alone, so a chart says the same wherever it is
// drawn, however wide. The ticks and labels drawn go on the chart's element.
function bucketAxis(
  xs: number[],
  label: (i: number, before: number) => string,
  size: number,
  steps: number[],
): Partial<uPlot.Axis> {
  return {
    space: 56,
    incrs: steps.map((n) => n * size),
    splits: (u, axisIdx, min, max, incr) => {
      const step = Math.max(1, Math.round(incr / size));
      return xs.filter((_, i) => (xs.length - 1 - i) % step === 0);
    },
    values: (u, splits) => {
      const labels = splits.map((x, k) => label(xs.indexOf(x), k ? xs.indexOf(splits[k - 1]!) : -1));
      Object.assign(chartBox(u).dataset, { xTicks: JSON.stringify(splits), xLabels: JSON.stringify(labels) });
      return labels;
    },
  };
}

const dayLabel = (seconds: number, timeZone?: string) =>
  new Date(seconds * 1000).toLocaleDateString(undefined, { timeZone, month: "short", day: "numeric" });

/**
 * The activity chart's days start at the viewer's midnight: each is named by its middle (a day
 * counted on from the first may start an hour off across a change of summer time).
 */
export function dayAxis(days: number[]): Partial<uPlot.Axis> {
  const middles = days.map((d) => d + DAY_S / 2);
  return bucketAxis(middles, (i) => dayLabel(middles[i]!), DAY_S, DAY_STEPS);
}

/** The zone a question's buckets start in (UTC unless it names one), when this browser knows it. */
export function bucketZone(data: Buckets): string | undefined {
  try {
    return new Intl.DateTimeFormat(undefined, { timeZone: data.tz || "UTC" }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

/**
 * A saved question by hour, day, week or month. An hour is named in the viewer's zone (unless the
 * question names one), as "6 PM" with its day below where the day changes; days, weeks and months
 * start at the midnights of the question's zone and are named there: a day or a week by its first
 * day ("Nov 27"), a month as "Nov 2026".
 */
export function intervalAxis(data: Buckets, xs: number[]): Partial<uPlot.Axis> {
  const at = (i: number) => data.t[i]!;
  if (data.interval === "hour") {
    const zone = data.tz && data.tz !== "UTC" ? bucketZone(data) : undefined;
    const day = (i: number) => dayLabel(at(i), zone);
    const clock = (i: number) =>
      new Date(at(i) * 1000).toLocaleTimeString(undefined, { timeZone: zone, hour: "numeric" });
    return bucketAxis(
      xs,
      (i, before) => (before >= 0 && day(before) === day(i) ? clock(i) : clock(i) + "\n" + day(i)),
      3600,
      HOUR_STEPS,
    );
  }
  const timeZone = bucketZone(data);
  if (data.interval === "month")
    return bucketAxis(
      xs,
      (i) => new Date(at(i) * 1000).toLocaleDateString(undefined, { timeZone, month: "short", year: "numeric" }),
      30.44 * DAY_S,
      MONTH_STEPS,
    );
  const week = data.interval === "week";
  return bucketAxis(xs, (i) => dayLabel(at(i), timeZone), week ? 7 * DAY_S : DAY_S, week ? WEEK_STEPS : DAY_STEPS);
}
