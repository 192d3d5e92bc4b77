// Saved questions: charts and funnels a team keeps and arranges on a project's dashboard.

export type ChartKind = "series" | "funnel" | "metric";

/**
 * A saved question about one project: what it asks (`definition`, the API's own parameters as JSON)
 * and where it sits on the project's dashboard (`position`, ascending; null when not pinned).
 */
export type Chart = {
  id: number;
  projectId: number;
  kind: ChartKind;
  name: string;
  definition: Record<string, unknown>;
  position: number | null;
  createdAt: number;
  updatedAt: number;
};

export type NewChart = Omit<Chart, "id" | "updatedAt">;

export type ChartChanges = Partial<Pick<Chart, "name" | "definition" | "position">>;
