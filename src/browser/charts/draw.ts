// Charts (uPlot, loaded by the pages that have charts): axes in the page's theme and words, drawn
// at the width of their box, and the tooltip and swatches beside them.
import type uPlot from "uplot";

/** A day, in seconds (uPlot's time scale). */
export const DAY_S = 86400;

function chartTheme() {
  const style = getComputedStyle(document.documentElement);
  return { text: style.getPropertyValue("--muted").trim(), grid: style.getPropertyValue("--border").trim() };
}

/** The chart's element (the one drawChart drew into), which carries what was drawn for whoever reads the markup. */
export const chartBox = (u: uPlot): HTMLElement => u.root.parentNode as HTMLElement;

/** A number as stored: every significant digit it has (up to 15, what a double holds), grouped. */
export const fullNumber = (n: number): string =>
  Number.isInteger(n) ? n.toLocaleString() : n.toLocaleString(undefined, { maximumSignificantDigits: 15 });

// Axis labels in short form (18.4K, 1.25M), with as many digits as it takes to tell them apart.
function compactLabels(values: (number | null)[]): string[] {
  for (let digits = 2; digits <= 15; digits++) {
    const format = new Intl.NumberFormat(undefined, { notation: "compact", maximumSignificantDigits: digits });
    const labels = values.map((v) => (v == null ? "" : format.format(v)));
    if (new Set(labels).size === labels.length) return labels;
  }
  return values.map((v) => (v == null ? "" : fullNumber(v)));
}

/** An axis as uPlot holds it once drawn: its font as [font, size], its ticks and gap filled in. */
type DrawnAxis = { font: [string, number]; ticks: { size: number }; gap: number };

// The y-axis is as wide as its longest label (measured in the axis's font), so none is cut at the
// chart's left edge. uPlot asks again after each layout pass, and stops after three.
function axisWidth(u: uPlot, labels: string[] | null, axisIdx: number): number {
  const axis = u.axes[axisIdx] as unknown as DrawnAxis;
  u.ctx.font = axis.font[0];
  const widest = Math.max(
    0,
    ...(labels || []).map((label) => u.ctx.measureText(String(label)).width / devicePixelRatio),
  );
  return Math.ceil(widest + axis.ticks.size + axis.gap + 4);
}

// Time labels as the pages write dates: "Nov 27" for days; for hours, "6 PM" (or "6:15 PM") with
// its day below it where the day changes. The labels drawn go on the chart's element.
function timeLabels(u: uPlot, splits: number[], axisIdx: number, space: number, incr: number): string[] {
  let lastDay: string | null = null;
  const labels = splits.map((t) => {
    const at = new Date(t * 1000);
    const day = at.toLocaleDateString(undefined, { month: "short", day: "numeric" });
    if (incr >= DAY_S) return day;
    const clock = at.toLocaleTimeString(
      undefined,
      incr >= 3600 ? { hour: "numeric" } : { hour: "numeric", minute: "2-digit" },
    );
    const label = day === lastDay ? clock : clock + "\n" + day;
    lastDay = day;
    return label;
  });
  chartBox(u).dataset.xLabels = JSON.stringify(labels);
  return labels;
}

/** The x-axis (time) and the y-axis (counts or values) in the page's theme. */
export function axes(): [uPlot.Axis, uPlot.Axis] {
  const t = chartTheme();
  return [
    { stroke: t.text, grid: { stroke: t.grid, width: 1 }, ticks: { stroke: t.grid }, values: timeLabels },
    {
      stroke: t.text,
      grid: { stroke: t.grid, width: 1 },
      ticks: { stroke: t.grid },
      // The labels drawn, on the chart's element, for whoever reads the page's markup (and the tests).
      values: (u, splits) => {
        const labels = compactLabels(splits);
        chartBox(u).dataset.yLabels = JSON.stringify(labels);
        return labels;
      },
      size: axisWidth,
    },
  ];
}

export type DrawnChart = { chart: uPlot; dispose: () => void };

/** Draws a chart into `el` (nothing where uPlot is not loaded), at the width `el` has, and follows it. */
export function drawChart(
  el: HTMLElement,
  opts: Omit<uPlot.Options, "width" | "height">,
  data: uPlot.AlignedData,
  height?: number,
): DrawnChart | null {
  const UPlot = window.uPlot;
  if (!UPlot) return null;
  // On a wall screen (a shared page's kiosk view) a chart takes a third of the screen's height.
  const kiosk = document.body.classList.contains("kiosk");
  const tall = kiosk ? Math.max(height || 220, Math.round(innerHeight / 3)) : height || 220;
  el.textContent = "";
  const width = Math.max(el.clientWidth, 280);
  const chart = new UPlot(Object.assign({ width, height: tall, axes: axes() }, opts), data, el);
  // Follows its box, not only the window: a chart drawn while folded away (a closed <details>)
  // takes its width when it is shown.
  const onResize = () => {
    if (el.clientWidth > 0) chart.setSize({ width: Math.max(el.clientWidth, 280), height: tall });
  };
  const observer = window.ResizeObserver ? new ResizeObserver(onResize) : null;
  if (observer) observer.observe(el);
  else window.addEventListener("resize", onResize);
  return {
    chart,
    dispose: () => {
      if (observer) observer.disconnect();
      else window.removeEventListener("resize", onResize);
      chart.destroy();
    },
  };
}

/** A chart drawn inside a folded <details> had no width: unfolding it redraws at the width it has. */
export function redrawChartsWhenUnfolded(): void {
  document.addEventListener(
    "toggle",
    (e) => {
      if (e.target instanceof HTMLDetailsElement && e.target.open && e.target.querySelector(".chart"))
        window.dispatchEvent(new Event("resize"));
    },
    true,
  );
}

/** Shows a chart's tooltip beside the pointer, on its left when the right would cut it. */
export function placeTip(tip: HTMLElement, u: uPlot): void {
  tip.hidden = false;
  const wrap = tip.parentElement!.getBoundingClientRect();
  const over = u.over.getBoundingClientRect();
  let x = over.left - wrap.left + u.cursor.left! + 12;
  if (x + tip.offsetWidth > wrap.width) x = Math.max(0, x - tip.offsetWidth - 24);
  tip.style.left = x + "px"; // CSSOM, which the CSP allows
  tip.style.top = Math.max(0, over.top - wrap.top) + "px";
}

/** A colour's mark, in a legend or a tooltip. */
export function swatch(color: string): HTMLSpanElement {
  const mark = document.createElement("span");
  mark.className = "swatch";
  mark.style.background = color; // CSSOM, which the CSP allows (no style attribute)
  return mark;
}

/** A group of a stacked bar chart: its values per bucket. */
export type StackedGroup = { label: string; color: string; values: (number | null)[] };

/**
 * Stacked bars: each group's bar is the running sum up to it, and the top of the stack is drawn
 * first, so each group's bar shows above the ones below it. `align`: bars on their bucket's start
 * (1) or centred on it (0).
 */
export function stackedBars(
  groups: StackedGroup[],
  buckets: number,
  align: 0 | 1 = 0,
): { series: uPlot.Series[]; values: number[][] } {
  let run = Array.from({ length: buckets }, () => 0);
  const stacked = groups.map((g) => (run = run.map((v, i) => v + (g.values[i] || 0))));
  const order = groups.map((_, i) => groups.length - 1 - i);
  const paths = window.uPlot && window.uPlot.paths.bars!({ size: [0.8, 40], gap: 1, align });
  return {
    series: order.map((i) => ({
      label: groups[i]!.label,
      fill: groups[i]!.color,
      stroke: groups[i]!.color,
      width: 0,
      paths,
      points: { show: false },
    })),
    values: order.map((i) => stacked[i]!),
  };
}

/** A line of a chart's tooltip: a group's swatch, its name and its number. */
export function tipRow(color: string, label: string, count: string): HTMLLIElement {
  const row = document.createElement("li");
  const name = document.createElement("span");
  name.textContent = label;
  const n = document.createElement("span");
  n.className = "tip-count";
  n.textContent = count;
  row.append(swatch(color), name, n);
  return row;
}
