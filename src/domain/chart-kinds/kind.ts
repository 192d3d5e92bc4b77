// What a chart kind is: one module per kind (series.ts, funnel.ts, metric.ts, retention.ts),
// registered in index.ts. A kind says what its definition is (the API's parameters for its
// question, checked by a zod schema), how it is checked beyond that and how its answer is asked,
// how it reads in a few words, and how the chart builder's form maps onto it (form.ts).
import { z } from "zod";
import { type FieldIssue, ValidationError } from "../../errors.ts";
import type { ChartDefinitions, ChartKind, ChartRange } from "../../model/chart.ts";
import type { Project } from "../../model/project.ts";
import type { Store } from "../../store/store.ts";
import type { AnalyticsService, FunnelAnswer, RetentionAnswer, SeriesAnswer } from "../analytics.ts";
import type { FeedService } from "../feed.ts";
import type { HistoryPage } from "../metric-history.ts";
import * as rule from "../input-fields.ts";
import type { FormFields } from "./form.ts";

export const DAY = 86_400_000;

/** What a chart shows now: its kind's answer. */
export type ChartAnswer =
  | { kind: "series"; series: SeriesAnswer }
  | { kind: "funnel"; funnel: FunnelAnswer }
  | { kind: "metric"; metric: HistoryPage }
  | { kind: "retention"; retention: RetentionAnswer };

/** What a kind asks its questions of. */
export type ChartDeps = { store: Store; analytics: AnalyticsService; feed: FeedService };

export type ChartKindModule<K extends ChartKind> = {
  kind: K;
  /** What the pages call it. */
  name: string;
  /** Its definition's schema: the API's parameters for its question. */
  definition: z.ZodType<ChartDefinitions[K]>;
  /** Checks a definition beyond its schema, as it would be asked now (a 400 names its field, a 404 what is not there). */
  check(project: Project, d: ChartDefinitions[K], deps: ChartDeps, now: number): Promise<void>;
  /** What it shows now. */
  answer(project: string, d: ChartDefinitions[K], deps: ChartDeps, now: number): Promise<ChartAnswer>;
  /** What it asks, in a few words (its range said by the caller). */
  describe(d: ChartDefinitions[K]): string[];
  /** The builder's fields of its own: to its definition (unchecked), and back. */
  form: { definition(f: FormFields): Record<string, unknown>; fields(d: ChartDefinitions[K]): FormFields };
};

/** A tag filter as GET /v1/events takes it: key:value, the key as tag keys are. */
const tagFilter = rule.text(400).refine((t) => t.indexOf(":") > 0 && rule.isTagKey(t.slice(0, t.indexOf(":"))), {
  message: "must look like key:value with a key of lowercase letters, digits or dashes, for example plan:pro",
});
export const tagFilters = z.array(tagFilter).max(8, "at most 8 tag filters");

/** The search's filters, as a series and a retention grid take them. */
export const filters = {
  channel: rule.channelName.optional(),
  tag: tagFilters.optional(),
  user_id: rule.userId.optional(),
  q: rule.text(200).optional(),
};

/** Those filters as the analytics service takes them. */
export const filtersInput = (d: { channel?: string; tag?: string[]; user_id?: string; q?: string }) => ({
  channel: d.channel,
  tags: d.tag,
  userId: d.user_id,
  q: d.q,
});

/** A fixed range (Unix seconds), or the last N days up to when it is read. */
export const range = {
  from: z.number().optional(),
  to: z.number().optional(),
  last_days: z
    .number()
    .int("must be a whole number of days")
    .min(1, "must be at least 1")
    .max(3660, "must be at most 3660")
    .optional(),
};
const oneRange = (d: ChartRange) => d.last_days === undefined || (d.from === undefined && d.to === undefined);

/** A definition's schema: its parameters and no others, a range given one way. */
export const ranged = <T extends z.ZodRawShape>(shape: T) =>
  z
    .object(shape)
    .strict()
    .refine(oneRange, { message: "give last_days or from and to, not both", path: ["last_days"] });

export const ms = (seconds: number | undefined) => (seconds === undefined ? undefined : seconds * 1000);

/** A range in Unix ms: the last N days to `now`, or from and to as saved. */
export function rangeOf(d: ChartRange, now: number): { from?: number; to?: number } {
  return d.last_days === undefined ? { from: ms(d.from), to: ms(d.to) } : { from: now - d.last_days * DAY, to: now };
}

/** A range in words. */
export function describeRange(d: ChartRange): string {
  if (d.last_days !== undefined) return `last ${d.last_days} ${d.last_days === 1 ? "day" : "days"}`;
  return d.from !== undefined || d.to !== undefined ? "fixed range" : "last 30 days";
}

/** Runs `check` with the problems it finds named as fields of the definition. */
export async function inDefinition<T>(check: () => T | Promise<T>): Promise<T> {
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
