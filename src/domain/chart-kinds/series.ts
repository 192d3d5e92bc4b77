// A series: events (or distinct users) per hour, day, week or month, with the search's filters,
// split by channel, name or a tag: the question of GET /v1/analytics/series.
import { z } from "zod";
import type { SeriesDefinition } from "../../model/chart.ts";
import { planSeries, type SeriesInput } from "../analytics.ts";
import * as rule from "../rules.ts";
import {
  describeFilters,
  filtersOfForm,
  formOfFilters,
  formOfRange,
  numberOr,
  one,
  rangeOfForm,
  set,
  str,
} from "./form.ts";
import { type ChartKindModule, inDefinition, oneRange, range, rangeMessage, rangeOf, tagFilters } from "./kind.ts";

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

export function seriesInput(project: string, d: SeriesDefinition, now: number): SeriesInput {
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

export const series = {
  kind: "series",
  name: "Chart",
  definition: seriesDefinition,

  async check(project, d, { feed }, now) {
    const input = seriesInput(project.name, d, now);
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
  },

  answer: async (project, d, { analytics }, now) => ({
    kind: "series",
    series: await analytics.series(seriesInput(project, d, now), now),
  }),

  describe: (d) => [
    d.measure === "users" ? "users" : "events",
    d.event ? `“${d.event}”` : "",
    ...describeFilters(d),
    `per ${d.interval ?? "day"}`,
    d.group_by ? `by ${d.group_by.replace(/^tag:/, "tag ")}` : "",
  ],

  form: {
    definition(f) {
      const groupBy = one(f, "group_by");
      return {
        ...set("measure", one(f, "measure") === "users" ? "users" : undefined),
        ...set("event", one(f, "event")),
        ...filtersOfForm(f),
        ...rangeOfForm(f),
        ...set("interval", one(f, "interval") || undefined),
        ...set("tz", one(f, "tz") || undefined),
        ...set("group_by", groupBy === "tag" ? `tag:${one(f, "group_tag")}` : groupBy || undefined),
        ...set("limit", groupBy ? numberOr(one(f, "limit")) : undefined),
        ...set("display", one(f, "display") === "bar" ? "bar" : undefined),
      };
    },
    fields(d) {
      const groupBy = str(d.group_by) ?? "";
      return {
        ...formOfRange(d),
        measure: str(d.measure),
        event: str(d.event),
        ...formOfFilters(d),
        interval: str(d.interval),
        tz: str(d.tz),
        group_by: groupBy.startsWith("tag:") ? "tag" : groupBy || undefined,
        group_tag: groupBy.startsWith("tag:") ? groupBy.slice(4) : undefined,
        limit: str(d.limit),
        display: str(d.display),
      };
    },
  },
} satisfies ChartKindModule<"series">;
