// Saved questions: charts, funnels, metric charts and retention grids a team keeps, and the cards of a
// project's dashboard. A chart is one of its kinds (domain/chart-kinds/), its definition the API's
// own parameters for that kind's question.

/** A fixed range (Unix seconds), or the last N days up to when it is read. */
export type ChartRange = { from?: number; to?: number; last_days?: number };

/** The search's filters, as a series and a retention grid take them. */
type ChartFilters = { channel?: string; tag?: string[]; user_id?: string; q?: string };

/** A series: the parameters of GET /v1/analytics/series, and how the dashboard draws it. */
export type SeriesDefinition = ChartRange &
  ChartFilters & {
    event?: string;
    interval?: string;
    tz?: string;
    measure?: string;
    group_by?: string;
    limit?: number;
    display?: "line" | "bar";
  };

/** A funnel's step: an event name, or one narrowed to a channel and tags. */
export type FunnelStep = string | { event: string; channel?: string; tag?: string[] };
export type FunnelDefinition = ChartRange & { steps: FunnelStep[]; window?: number };
export type MetricChartDefinition = ChartRange & { title: string };
/** Retention: the parameters of GET /v1/analytics/retention. */
export type RetentionDefinition = ChartRange &
  ChartFilters & { start_event: string; return_event: string; interval?: string; periods?: number; tz?: string };

/** Each kind's definition. */
export type ChartDefinitions = {
  series: SeriesDefinition;
  funnel: FunnelDefinition;
  metric: MetricChartDefinition;
  retention: RetentionDefinition;
};

export type ChartKind = keyof ChartDefinitions;
export type ChartDefinition = ChartDefinitions[ChartKind];

type ChartRecord = { id: number; projectId: number; name: string; createdAt: number; updatedAt: number };

/** A saved question of one kind about one project. */
export type ChartOf<K extends ChartKind> = ChartRecord & { kind: K; definition: ChartDefinitions[K] };
export type Chart = { [K in ChartKind]: ChartOf<K> }[ChartKind];

export type NewChart = { [K in ChartKind]: Omit<ChartOf<K>, "id" | "updatedAt"> }[ChartKind];

/** A change of a chart: its name, its definition (of the kind it is). */
export type ChartChanges = { name?: string; definition?: ChartDefinition };

/** A stored row: the definition as JSON text. */
export type ChartRow = ChartRecord & { kind: ChartKind; definition: string };

/** A stored row as the chart it is (its definition was checked for its kind when it was saved). */
export const chartOfRow = (row: ChartRow): Chart => ({ ...row, definition: JSON.parse(row.definition) }) as Chart;

/** The built-in card: events per channel per day, following the page's search. */
export const ACTIVITY_CARD = "activity";

/** A card of a project's dashboard: the activity chart, or a saved chart by its id. */
export type CardRef = typeof ACTIVITY_CARD | number;

/** What a project's dashboard shows before its team arranges it. */
export const DEFAULT_CARDS: CardRef[] = [ACTIVITY_CARD];
