// Saved charts, funnels, metric charts and retention grids for full-access tokens: listed, read with
// their data, and made, changed and deleted (for provisioning scripts; the dashboard uses the same
// service).
import { z } from "zod";
import { type ChartData, chartChanges, chartInput, type PlacedChart } from "../domain/charts.ts";
import * as rule from "../domain/input-fields.ts";
import { validate } from "../domain/validation.ts";
import { readJson } from "../http/body.ts";
import { type ProjectOf, projectInBody, projectInQuery, type Route, route } from "../http/routes.ts";
import type { Services } from "../services.ts";
import { apiFunnel, apiRetention, apiSeries } from "./analytics.ts";
import { apiBucket, apiMetric, ok } from "./views.ts";

export const chartsQuery = z.object({
  project: rule.projectName.optional().meta({ description: "The project (default: the default project)." }),
});
export const chartParams = z.object({
  id: z
    .string()
    .regex(/^\d{1,9}$/, "must be a chart id (a positive integer)")
    .transform(Number),
});

export function apiChart(chart: PlacedChart, project: string) {
  return {
    id: chart.id,
    project,
    kind: chart.kind,
    name: chart.name,
    definition: chart.definition,
    position: chart.position,
    created_at: chart.createdAt / 1000,
    updated_at: chart.updatedAt / 1000,
  };
}

/** A chart's data in the shape of the route that answers its kind of question. */
function apiData(data: ChartData) {
  if (data.kind === "series") return apiSeries(data.series);
  if (data.kind === "funnel") return apiFunnel(data.funnel);
  if (data.kind === "retention") return apiRetention(data.retention);
  const m = data.metric;
  return {
    metric: apiMetric(m.metric),
    interval: m.interval === null ? null : m.interval / 1000,
    points: m.interval === null ? [] : m.buckets.map(apiBucket),
    next_cursor: m.nextCursor,
  };
}

const CHART_EXAMPLE = {
  id: 1,
  project: "my-saas",
  kind: "series",
  name: "Sign-ups by plan",
  definition: { event: "Signed up", last_days: 30, interval: "day", group_by: "tag:plan" },
  position: 0,
  created_at: 1767225600,
  updated_at: 1767225600,
};

export function chartRoutes({ charts, config }: Services): Route[] {
  const named = async (chart: PlacedChart) => apiChart(chart, (await charts.projectOf(chart)).name);
  const chartProject: ProjectOf = async ({ params }) =>
    (await charts.projectOf(await charts.get(validate(chartParams, params, "query").id))).name;
  return [
    route({
      method: "GET",
      path: "/v1/charts",
      access: "full",
      project: projectInQuery(config.defaultProject),
      query: chartsQuery,
      doc: {
        summary: "A project's saved charts, funnels, metric charts and retention grids",
        description:
          "Those on the project's dashboard first, by position; then the rest, in the order they were made. Full-access tokens only.",
        example: { success: true, statusCode: 200, charts: [CHART_EXAMPLE] },
      },
      async handle({ query }) {
        const project = query.project ?? config.defaultProject;
        return ok({ charts: (await charts.list(project)).map((c) => apiChart(c, project)) });
      },
    }),
    route({
      method: "POST",
      path: "/v1/charts",
      access: "full",
      project: projectInBody(config.bodyLimit),
      doc: {
        summary: "Save a chart, funnel, metric chart or retention grid",
        description:
          "definition holds the question as the API's parameters: for a series those of GET /v1/analytics/series (tag a list), for a funnel steps (names, or {event, channel, tag}) and window, for a metric its title, for retention those of GET /v1/analytics/retention (start_event and return_event, tag a list); " +
          "a range as last_days, or from and to. position pins it to the project's dashboard. It is checked as it would be asked. Full-access tokens only.",
        body: chartInput,
        example: { success: true, statusCode: 200, chart: CHART_EXAMPLE },
      },
      async handle({ request }) {
        return ok({
          chart: await named(
            await charts.create((await readJson(request, config.bodyLimit)) as z.input<typeof chartInput>),
          ),
        });
      },
    }),
    route({
      method: "GET",
      path: "/v1/charts/:id",
      access: "full",
      project: chartProject,
      params: chartParams,
      doc: {
        summary: "A saved chart",
        description: "Full-access tokens only.",
        example: { success: true, statusCode: 200, chart: CHART_EXAMPLE },
      },
      async handle({ params }) {
        return ok({ chart: await named(await charts.get(params.id)) });
      },
    }),
    route({
      method: "PATCH",
      path: "/v1/charts/:id",
      access: "full",
      project: chartProject,
      params: chartParams,
      doc: {
        summary: "Change a saved chart",
        description: "Its name, definition or position (null unpins it). Full-access tokens only.",
        body: chartChanges,
        example: { success: true, statusCode: 200, chart: CHART_EXAMPLE },
      },
      async handle({ request, params }) {
        return ok({
          chart: await named(
            await charts.update(params.id, (await readJson(request, config.bodyLimit)) as z.input<typeof chartChanges>),
          ),
        });
      },
    }),
    route({
      method: "DELETE",
      path: "/v1/charts/:id",
      access: "full",
      project: chartProject,
      params: chartParams,
      doc: {
        summary: "Delete a saved chart",
        description: "Full-access tokens only.",
        example: { success: true, statusCode: 200 },
      },
      async handle({ params }) {
        await charts.remove(params.id);
        return ok();
      },
    }),
    route({
      method: "GET",
      path: "/v1/charts/:id/data",
      access: "full",
      project: chartProject,
      params: chartParams,
      doc: {
        summary: "What a saved chart shows now",
        description:
          "The answer of its question, as GET /v1/analytics/series, GET /v1/analytics/funnel, GET /v1/analytics/retention or GET /v1/metrics/history (with interval=auto) answer it, with the chart. Full-access tokens only.",
        example: {
          success: true,
          statusCode: 200,
          chart: CHART_EXAMPLE,
          kind: "series",
          interval: "day",
          from: 1764633600,
          to: 1767225600,
          series: [],
        },
      },
      async handle({ params }) {
        const data = await charts.data(params.id);
        return ok({ chart: await named(await charts.get(data.chart.id)), kind: data.kind, ...apiData(data) });
      },
    }),
  ];
}
