// Retention: of the users who did one thing in each day or week, those who came back to do another
// in each period after: the question of GET /v1/analytics/retention, its filters as a series has them.
import { z } from "zod";
import type { RetentionDefinition } from "../../model/chart.ts";
import type { RetentionInput } from "../analytics.ts";
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

export function retentionInput(project: string, d: RetentionDefinition, now: number): RetentionInput {
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

export const retention = {
  kind: "retention",
  name: "Retention",
  definition: retentionDefinition,

  async check(project, d, { analytics, feed }, now) {
    const input = retentionInput(project.name, d, now);
    await inDefinition(() => analytics.planRetention(input, now));
    await feed.filterOf({
      project: input.project,
      channel: input.channel,
      userId: input.userId,
      tags: input.tags,
      q: input.q,
    });
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
      ...describeFilters(d),
    ];
  },

  form: {
    definition: (f) => ({
      ...set("start_event", one(f, "start_event")),
      ...set("return_event", one(f, "return_event")),
      ...filtersOfForm(f),
      ...rangeOfForm(f),
      ...set("interval", one(f, "interval") || undefined),
      ...set("periods", numberOr(one(f, "periods"))),
      ...set("tz", one(f, "tz") || undefined),
    }),
    fields: (d) => ({
      ...formOfRange(d),
      start_event: str(d.start_event),
      return_event: str(d.return_event),
      ...formOfFilters(d),
      interval: str(d.interval),
      periods: str(d.periods),
      tz: str(d.tz),
    }),
  },
} satisfies ChartKindModule<"retention">;
