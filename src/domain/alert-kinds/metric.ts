// Metric rules: a metric's value above or below a number, read at each check.
import * as rule from "../input-fields.ts";
import { type AlertKindModule, at, beyond, count, fires, issue } from "./kind.ts";

export const metric = {
  kind: "metric",
  label: "A metric past a limit",
  takes: { filter: false, threshold: true },
  fields: { metric: rule.metricTitle.optional().meta({ description: "metric: the metric's title." }) },

  spec(f, issues) {
    if (f.metric === undefined) issues.push(issue("metric", "a metric rule needs the metric's title"));
    return { kind: "metric", metric: f.metric ?? "" };
  },

  fieldsOf: (a) => ({ metric: a.metric }),

  async find(a, reads) {
    const m = await reads.metric(a.metric);
    // A metric that holds no number tells nothing.
    if (typeof m?.value !== "number") return null;
    return { firing: beyond(a.threshold, m.value), facts: { value: m.value, at: m.updatedAt } };
  },

  notice(a, firing, still, facts) {
    const value = count(Number(facts.value));
    const set = typeof facts.at === "number" ? ` (set at ${at(facts.at)})` : "";
    return {
      event: firing ? `${a.name}: ${still}${a.metric} is ${value}` : `${a.name} is back: ${a.metric} is ${value}`,
      description: `${a.metric} is ${value}${set}; the rule fires ${fires(a.threshold)}.`,
    };
  },

  describe: (a) => `${a.metric} ${a.threshold.compare} ${a.threshold.limit.toLocaleString("en-US")}`,

  brief: (a) => `${a.metric} ${a.threshold.compare} ${a.threshold.limit}`,

  form: {
    fields: (a) => ({ metric: a.metric }),
    input: (f) => ({ metric: f.metric || undefined }),
  },
} satisfies AlertKindModule<"metric">;
