import type uPlot from "uplot";
import { component, ref } from "../alpine.ts";
import { COUNT_STEPS, dayAxis } from "../charts/buckets.ts";
import { channelColor, otherColor } from "../charts/colors.ts";
import { axes, DAY_S, type DrawnChart, drawChart, placeTip, stackedBars, swatch, tipRow } from "../charts/draw.ts";

/** What /p/:project/activity.json answers: events per channel per day. */
type Activity = {
  days: number[];
  channels: string[];
  colors: number[];
  series: number[][];
  totals: number[];
  other?: { channels: number; counts: number[]; total: number };
  filtered?: boolean;
};

type Group = { label: string; color: string; counts: number[]; total: number };

/**
 * Events per channel per day, as stacked bars: the channels with the most events in the range
 * (the server picks them; the rest are "other"), a legend with their totals, and the day's
 * counts on hover or tap. The x-axis is the whole range, days with nothing included.
 */
export const activityChart = component(() => {
  let handle: DrawnChart | null = null;
  return {
    days: 30,
    init() {
      this.load();
    },
    destroy() {
      if (handle) handle.dispose();
    },
    setRange(event?: Event) {
      const e = event || this.$event;
      this.days = Number((e.target as HTMLSelectElement).value);
      this.load();
    },
    // Events arrived (the dashboard says so at most every few seconds): the answer everyone shares.
    refresh() {
      this.load(true);
    },
    async load(live?: boolean) {
      const url = new URL(this.$root.dataset.url!, location.href);
      if (live === true) url.searchParams.set("live", "1");
      url.searchParams.set("days", String(this.days));
      url.searchParams.set("tz", String(-new Date().getTimezoneOffset()));
      const response = await fetch(url, { headers: { Accept: "application/json" } });
      if (!response.ok) return;
      const data: Activity = await response.json();
      // The card may have gone while its answer was on its way (removed, or swapped for a fresh one).
      if (!this.$root.isConnected) return;
      if (handle) handle.dispose();
      handle = null;
      const el = ref(this, "chart");
      const legend = ref(this, "legend");
      legend.textContent = "";
      ref(this, "tip").hidden = true;
      const groups: Group[] = data.channels.map((name, i) => ({
        label: "#" + name,
        color: channelColor(data.colors[i]!),
        counts: data.series[i]!,
        total: data.totals[i]!,
      }));
      if (data.other)
        groups.push({
          label: "other (" + data.other.channels + " channels)",
          color: otherColor(),
          counts: data.other.counts,
          total: data.other.total,
        });
      el.textContent = "";
      if (!groups.length) {
        el.textContent = data.filtered ? "No matching events in this range." : "No events in this range.";
        return;
      }
      for (const g of groups) {
        const item = document.createElement("li");
        const name = document.createElement("span");
        name.className = "legend-name";
        name.textContent = g.label;
        const total = document.createElement("span");
        total.className = "legend-total";
        total.textContent = g.total.toLocaleString();
        item.append(swatch(g.color), name, total);
        legend.appendChild(item);
      }
      const bars = stackedBars(
        groups.map((g) => ({ label: g.label, color: g.color, values: g.counts })),
        data.days.length,
      );
      const start = data.days[0]!;
      const end = data.days[data.days.length - 1]! + DAY_S;
      const ax = axes();
      Object.assign(ax[0], dayAxis(data.days));
      ax[1].incrs = COUNT_STEPS;
      const opts: Omit<uPlot.Options, "width" | "height"> = {
        series: [{}, ...bars.series],
        legend: { show: false },
        cursor: { y: false, points: { show: false }, drag: { x: false, y: false } },
        scales: {
          x: { time: true, range: () => [start, end] },
          y: { range: (u, min, max) => [0, Math.max(1, max)] },
        },
        hooks: { setCursor: [(u) => this.showTip(u, groups, data.days)] },
        axes: ax,
      };
      handle = drawChart(el, opts, [data.days.map((d) => d + DAY_S / 2), ...bars.values]);
    },
    showTip(u: uPlot, groups: Group[], days: number[]) {
      const tip = ref(this, "tip");
      const idx = u.cursor.idx;
      if (idx == null || u.cursor.left == null || u.cursor.left < 0) {
        tip.hidden = true;
        return;
      }
      tip.textContent = "";
      const head = document.createElement("strong");
      head.textContent = new Date((days[idx]! + DAY_S / 2) * 1000).toLocaleDateString(undefined, {
        weekday: "short",
        year: "numeric",
        month: "short",
        day: "numeric",
      });
      const list = document.createElement("ul");
      let sum = 0;
      for (const g of groups) {
        list.appendChild(tipRow(g.color, g.label, g.counts[idx]!.toLocaleString()));
        sum += g.counts[idx]!;
      }
      const total = document.createElement("div");
      total.className = "tip-total";
      total.textContent = sum.toLocaleString() + (sum === 1 ? " event" : " events");
      tip.append(head, list, total);
      placeTip(tip, u);
    },
  };
});
