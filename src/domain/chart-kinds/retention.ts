// Retention: of the users who did one thing in each day or week, those who came back to do another
// in each period after: the question of GET /v1/analytics/retention, its filters as a series has them.
import { z } from "zod";
import type { RetentionDefinition } from "../../model/chart.ts";
import type { RetentionInput } from "../analytics.ts";
import * as rule from "../input-fields.ts";
import * as forms from "./form.ts";
import { type ChartKindModule, filters, filtersInput, inDefinition, range, ranged, rangeOf } from "./kind.ts";

export const retentionDefinition = ranged({
  start_event: rule.eventName,
  return_event: rule.eventName,
  ...filters,
  ...range,
  interval: z.string().optional(),
  periods: z.number().optional(),
  tz: z.string().optional(),
});

export function retentionInput(project: string, d: RetentionDefinition, now: number): RetentionInput {
  return {
    project,
    startEvent: d.start_event,
    returnEvent: d.return_event,
    ...filtersInput(d),
    ...rangeOf(d, now),
    interval: d.interval,
    periods: d.periods,
    tz: d.tz,
  };
}

export const retention = {
  kind: "retention",
  name: "Retention",
  definition: retentionDefinition,

  async check(project, d, { analytics, feed }, now) {
    const input = retentionInput(project.name, d, now);
    await inDefinition(() => analytics.planRetention(input, now));
    await feed.filterOf({ project: input.project, ...filtersInput(d) });
  },

  answer: async (project, d, { analytics }, now) => ({
    kind: "retention",
    retention: await analytics.retention(retentionInput(project, d, now), now),
  }),

  describe(d) {
    const word = d.interval === "week" ? "week" : "day";
    const periods = typeof d.periods === "number" ? d.periods : 7;
    return [
      `“${d.start_event}”, back with “${d.return_event}”`,
      `by ${word} for ${periods} ${periods === 1 ? word : `${word}s`}`,
      ...forms.describeFilters(d),
    ];
  },

  form: {
    definition: (f) => ({
      ...forms.set("start_event", forms.one(f, "start_event")),
      ...forms.set("return_event", forms.one(f, "return_event")),
      ...forms.filtersOfForm(f),
      ...forms.rangeOfForm(f),
      ...forms.set("interval", forms.one(f, "interval") || undefined),
      ...forms.set("periods", forms.numberOr(forms.one(f, "periods"))),
      ...forms.set("tz", forms.one(f, "tz") || undefined),
    }),
    fields: (d) => ({
      ...forms.formOfRange(d),
      start_event: forms.str(d.start_event),
      return_event: forms.str(d.return_event),
      ...forms.formOfFilters(d),
      interval: forms.str(d.interval),
      periods: forms.str(d.periods),
      tz: forms.str(d.tz),
    }),
  },
} satisfies ChartKindModule<"retention">;
