// Prometheus metrics (opt-in: SIGNALBOARD_METRICS=true serves them at /metrics). Counters and
// histograms are recorded where things happen; gauges are read from their owners at scrape time.

type Labels = Record<string, string>;

const keys = new Map<string, string>();

/** The label set as Prometheus text, built once per distinct set (this runs on every request). */
function key(labels: Labels): string {
  let id = "";
  for (const k in labels) id += `${k}\u0000${labels[k]}\u0000`;
  let text = keys.get(id);
  if (text === undefined) {
    text = Object.entries(labels)
      .map(([k, v]) => `${k}="${v.replace(/["\\\n]/g, "_")}"`)
      .join(",");
    keys.set(id, text);
  }
  return text;
}

class Counter {
  private readonly values = new Map<string, { value: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}
  inc(labels: Labels = {}, by = 1): void {
    this.cell(labels).value += by;
  }
  /** The counter of one label set, to keep where it is counted often (each inc is then one addition). */
  cell(labels: Labels = {}): { value: number } {
    const k = key(labels);
    let cell = this.values.get(k);
    if (!cell) this.values.set(k, (cell = { value: 0 }));
    return cell;
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const [k, v] of this.values) lines.push(`${this.name}${k ? `{${k}}` : ""} ${v.value}`);
    return lines.join("\n");
  }
}

class Histogram {
  private readonly series = new Map<string, { buckets: number[]; sum: number; count: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly bounds: number[],
  ) {}
  observe(labels: Labels, value: number): void {
    this.cell(labels).observe(value);
  }
  /** The series of one label set, to keep where it is observed often. */
  cell(labels: Labels): { observe: (value: number) => void } {
    const k = key(labels);
    let s = this.series.get(k);
    if (!s) this.series.set(k, (s = { buckets: this.bounds.map(() => 0), sum: 0, count: 0 }));
    const series = s;
    const bounds = this.bounds;
    return {
      observe(value: number) {
        for (let i = 0; i < bounds.length; i++) if (value <= bounds[i]!) series.buckets[i]!++;
        series.sum += value;
        series.count++;
      },
    };
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const [k, s] of this.series) {
      const sep = k ? `${k},` : "";
      this.bounds.forEach((b, i) => lines.push(`${this.name}_bucket{${sep}le="${b}"} ${s.buckets[i]}`));
      lines.push(
        `${this.name}_bucket{${sep}le="+Inf"} ${s.count}`,
        `${this.name}_sum${k ? `{${k}}` : ""} ${s.sum}`,
        `${this.name}_count${k ? `{${k}}` : ""} ${s.count}`,
      );
    }
    return lines.join("\n");
  }
}

/** A value read at scrape time; one whose name ends in _total only ever goes up (a counter). */
export type Gauge = { name: string; help: string; value: () => number | Promise<number> };

/** One set per server (tests run several in one process). */
export function createMetrics() {
  const ingestRequests = new Counter("signalboard_ingest_requests_total", "Ingest requests by route and status.");
  const ingestSeconds = new Histogram(
    "signalboard_ingest_duration_seconds",
    "Ingest request latency, from the request to the answer (after commit).",
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
  );
  const notifications = new Counter(
    "signalboard_notifications_total",
    "Notification delivery attempts by target and outcome.",
  );
  const pings = new Counter(
    "signalboard_pings_total",
    "Pings of checks answered, by API (healthchecks: /ping/... and the same without /ping; uptime-kuma: /api/push/...) and status.",
  );
  return {
    ingestRequests,
    ingestSeconds,
    notifications,
    pings,
    async render(gauges: Gauge[]): Promise<string> {
      const parts = [ingestRequests.render(), ingestSeconds.render(), notifications.render(), pings.render()];
      const values = await Promise.all(gauges.map((g) => g.value()));
      gauges.forEach((g, i) =>
        parts.push(
          `# HELP ${g.name} ${g.help}\n# TYPE ${g.name} ${g.name.endsWith("_total") ? "counter" : "gauge"}\n${g.name} ${values[i]}`,
        ),
      );
      return parts.join("\n") + "\n";
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
