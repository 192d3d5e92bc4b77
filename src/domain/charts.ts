// Saved questions: a project's charts (a series), funnels and metric charts, each with a name, its
// question (the API's own parameters, as JSON: what GET /v1/analytics/series or /funnel or
// /v1/metrics/history takes) and, when pinned, a place on the project's dashboard. A question is
// checked when it is saved, as it would be when asked, so a saved chart always has an answer.
import { z } from "zod";
import { type FieldIssue, NotFound, ValidationError } from "../errors.ts";
import type { Chart, ChartChanges, ChartKind } from "../model/chart.ts";
import type { Project } from "../model/project.ts";
import type { Store } from "../store/store.ts";
import { type AnalyticsService, type FunnelAnswer, type FunnelInput, type SeriesAnswer, type SeriesInput, planSeries } from "./analytics.ts";
import type { FeedService } from "./feed.ts";
import { type HistoryPage, MAX_HISTORY_PAGE } from "./metric-history.ts";
import { requireProject } from "./projects.ts";
import * as rule from "./rules.ts";
import { validate } from "./validation.ts";

const DAY = 86_400_000;
export const CHART_KINDS: ChartKind[] = ["series", "funnel", "metric"];
export const MAX_POSITION = 10_000;

const tagFilters = z.array(rule.text(400)).max(8, "at most 8 tag filters");
/** A fixed range (Unix seconds), or the last N days up to when it is read. */
const range = {
  from: z.number().optional(),
  to: z.number().optional(),
  last_days: z.number().int("must be a whole number of days").min(1, "must be at least 1").max(3660, "must be at most 3660").optional(),
};
const oneRange = (d: { from?: number; to?: number; last_days?: number }) => d.last_days === undefined || (d.from === undefined && d.to === undefined);
const rangeMessage = { message: "give last_days or from and to, not both", path: ["last_days"] };

export const seriesDefinition = z
  .object({
    channel: rule.channelName.optional(),
    event: rule.eventName.optional(),
    tag: tagFilters.optional(),
    user_id: rule.userId.optional(),
    q: rule.text(200).optional(),
    ...range,
    interval: z.string().optional(),
    tz: z.string().optional(),
    measure: z.string().optional(),
    group_by: z.string().optional(),
    limit: z.number().optional(),
    /** How the dashboard draws it. */
    display: z.enum(["line", "bar"], { error: 'must be "line" or "bar"' }).optional(),
  })
  .strict()
  .refine(oneRange, rangeMessage);

const funnelStep = z.union([rule.eventName, z.object({ event: rule.eventName, channel: rule.channelName.optional(), tag: tagFilters.optional() }).strict()], {
  error: 'each step is an event name, or {"event": NAME, "channel": NAME, "tag": ["key:value"]}',
});

export const funnelDefinition = z
  .object({ steps: z.array(funnelStep), ...range, window: z.number().optional() })
  .strict()
  .refine(oneRange, rangeMessage);

export const metricDefinition = z
  .object({ title: rule.metricTitle, ...range })
  .strict()
  .refine(oneRange, rangeMessage);

const DEFINITIONS = { series: seriesDefinition, funnel: funnelDefinition, metric: metricDefinition };

export const chartName = rule.text(100, { nonEmpty: true });
const position = z.number().int("must be a whole number").min(0, "must be 0 or more").max(MAX_POSITION, `must be at most ${MAX_POSITION}`).nullable();

const definition = z.record(z.string(), z.unknown(), { error: "must be an object: the question's parameters" }).meta({
  description: "The question: the parameters of GET /v1/analytics/series (series), steps and window (funnel) or title (metric), with last_days, or from and to.",
  examples: [{ event: "Signed up", group_by: "tag:plan", last_days: 30 }],
});
const where = position.meta({ description: "Its place on the project's dashboard (0 first); null: not pinned." });

export const chartInput = z.object({
  project: rule.projectName,
  kind: z.enum(["series", "funnel", "metric"], { error: "must be series, funnel or metric" }).meta({ description: "series (counts per bucket), funnel, or metric (a metric's history)." }),
  name: chartName,
  definition,
  position: where.optional(),
});

export const chartChanges = z.object({ name: chartName.optional(), definition: definition.optional(), position: where.optional() });

export type ChartInput = z.input<typeof chartInput>;
export type ChartChangesInput = z.input<typeof chartChanges>;

/** What a chart shows now: its kind's answer. */
export type ChartAnswer = { kind: "series"; series: SeriesAnswer } | { kind: "funnel"; funnel: FunnelAnswer } | { kind: "metric"; metric: HistoryPage };
export type ChartData = { chart: Chart } & ChartAnswer;

const ms = (seconds: number | undefined) => (seconds === undefined ? undefined : seconds * 1000);

/** A range in Unix ms: the last N days to `now`, or from and to as saved. */
function rangeOf(d: { from?: number; to?: number; last_days?: number }, now: number): { from?: number; to?: number } {
  return d.last_days === undefined ? { from: ms(d.from), to: ms(d.to) } : { from: now - d.last_days * DAY, to: now };
}

export function seriesInput(project: string, d: z.output<typeof seriesDefinition>, now: number): SeriesInput {
  return { project, channel: d.channel, event: d.event, tags: d.tag, userId: d.user_id, q: d.q, ...rangeOf(d, now), interval: d.interval, tz: d.tz, measure: d.measure, groupBy: d.group_by, limit: d.limit };
}

export function funnelInput(project: string, d: z.output<typeof funnelDefinition>, now: number): FunnelInput {
  const steps = d.steps.map((s) => (typeof s === "string" ? s : { event: s.event, channel: s.channel, tags: s.tag }));
  return { project, steps, ...rangeOf(d, now), window: ms(d.window) };
}

/** Runs `check` with the problems it finds named as fields of the definition. */
async function inDefinition<T>(check: () => T | Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    const issues = error.issues.map((i): FieldIssue => {
      const path = i.path ? `definition.${i.path}` : "definition";
      const said = i.message.replace(/^(the request (body|query)|[^:]*): /, "");
      return { ...i, path, message: `${path}: ${said}` };
    });
    throw new ValidationError(issues, "body");
  }
}

export function chartService(store: Store, analytics: AnalyticsService, feed: FeedService) {
  async function projectOf(chart: Chart): Promise<Project> {
    const project = await store.projects.findById(chart.projectId);
    if (!project) throw new NotFound(`Chart ${chart.id} does not exist.`);
    return project;
  }

  async function requireChart(id: number): Promise<Chart> {
    const chart = await store.charts.find(id);
    if (!chart) throw new NotFound(`Chart ${id} does not exist.`);
    return chart;
  }

  /** The definition, checked for its kind as it would be asked now (a 400 names its field, a 404 what it names that is not there). */
  async function checkDefinition(project: Project, kind: ChartKind, definition: Record<string, unknown>, now: number): Promise<Record<string, unknown>> {
    const parsed = await inDefinition(() => validate(DEFINITIONS[kind], definition));
    if (kind === "series") await inDefinition(() => planSeries(seriesInput(project.name, parsed as z.output<typeof seriesDefinition>, now), now));
    if (kind === "funnel") await inDefinition(() => analytics.planFunnel(funnelInput(project.name, parsed as z.output<typeof funnelDefinition>, now), now));
    const title = kind === "metric" ? (parsed as z.output<typeof metricDefinition>).title : null;
    if (title !== null && !(await store.metrics.find(project.id, title))) throw new NotFound(`Metric "${title}" does not exist in project "${project.name}".`);
    return parsed as Record<string, unknown>;
  }

  /** What `definition` (of a chart of `kind` in `project`) shows now: the chart builder's preview, and a saved chart's data. */
  async function answer(project: string, kind: ChartKind, definition: Record<string, unknown>, now: number): Promise<ChartAnswer> {
    if (kind === "series") return { kind, series: await analytics.series(seriesInput(project, await inDefinition(() => validate(seriesDefinition, definition)), now), now) };
    if (kind === "funnel") return { kind, funnel: await analytics.funnel(funnelInput(project, await inDefinition(() => validate(funnelDefinition, definition)), now), now) };
    const d = await inDefinition(() => validate(metricDefinition, definition));
    const { from = now - 7 * DAY, to = now } = rangeOf(d, now);
    return { kind, metric: await feed.metricHistory({ project, title: d.title, from, to, limit: MAX_HISTORY_PAGE, interval: "auto" }) };
  }

  return {
    /** A project's charts: the pinned ones by position, then the rest in the order they were made. */
    async list(projectName: string): Promise<Chart[]> {
      return store.charts.list((await requireProject(store, projectName)).id);
    },

    get: requireChart,

    /** The project the chart belongs to. */
    projectOf,

    async create(input: ChartInput, now = Date.now()): Promise<Chart> {
      const c = validate(chartInput, input);
      const project = await requireProject(store, c.project);
      const definition = await checkDefinition(project, c.kind, c.definition, now);
      return store.charts.create({ projectId: project.id, kind: c.kind, name: c.name, definition, position: c.position ?? null, createdAt: now }, now);
    },

    async update(id: number, input: ChartChangesInput, now = Date.now()): Promise<Chart> {
      const c = validate(chartChanges, input);
      const chart = await requireChart(id);
      const changes: ChartChanges = { name: c.name, position: c.position };
      if (c.definition) changes.definition = await checkDefinition(await projectOf(chart), chart.kind, c.definition, now);
      return (await store.charts.update(id, changes, now)) ?? requireChart(id);
    },

    async remove(id: number): Promise<void> {
      if (!(await store.charts.delete(id))) throw new NotFound(`Chart ${id} does not exist.`);
    },

    /** Pins `ids` (charts of the project) in that order and unpins the project's others: the dashboard's arrangement. */
    async arrange(projectName: string, ids: number[], now = Date.now()): Promise<Chart[]> {
      const project = await requireProject(store, projectName);
      const mine = new Set((await store.charts.list(project.id)).map((c) => c.id));
      const stranger = ids.find((id) => !mine.has(id));
      if (stranger !== undefined) throw new NotFound(`Chart ${stranger} does not exist in project "${project.name}".`);
      await store.charts.arrange(project.id, [...new Set(ids)], now);
      return store.charts.list(project.id);
    },

    /** What the saved chart shows now. */
    async data(id: number, now = Date.now()): Promise<ChartData> {
      const chart = await requireChart(id);
      const project = await projectOf(chart);
      return { chart, ...(await answer(project.name, chart.kind, chart.definition, now)) };
    },

    /** What a chart of `kind` with `definition` would show now, unsaved (the builder's preview). */
    preview: (project: string, kind: ChartKind, definition: Record<string, unknown>, now = Date.now()) => answer(project, kind, definition, now),
  };
}

export type ChartService = ReturnType<typeof chartService>;
