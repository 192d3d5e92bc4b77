// A series: events (or distinct users) per hour, day, week or month, with the search's filters,
// split by channel, name or a tag: the question of GET /v1/analytics/series.
import { z } from "zod";
import type { SeriesDefinition } from "../../model/chart.ts";
import { planSeries, type SeriesInput } from "../analytics.ts";
import * as rule from "../input-fields.ts";
import * as forms from "./form.ts";
import { type ChartKindModule, filters, filtersInput, inDefinition, range, ranged, rangeOf } from "./kind.ts";

const { channel, ...otherFilters } = filters;

export const seriesDefinition = ranged({
  channel,
  event: rule.eventName.optional(),
  ...otherFilters,
  ...range,
  interval: z.string().optional(),
  tz: z.string().optional(),
  measure: z.string().optional(),
  group_by: z.string().optional(),
  limit: z.number().optional(),
  /** How the dashboard draws it. */
  display: z.enum(["line", "bar"], { error: 'must be "line" or "bar"' }).optional(),
});

export function seriesInput(project: string, d: SeriesDefinition, now: number): SeriesInput {
  return {
    project,
    ...filtersInput(d),
    event: d.event,
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
    await feed.filterOf({ project: input.project, event: input.event, ...filtersInput(d) });
  },

  answer: async (project, d, { analytics }, now) => ({
    kind: "series",
    series: await analytics.series(seriesInput(project, d, now), now),
  }),

  describe: (d) => [
    d.measure === "users" ? "users" : "events",
    d.event ? `“${d.event}”` : "",
    ...forms.describeFilters(d),
    `per ${d.interval ?? "day"}`,
    d.group_by ? `by ${d.group_by.replace(/^tag:/, "tag ")}` : "",
  ],

  form: {
    definition(f) {
      const groupBy = forms.one(f, "group_by");
      return {
        ...forms.set("measure", forms.one(f, "measure") === "users" ? "users" : undefined),
        ...forms.set("event", forms.one(f, "event")),
        ...forms.filtersOfForm(f),
        ...forms.rangeOfForm(f),
        ...forms.set("interval", forms.one(f, "interval") || undefined),
        ...forms.set("tz", forms.one(f, "tz") || undefined),
        ...forms.set("group_by", groupBy === "tag" ? `tag:${forms.one(f, "group_tag")}` : groupBy || undefined),
        ...forms.set("limit", groupBy ? forms.numberOr(forms.one(f, "limit")) : undefined),
        ...forms.set("display", forms.one(f, "display") === "bar" ? "bar" : undefined),
      };
    },
    fields(d) {
      const groupBy = forms.str(d.group_by) ?? "";
      return {
        ...forms.formOfRange(d),
        measure: forms.str(d.measure),
        event: forms.str(d.event),
        ...forms.formOfFilters(d),
        interval: forms.str(d.interval),
        tz: forms.str(d.tz),
        group_by: groupBy.startsWith("tag:") ? "tag" : groupBy || undefined,
        group_tag: groupBy.startsWith("tag:") ? groupBy.slice(4) : undefined,
        limit: forms.str(d.limit),
        display: forms.str(d.display),
      };
    },
  },
} satisfies ChartKindModule<"series">;
