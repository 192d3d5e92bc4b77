// The chart kinds, one line each: the charts service, the API, the builder and the pages read this
// list. A new kind is a module beside these (kind.ts says what it holds), a line here, and its
// builder fields and answer drawn in web/views/charts.ts.
import type { ChartKind } from "../../model/chart.ts";
import { funnel } from "./funnel.ts";
import type { ChartKindModule } from "./kind.ts";
import { metricChart } from "./metric.ts";
import { retention } from "./retention.ts";
import { series } from "./series.ts";

export const CHART_KIND_MODULES = {
  series,
  funnel,
  metric: metricChart,
  retention,
} satisfies { [K in ChartKind]: ChartKindModule<K> };

export const CHART_KINDS = Object.keys(CHART_KIND_MODULES) as ChartKind[];

/** The kinds in words, for a message that names them: "series, funnel, metric or retention". */
export const CHART_KIND_CHOICES = `${CHART_KINDS.slice(0, -1).join(", ")} or ${CHART_KINDS[CHART_KINDS.length - 1]}`;

/** A kind, to be asked about a chart of it (the definition it takes as that kind's). */
export const chartKind = (kind: ChartKind) => CHART_KIND_MODULES[kind] as unknown as ChartKindModule<ChartKind>;
