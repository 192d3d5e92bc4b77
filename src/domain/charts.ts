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
  type ChartDefinition,
  type ChartKind,
  DEFAULT_CARDS,
  type NewChart,
} from "../model/chart.ts";
import type { Project } from "../model/project.ts";
import type { Repositories, Store } from "../store/store.ts";
import type { AnalyticsService, DroppedPage, FunnelAnswer } from "./analytics.ts";
import { CHART_KIND_CHOICES, CHART_KINDS, chartKind } from "./chart-kinds/index.ts";
import { type ChartAnswer, type ChartDeps, inDefinition } from "./chart-kinds/kind.ts";
import { funnelDefinition, funnelInput } from "./chart-kinds/funnel.ts";
import type { FeedService } from "./feed.ts";
import { requireProject } from "./projects.ts";
import * as rule from "./input-fields.ts";
import { validate } from "./validation.ts";

export type { ChartAnswer } from "./chart-kinds/kind.ts";

export const MAX_POSITION = 10_000;
/** Cards a dashboard holds at most. */
export const MAX_CARDS = 50;

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
  kind: z.enum(CHART_KINDS, { error: `must be ${CHART_KIND_CHOICES}` }).meta({
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

export type ChartData = { chart: Chart } & ChartAnswer;

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

  const deps: ChartDeps = { store, analytics, feed };

  /** The definition, checked for its kind as it would be asked now (a 400 names its field, a 404 what it names that is not there). */
  async function checkDefinition(
    project: Project,
    kind: ChartKind,
    definition: Record<string, unknown>,
    now: number,
  ): Promise<ChartDefinition> {
    const k = chartKind(kind);
    const parsed = await inDefinition(() => validate(k.definition, definition));
    await k.check(project, parsed, deps, now);
    return parsed;
  }

  /** What `definition` (of a chart of `kind` in `project`) shows now: the chart builder's preview, and a saved chart's data. */
  async function answer(
    project: string,
    kind: ChartKind,
    definition: Record<string, unknown>,
    now: number,
  ): Promise<ChartAnswer> {
    const k = chartKind(kind);
    return k.answer(project, await inDefinition(() => validate(k.definition, definition)), deps, now);
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
          { projectId: project.id, kind: c.kind, name, definition, createdAt: now } as NewChart,
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
      return { chart, ...(await answer(project.name, chart.kind, chart.definition as Record<string, unknown>, now)) };
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
