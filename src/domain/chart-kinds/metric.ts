// A metric chart: a metric's history, as GET /v1/metrics/history answers it (interval=auto).
import { NotFound } from "../../errors.ts";
import { MAX_HISTORY_PAGE } from "../metric-history.ts";
import * as rule from "../input-fields.ts";
import * as forms from "./form.ts";
import { type ChartKindModule, DAY, range, ranged, rangeOf } from "./kind.ts";

export const metricDefinition = ranged({ title: rule.metricTitle, ...range });

export const metricChart = {
  kind: "metric",
  name: "Metric chart",
  definition: metricDefinition,

  async check(project, d, { store }) {
    if (!(await store.metrics.find(project.id, d.title)))
      throw new NotFound(`Metric "${d.title}" does not exist in project "${project.name}".`);
  },

  async answer(project, d, { feed }, now) {
    const { from = now - 7 * DAY, to = now } = rangeOf(d, now);
    return {
      kind: "metric",
      metric: await feed.metricHistory({
        project,
        title: d.title,
        from,
        to,
        limit: MAX_HISTORY_PAGE,
        interval: "auto",
      }),
    };
  },

  describe: (d) => [d.title],

  form: {
    definition: (f) => ({ ...forms.set("title", forms.one(f, "title")), ...forms.rangeOfForm(f) }),
    fields: (d) => ({ ...forms.formOfRange(d), title: forms.str(d.title) }),
  },
} satisfies ChartKindModule<"metric">;
