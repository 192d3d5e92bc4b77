import type uPlot from "uplot";
import { component } from "../alpine.ts";
import { addChannel } from "../channels.ts";
import { type DrawnChart, drawChart, fullNumber } from "../charts/draw.ts";
import { fragment } from "../dom.ts";
import { fitValues } from "../fit-values.ts";
import { follow } from "../stream.ts";
import { dateTime, refreshTimes } from "../times.ts";
import { toast } from "../toasts.ts";

/** A change of the metric: [minute (Unix ms), value]. */
type Change = [number, number | null];

/**
 * The server sends a long window in spans (domain/metric-history.ts): [minute, value] for a span
 * of one point, else [first minute, first, lowest, highest, last minute, last]. The line passes
 * through all four, the lowest and highest between the ends (in the order that ends nearest the
 * last), so a spike shows however many minutes a pixel stands for.
 */
type Span = Change | [number, number | null, number | null, number | null, number, number | null];

function expand(span: Span): Change[] {
  if (span.length === 2) return [span];
  const [t0, first, lo, hi, t1, last] = span;
  // An extreme that is one of the ends is drawn there already.
  const inner = ((last ?? 0) >= ((lo ?? 0) + (hi ?? 0)) / 2 ? [lo, hi] : [hi, lo]).filter(
    (v) => v !== null && v !== first && v !== last,
  );
  return [
    [t0, first],
    ...inner.map((v, i): Change => [t0 + ((t1 - t0) * (i + 1)) / (inner.length + 1), v]),
    [t1, last],
  ];
}

const MARKED_CHANGES = 60;

/**
 * A metric's page: its value now and its history over the chosen window (now - range .. now),
 * as a step line: a value holds until it changes, the one held when the window starts comes
 * in from the left edge. Both follow the metric live.
 */
export const metricPage = component(() => {
  let handle: DrawnChart | null = null;
  let stream: { close(): void } | null = null;
  // The window (Unix ms), the value held at its start, and the changes inside it.
  let from = 0;
  let to = 0;
  let before: number | null = null;
  let current: unknown = null;
  let changes: Change[] = [];
  const slide = (now: number) => {
    const span = to - from;
    to = Math.max(to, now);
    from = to - span;
    while (changes.length && changes[0]![0] < from) before = changes.shift()![1];
  };
  const data = (): uPlot.AlignedData => {
    const points: Change[] = before === null ? [] : [[from, before]];
    for (const c of changes) points.push(c);
    if (!points.length && typeof current === "number") points.push([from, current]);
    if (points.length) points.push([to, points[points.length - 1]![1]]);
    return [points.map((p) => p[0] / 1000), points.map((p) => p[1])];
  };
  return {
    init() {
      const el = this.$refs.chart;
      if (el) {
        from = Number(el.dataset.from);
        to = Number(el.dataset.to);
        before = JSON.parse(el.dataset.before!);
        current = JSON.parse(el.dataset.current!);
        changes = (JSON.parse(el.dataset.points!) as Span[]).flatMap(expand);
        const accent = getComputedStyle(document.documentElement).getPropertyValue("--accent").trim() || "#4f46e5";
        // Few changes in the window: each is marked with a dot, so a value set once (a point at
        // the right edge at 24 h) is seen, with its line on to now.
        const marks = () => {
          if (changes.length > MARKED_CHANGES) return null;
          const first = before === null ? 0 : 1;
          return changes.map((_, i) => first + i);
        };
        const opts: Omit<uPlot.Options, "width" | "height"> = {
          // The legend says the time under the pointer as every page writes a time.
          series: [
            { value: (u, t) => (t == null ? "--" : dateTime(t * 1000)) },
            {
              label: el.dataset.title,
              value: (u, v) => (v == null ? "--" : fullNumber(v)),
              stroke: accent,
              width: 2,
              fill: "rgba(79,70,229,0.08)",
              paths: window.uPlot && window.uPlot.paths.stepped!({ align: 1 }),
              points: { show: false, filter: marks, size: 9, width: 2, fill: accent },
            },
          ],
          scales: { x: { time: true, range: () => [from / 1000, to / 1000] } },
          // The drawn window, for whoever reads the page's markup (and the tests).
          hooks: {
            setScale: [
              (u, key) => {
                if (key === "x") {
                  el.dataset.shownFrom = String(Math.round(u.scales.x!.min! * 1000));
                  el.dataset.shownTo = String(Math.round(u.scales.x!.max! * 1000));
                }
              },
            ],
            // Until the pointer is over the chart, its legend gives the value now (not "--").
            ready: [
              (u) => {
                if (u.data[0].length) u.setLegend({ idx: u.data[0].length - 1 });
              },
            ],
          },
        };
        handle = drawChart(el, opts, data());
      }
      stream = follow(() => new URL(this.$root.dataset.liveUrl!, location.href), {
        on: {
          metric: (e) => this.onMetric(e),
          channel: (e) => addChannel(e.data),
          toast: (e) => {
            const d = JSON.parse(e.data);
            toast(d.text, "", d.href);
          },
        },
      });
    },
    destroy() {
      stream?.close();
      if (handle) handle.dispose();
    },
    onMetric(e: MessageEvent<string>) {
      const widget = fragment(e.data);
      if (!widget || widget.id !== "metric-" + this.$root.dataset.metricId) return;
      // The value now, as the server wrote it, and when it was set.
      const now = this.$root.querySelector<HTMLElement>("#metrics .metric");
      const value = widget.querySelector("[data-testid=metric-value]");
      const at = widget.querySelector(".metric-time");
      if (now && value && at) {
        const shown = now.querySelector("[data-testid=metric-value]")!;
        shown.textContent = value.textContent;
        shown.className = value.className;
        now.querySelector(".metric-time")!.replaceWith(at);
        refreshTimes(now);
        fitValues(now);
      }
      if (!handle) return;
      const next: unknown = JSON.parse(widget.dataset.value!);
      const updated = Number(widget.dataset.updated);
      if (typeof next !== "number" && next !== null) return;
      current = next;
      const minute = updated - (updated % 60000);
      slide(Date.now());
      const latest = changes[changes.length - 1];
      if (minute < from) before = next;
      else if (latest && latest[0] === minute) latest[1] = next;
      else if (!latest || latest[0] < minute) changes.push([minute, next]);
      handle.chart.setData(data());
    },
  };
});
