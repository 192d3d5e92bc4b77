// A funnel: users through steps in order, each within the window of the first: the question of
// GET /v1/analytics/funnel.
import { z } from "zod";
import type { FunnelDefinition } from "../../model/chart.ts";
import type { FunnelInput } from "../analytics.ts";
import * as rule from "../input-fields.ts";
import * as forms from "./form.ts";
import { type ChartKindModule, inDefinition, ms, range, ranged, rangeOf, tagFilters } from "./kind.ts";

const funnelStep = z.union(
  [
    rule.eventName,
    z.object({ event: rule.eventName, channel: rule.channelName.optional(), tag: tagFilters.optional() }).strict(),
  ],
  {
    error: 'each step is an event name, or {"event": NAME, "channel": NAME, "tag": ["key:value"]}',
  },
);

export const funnelDefinition = ranged({ steps: z.array(funnelStep), ...range, window: z.number().optional() });

export function funnelInput(project: string, d: FunnelDefinition, now: number): FunnelInput {
  const steps = d.steps.map((s) => (typeof s === "string" ? s : { event: s.event, channel: s.channel, tags: s.tag }));
  return { project, steps, ...rangeOf(d, now), window: ms(d.window) };
}

export const funnel = {
  kind: "funnel",
  name: "Funnel",
  definition: funnelDefinition,

  async check(project, d, { analytics }, now) {
    await inDefinition(() => analytics.planFunnel(funnelInput(project.name, d, now), now));
  },

  answer: async (project, d, { analytics }, now) => ({
    kind: "funnel",
    funnel: await analytics.funnel(funnelInput(project, d, now), now),
  }),

  describe: (d) => [`${d.steps.length} steps`],

  form: {
    definition(f) {
      const channels = forms.list(f, "step_channel");
      const steps = forms
        .list(f, "step")
        .map((event, i) => ({ event: event.trim(), channel: channels[i]?.trim() ?? "" }))
        .filter((s) => s.event)
        .map((s) => (s.channel ? { event: s.event, channel: s.channel } : s.event));
      return { steps, ...forms.set("window", forms.numberOr(forms.one(f, "window"))), ...forms.rangeOfForm(f) };
    },
    fields: (d) => ({
      ...forms.formOfRange(d),
      step: d.steps.map((s) => (typeof s === "string" ? s : s.event)),
      step_channel: d.steps.map((s) => (typeof s === "string" ? "" : (s.channel ?? ""))),
      window: forms.str(d.window),
    }),
  },
} satisfies ChartKindModule<"funnel">;
