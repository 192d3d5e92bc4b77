import type uPlot from "uplot";
import { component } from "../alpine.ts";
import { type Buckets, bucketZone, COUNT_STEPS, intervalAxis } from "../charts/buckets.ts";
import { channelColor, otherColor } from "../charts/colors.ts";
import { axes, DAY_S, type DrawnChart, drawChart, placeTip, stackedBars, tipRow } from "../charts/draw.ts";

/** A saved question's answer, as views/charts.ts writes it in data-chart. */
type Series = Buckets & {
  lines: { label: string; slot: number; values: (number | null)[] }[];
  from?: number;
  to?: number;
  display: string;
  compact?: boolean;
};

type Line = Series["lines"][number] & { color: string };

/**
 * A saved question's series (views/charts.ts): lines or bars (stacked when split), one colour
 * per group from the palette, "other" in grey; a tooltip per bucket. The data comes in the
 * element's data-chart; the legend and totals are in the HTML.
 */
export const seriesChart = component(() => {
  let handle: DrawnChart | null = null;
  return {
    init() {
      const data: Series = JSON.parse(this.$root.dataset.chart!);
      const el = this.$refs.chart;
      for (const mark of this.$root.querySelectorAll<HTMLElement>(".swatch[data-slot]")) {
        const slot = Number(mark.dataset.slot);
        mark.style.background = slot < 0 ? otherColor() : channelColor(slot); // CSSOM: the CSP allows it
      }
      if (!el || !data.t.length) return;
      const lines: Line[] = data.lines.map((l) =>
        Object.assign({}, l, { color: l.slot < 0 ? otherColor() : channelColor(l.slot) }),
      );
      const first = data.t[0]!;
      const step = data.t.length > 1 ? data.t[1]! - first : DAY_S;
      const start = data.from !== undefined ? Math.min(first, data.from) : first;
      const end = data.to !== undefined ? data.to : data.t[data.t.length - 1]! + step;
      const bar = data.display === "bar";
      let series: uPlot.Series[];
      let values: (number | null)[][];
      let x = data.t;
      if (bar) {
        ({ series, values } = stackedBars(lines, data.t.length, 1));
      } else {
        const few = data.t.length <= 48;
        series = lines.map((l) => ({
          label: l.label,
          stroke: l.color,
          width: 2,
          points: { show: few, size: 5, fill: l.color },
        }));
        values = lines.map((l) => l.values);
        // A point stands for its bucket: drawn at its middle.
        x = data.t.map((t, i) => t + ((i + 1 < data.t.length ? data.t[i + 1]! : end) - t) / 2);
      }
      const ax = axes();
      ax[1].incrs = data.interval === "auto" ? undefined : COUNT_STEPS;
      // By hour, day, week or month the x-axis names buckets, as the builder's preview does at any width.
      if (["hour", "day", "week", "month"].includes(data.interval)) Object.assign(ax[0], intervalAxis(data, x));
      const opts: Omit<uPlot.Options, "width" | "height"> = {
        series: [{}, ...series],
        legend: { show: false },
        axes: ax,
        cursor: { y: false, points: { show: !bar }, drag: { x: false, y: false } },
        scales: {
          x: { time: true, range: () => [start, end] },
          y: { range: (u, min, max) => [Math.min(0, min), Math.max(1, max)] },
        },
        hooks: { setCursor: [(u) => this.showTip(u, lines, data)] },
      };
      handle = drawChart(el, opts, [x, ...values], data.compact ? 160 : 220);
    },
    destroy() {
      if (handle) handle.dispose();
    },
    showTip(u: uPlot, lines: Line[], data: Series) {
      const tip = this.$refs.tip;
      const idx = u.cursor.idx;
      if (!tip) return;
      if (idx == null || u.cursor.left == null || u.cursor.left < 0) {
        tip.hidden = true;
        return;
      }
      tip.textContent = "";
      const head = document.createElement("strong");
      const when = new Date(data.t[idx]! * 1000);
      // An hour reads in the viewer's zone; a day, week or month is its bucket's, as the x-axis names it.
      const hourly = data.interval === "hour" || data.interval === "auto";
      const tz = hourly ? (data.tz && data.tz !== "UTC" ? data.tz : undefined) : bucketZone(data);
      head.textContent = hourly
        ? when.toLocaleString(undefined, {
            timeZone: tz,
            month: "short",
            day: "numeric",
            hour: "2-digit",
            minute: "2-digit",
          })
        : (data.interval === "week" ? "Week of " : "") +
          when.toLocaleDateString(undefined, {
            timeZone: tz,
            year: "numeric",
            month: data.interval === "month" ? "long" : "short",
            day: data.interval === "month" ? undefined : "numeric",
          });
      const list = document.createElement("ul");
      for (const l of lines) {
        const v = l.values[idx];
        list.appendChild(
          tipRow(
            l.color,
            l.label,
            v == null ? "—" : Number(v).toLocaleString(undefined, { maximumSignificantDigits: 15 }),
          ),
        );
      }
      tip.append(head, list);
      placeTip(tip, u);
    },
  };
});
