// Saved questions: charts, funnels, metric charts and retention grids a team keeps, and the cards of a
// project's dashboard.

export type ChartKind = "series" | "funnel" | "metric" | "retention";

/** A saved question about one project: what it asks (`definition`, the API's own parameters as JSON). */
export type Chart = {
  id: number;
  projectId: number;
  kind: ChartKind;
  name: string;
  definition: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
};

export type NewChart = Omit<Chart, "id" | "updatedAt">;

export type ChartChanges = Partial<Pick<Chart, "name" | "definition">>;

/** The built-in card: events per channel per day, following the page's search. */
export const ACTIVITY_CARD = "activity";

/** A card of a project's dashboard: the activity chart, or a saved chart by its id. */
export type CardRef = typeof ACTIVITY_CARD | number;

/** What a project's dashboard shows before its team arranges it. */
export const DEFAULT_CARDS: CardRef[] = [ACTIVITY_CARD];
