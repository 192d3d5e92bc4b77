// Saved questions: a project's charts (a series), funnels, metric charts and retention grids, each
// with a name and its question (the API's own parameters, as JSON: what GET /v1/analytics/series,
// /funnel, /retention or /v1/metrics/history takes); and the project's dashboard, the cards its team
// arranged: the activity chart and pinned charts. A question is checked when it is saved, as it
// would be when asked, so a saved chart always has an answer.
import { z } from "zod";
import { type FieldIssue, NotFound, ValidationError } from "../errors.ts";
import {
  ACTIVITY_CARD,
  type CardRef,
  type Chart,
  type ChartChanges,
  type ChartKind,
  DEFAULT_CARDS,
} from "../model/chart.ts";
import type { Project } from "../model/project.ts";
import type { Repositories, Store } from "../store/store.ts";
import {
  type AnalyticsService,
  type DroppedPage,
  type FunnelAnswer,
  type FunnelInput,
  type RetentionAnswer,
  type RetentionInput,
  type SeriesAnswer,
  type SeriesInput,
  planSeries,
} from "./analytics.ts";
import type { FeedService } from "./feed.ts";
import { type HistoryPage, MAX_HISTORY_PAGE } from "./metric-history.ts";
import { requireProject } from "./projects.ts";
import * as rule from "./input-fields.ts";
import { validate } from "./validation.ts";

const DAY = 86_400_000;
export const MAX_POSITION = 10_000;
/** Cards a dashboard holds at most. */
export const MAX_CARDS = 50;

/** A tag filter as GET /v1/events takes it: key:value, the key as tag keys are. */
const tagFilter = rule.text(400).refine((t) => t.indexOf(":") > 0 && rule.isTagKey(t.slice(0, t.indexOf(":"))), {
  message: "must look like key:value with a key of lowercase letters, digits or dashes, for example plan:pro",
});
const tagFilters = z.array(tagFilter).max(8, "at most 8 tag filters");
/** A fixed range (Unix seconds), or the last N days up to when it is read. */
const range = {
  from: z.number().optional(),
  to: z.number().optional(),
  last_days: z
    .number()
    .int("must be a whole number of days")
    .min(1, "must be at least 1")
    .max(3660, "must be at most 3660")
    .optional(),
};
const oneRange = (d: { from?: number; to?: number; last_days?: number }) =>
  d.last_days === undefined || (d.from === undefined && d.to === undefined);
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

const funnelStep = z.union(
  [
    rule.eventName,
    z.object({ event: rule.eventName, channel: rule.channelName.optional(), tag: tagFilters.optional() }).strict(),
  ],
  {
    error: 'each step is an event name, or {"event": NAME, "channel": NAME, "tag": ["key:value"]}',
  },
);

export const funnelDefinition = z
  .object({ steps: z.array(funnelStep), ...range, window: z.number().optional() })
  .strict()
  .refine(oneRange, rangeMessage);

export const metricDefinition = z
  .object({ title: rule.metricTitle, ...range })
  .strict()
  .refine(oneRange, rangeMessage);

/** Retention: the parameters of GET /v1/analytics/retention, its filters as a series has them. */
export const retentionDefinition = z
  .object({
    start_event: rule.eventName,
    return_event: rule.eventName,
    channel: rule.channelName.optional(),
    tag: tagFilters.optional(),
    user_id: rule.userId.optional(),
    q: rule.text(200).optional(),
    ...range,
    interval: z.string().optional(),
    periods: z.number().optional(),
    tz: z.string().optional(),
  })
  .strict()
  .refine(oneRange, rangeMessage);

const DEFINITIONS = {
  series: seriesDefinition,
  funnel: funnelDefinition,
  metric: metricDefinition,
  retention: retentionDefinition,
};

export const chartName = rule.text(100, { nonEmpty: true });
const position = z
  .number()
  .int("must be a whole number")
  .min(0, "must be 0 or more")
  .max(MAX_POSITION, `must be at most ${MAX_POSITION}`)
  .nullable();

const definition = z.record(z.string(), z.unknown(), { error: "must be an object: the question's parameters" }).meta({
  description:
    "The question: the parameters of GET /v1/analytics/series (series), steps and window (funnel), title (metric) or those of GET /v1/analytics/retention (retention), with last_days, or from and to.",
  examples: [{ event: "Signed up", group_by: "tag:plan", last_days: 30 }],
});
const where = position.meta({ description: "Its place on the project's dashboard (0 first); null: not pinned." });

export const chartInput = z.object({
  project: rule.projectName,
  kind: z
    .enum(["series", "funnel", "metric", "retention"], { error: "must be series, funnel, metric or retention" })
    .meta({
      description:
        "series (counts per bucket), funnel, metric (a metric's history) or retention (cohorts and their returns).",
    }),
  name: chartName,
  definition,
  position: where.optional(),
});

export const chartChanges = z.object({
  name: chartName.optional(),
  definition: definition.optional(),
  position: where.optional(),
});

export type ChartInput = z.input<typeof chartInput>;
export type ChartChangesInput = z.input<typeof chartChanges>;

/** A chart with its place on the project's dashboard (0 first; null when it is not there). */
export type PlacedChart = Chart & { position: number | null };

/** A dashboard's card: the activity chart, or a pinned chart. */
export type Card = { kind: typeof ACTIVITY_CARD } | { kind: "chart"; chart: Chart };

/** What a chart shows now: its kind's answer. */
export type ChartAnswer =
  | { kind: "series"; series: SeriesAnswer }
  | { kind: "funnel"; funnel: FunnelAnswer }
  | { kind: "metric"; metric: HistoryPage }
  | { kind: "retention"; retention: RetentionAnswer };
export type ChartData = { chart: Chart } & ChartAnswer;

const ms = (seconds: number | undefined) => (seconds === undefined ? undefined : seconds * 1000);

/** A range in Unix ms: the last N days to `now`, or from and to as saved. */
function rangeOf(d: { from?: number; to?: number; last_days?: number }, now: number): { from?: number; to?: number } {
  return d.last_days === undefined ? { from: ms(d.from), to: ms(d.to) } : { from: now - d.last_days * DAY, to: now };
}

export function seriesInput(project: string, d: z.output<typeof seriesDefinition>, now: number): SeriesInput {
  return {
    project,
    channel: d.channel,
    event: d.event,
    tags: d.tag,
    userId: d.user_id,
    q: d.q,
    ...rangeOf(d, now),
    interval: d.interval,
    tz: d.tz,
    measure: d.measure,
    groupBy: d.group_by,
    limit: d.limit,
  };
}

export function funnelInput(project: string, d: z.output<typeof funnelDefinition>, now: number): FunnelInput {
  const steps = d.steps.map((s) => (typeof s === "string" ? s : { event: s.event, channel: s.channel, tags: s.tag }));
  return { project, steps, ...rangeOf(d, now), window: ms(d.window) };
}

export function retentionInput(project: string, d: z.output<typeof retentionDefinition>, now: number): RetentionInput {
  return {
    project,
    startEvent: d.start_event,
    returnEvent: d.return_event,
    channel: d.channel,
    tags: d.tag,
    userId: d.user_id,
    q: d.q,
    ...rangeOf(d, now),
    interval: d.interval,
    periods: d.periods,
    tz: d.tz,
  };
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
  async function checkDefinition(
    project: Project,
    kind: ChartKind,
    definition: Record<string, unknown>,
    now: number,
  ): Promise<Record<string, unknown>> {
    const parsed = await inDefinition(() => validate(DEFINITIONS[kind], definition));
    if (kind === "series") {
      const input = seriesInput(project.name, parsed as z.output<typeof seriesDefinition>, now);
      await inDefinition(() => planSeries(input, now));
      // Its names resolved as the series route resolves them: a channel that does not exist is a 404.
      await feed.filterOf({
        project: input.project,
        channel: input.channel,
        event: input.event,
        userId: input.userId,
        tags: input.tags,
        q: input.q,
      });
    }
    if (kind === "funnel")
      await inDefinition(() =>
        analytics.planFunnel(funnelInput(project.name, parsed as z.output<typeof funnelDefinition>, now), now),
      );
    if (kind === "retention") {
      const input = retentionInput(project.name, parsed as z.output<typeof retentionDefinition>, now);
      await inDefinition(() => analytics.planRetention(input, now));
      await feed.filterOf({
        project: input.project,
        channel: input.channel,
        userId: input.userId,
        tags: input.tags,
        q: input.q,
      });
    }
    const title = kind === "metric" ? (parsed as z.output<typeof metricDefinition>).title : null;
    if (title !== null && !(await store.metrics.find(project.id, title)))
      throw new NotFound(`Metric "${title}" does not exist in project "${project.name}".`);
    return parsed as Record<string, unknown>;
  }

  /** What `definition` (of a chart of `kind` in `project`) shows now: the chart builder's preview, and a saved chart's data. */
  async function answer(
    project: string,
    kind: ChartKind,
    definition: Record<string, unknown>,
    now: number,
  ): Promise<ChartAnswer> {
    if (kind === "series")
      return {
        kind,
        series: await analytics.series(
          seriesInput(project, await inDefinition(() => validate(seriesDefinition, definition)), now),
          now,
        ),
      };
    if (kind === "funnel")
      return {
        kind,
        funnel: await analytics.funnel(
          funnelInput(project, await inDefinition(() => validate(funnelDefinition, definition)), now),
          now,
        ),
      };
    if (kind === "retention")
      return {
        kind,
        retention: await analytics.retention(
          retentionInput(project, await inDefinition(() => validate(retentionDefinition, definition)), now),
          now,
        ),
      };
    const d = await inDefinition(() => validate(metricDefinition, definition));
    const { from = now - 7 * DAY, to = now } = rangeOf(d, now);
    return {
      kind,
      metric: await feed.metricHistory({
        project,
        title: d.title,
        from,
        to,
        limit: MAX_HISTORY_PAGE,
        interval: "auto",
      }),
    };
  }

  /** The project's cards as arranged (the default when never arranged), without charts since deleted. */
  function cardsOf(layout: CardRef[] | null, charts: Chart[]): CardRef[] {
    const ids = new Set(charts.map((c) => c.id));
    return (layout ?? DEFAULT_CARDS).filter((card) => card === ACTIVITY_CARD || ids.has(card));
  }

  /**
   * Changes the project's layout in one transaction, from the layout as it is (locked, so changes
   * made at once all land): `change` gets the cards and the project's charts, and gives the cards.
   */
  function rearrange(
    projectId: number,
    now: number,
    change: (cards: CardRef[], charts: Chart[]) => CardRef[],
  ): Promise<void> {
    return store.tx((tx) => rearrangeIn(tx, projectId, now, change));
  }

  /** rearrange() inside a transaction that also writes the chart: a kill leaves both or neither. */
  async function rearrangeIn(
    tx: Repositories,
    projectId: number,
    now: number,
    change: (cards: CardRef[], charts: Chart[]) => CardRef[],
  ): Promise<void> {
    const charts = await tx.charts.list(projectId);
    const before = cardsOf(await tx.charts.layout(projectId, { lock: true }), charts);
    const cards = [...new Set(change(before, charts))];
    // A full dashboard says so: a card is never taken off to make room for another.
    if (cards.length > MAX_CARDS && cards.length > before.length)
      throw ValidationError.field(
        "position",
        "too_many",
        `position: a dashboard holds at most ${MAX_CARDS} cards; take one off it first`,
      );
    await tx.charts.setLayout(projectId, cards, now);
  }

  /** `cards` with `id` taken out, then put at `position` (null: left out). */
  const placed = (cards: CardRef[], id: number, position: number | null | undefined) => {
    const rest = cards.filter((c) => c !== id);
    if (position === null || position === undefined) return rest;
    return [...rest.slice(0, position), id, ...rest.slice(position)];
  };

  async function place(chart: Chart): Promise<PlacedChart> {
    // Its place among all the project's cards: the layout without only the charts since deleted.
    const [charts, layout] = await Promise.all([
      store.charts.list(chart.projectId),
      store.charts.layout(chart.projectId),
    ]);
    const cards = cardsOf(layout, charts);
    const at = cards.indexOf(chart.id);
    return { ...chart, position: at < 0 ? null : at };
  }

  return {
    /** A project's charts: those on its dashboard in their order, then the rest in the order they were made. */
    async list(projectName: string): Promise<PlacedChart[]> {
      const project = await requireProject(store, projectName);
      const [charts, layout] = await Promise.all([store.charts.list(project.id), store.charts.layout(project.id)]);
      const cards = cardsOf(layout, charts);
      const placed = charts.map((c) => ({ ...c, position: cards.indexOf(c.id) < 0 ? null : cards.indexOf(c.id) }));
      return placed.sort((a, b) => (a.position ?? Infinity) - (b.position ?? Infinity) || a.id - b.id);
    },

    async get(id: number): Promise<PlacedChart> {
      return place(await requireChart(id));
    },

    /** The project the chart belongs to. */
    projectOf,

    async create(input: ChartInput, now = Date.now()): Promise<PlacedChart> {
      // A bad name and a bad question are reported together: a form shows both at once.
      const issues: FieldIssue[] = [];
      const problems = (error: unknown) => {
        if (!(error instanceof ValidationError)) throw error;
        issues.push(...error.issues);
      };
      const named = typeof input === "object" && input !== null ? input : {};
      try {
        validate(chartInput.pick({ name: true }), named);
      } catch (error) {
        problems(error);
      }
      const c = validate(chartInput.omit({ name: true }), named);
      const project = await requireProject(store, c.project);
      const definition = await checkDefinition(project, c.kind, c.definition, now).catch(
        (error) => void problems(error),
      );
      if (issues.length || !definition) throw new ValidationError(issues, "body");
      const name = (input as { name: string }).name;
      // Made and pinned in one transaction: a kill in between left an unpinned chart the client was never told of (and made again when it retried).
      const chart = await store.tx(async (tx) => {
        const made = await tx.charts.create(
          { projectId: project.id, kind: c.kind, name, definition, createdAt: now },
          now,
        );
        if (c.position !== undefined && c.position !== null)
          await rearrangeIn(tx, project.id, now, (cards) => placed(cards, made.id, c.position));
        return made;
      });
      return place(chart);
    },

    async update(id: number, input: ChartChangesInput, now = Date.now()): Promise<PlacedChart> {
      const c = validate(chartChanges, input);
      const chart = await requireChart(id);
      const changes: ChartChanges = { name: c.name };
      if (c.definition)
        changes.definition = await checkDefinition(await projectOf(chart), chart.kind, c.definition, now);
      const updated = await store.tx(async (tx) => {
        const row = await tx.charts.update(id, changes, now);
        if (row && c.position !== undefined)
          await rearrangeIn(tx, chart.projectId, now, (cards) => placed(cards, id, c.position));
        return row;
      });
      if (!updated) throw new NotFound(`Chart ${id} does not exist.`);
      return place(updated);
    },

    async remove(id: number, now = Date.now()): Promise<void> {
      const chart = await requireChart(id);
      const deleted = await store.tx(async (tx) => {
        if (!(await tx.charts.delete(id))) return false;
        await rearrangeIn(tx, chart.projectId, now, (cards) => cards.filter((c) => c !== id));
        return true;
      });
      if (!deleted) throw new NotFound(`Chart ${id} does not exist.`);
    },

    /** The project's dashboard: its cards in order, each with its chart. */
    async dashboard(projectName: string): Promise<Card[]> {
      const project = await requireProject(store, projectName);
      const [charts, layout] = await Promise.all([store.charts.list(project.id), store.charts.layout(project.id)]);
      const byId = new Map(charts.map((c) => [c.id, c]));
      return cardsOf(layout, charts).map((card) =>
        card === ACTIVITY_CARD ? { kind: ACTIVITY_CARD } : { kind: "chart", chart: byId.get(card)! },
      );
    },

    /** Arranges the project's dashboard: `cards` in that order (the activity chart and charts of the project); the rest off it. */
    async arrange(projectName: string, cards: CardRef[], now = Date.now()): Promise<void> {
      const project = await requireProject(store, projectName);
      const mine = new Set((await store.charts.list(project.id)).map((c) => c.id));
      const stranger = cards.find((card) => card !== ACTIVITY_CARD && !mine.has(card));
      if (stranger !== undefined) throw new NotFound(`Chart ${stranger} does not exist in project "${project.name}".`);
      await rearrange(project.id, now, () => cards);
    },

    /** Moves a card one place up (-1) or down (+1), or adds it at the end (`add`), or takes it off (`remove`). */
    async moveCard(
      projectName: string,
      card: CardRef,
      move: "up" | "down" | "add" | "remove",
      now = Date.now(),
    ): Promise<void> {
      const project = await requireProject(store, projectName);
      if (card !== ACTIVITY_CARD && (await store.charts.find(card))?.projectId !== project.id)
        throw new NotFound(`Chart ${card} does not exist in project "${project.name}".`);
      await rearrange(project.id, now, (cards) => {
        const at = cards.indexOf(card);
        if (move === "remove") return cards.filter((c) => c !== card);
        if (move === "add") return at < 0 ? [...cards, card] : cards;
        const to = at + (move === "up" ? -1 : 1);
        if (at < 0 || to < 0 || to >= cards.length) return cards;
        const next = [...cards];
        [next[at], next[to]] = [next[to]!, next[at]!];
        return next;
      });
    },

    /** What the saved chart shows now. */
    async data(id: number, now = Date.now()): Promise<ChartData> {
      const chart = await requireChart(id);
      const project = await projectOf(chart);
      return { chart, ...(await answer(project.name, chart.kind, chart.definition, now)) };
    },

    /** A funnel's answer and a page of the users who dropped before step `at` (from 2). */
    async dropped(
      project: string,
      definition: Record<string, unknown>,
      at: number,
      cursor: string | undefined,
      now = Date.now(),
    ): Promise<{ funnel: FunnelAnswer; page: DroppedPage }> {
      const input = funnelInput(project, await inDefinition(() => validate(funnelDefinition, definition)), now);
      const [funnel, page] = await Promise.all([
        analytics.funnel(input, now),
        analytics.funnelDropped({ ...input, at, cursor }, now),
      ]);
      return { funnel, page };
    },

    /** What a chart of `kind` with `definition` would show now, unsaved (the builder's preview). */
    preview: (project: string, kind: ChartKind, definition: Record<string, unknown>, now = Date.now()) =>
      answer(project, kind, definition, now),
  };
}
