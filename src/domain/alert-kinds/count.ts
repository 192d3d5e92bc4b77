// Count rules: the events matching the filter within the last window, above or below a number.
// The runner counts the windows of a round's rules in a few reads, each question asked once.
import type { AlertOf } from "../../model/alert.ts";
import { formatDuration } from "../units.ts";
import { type AlertKindModule, at, beyond, count, describeFilter, fires, issue, ms, seconds } from "./kind.ts";

const events = (n: number) => `${count(n)} ${n === 1 ? "event" : "events"}`;

export const countKind = {
  kind: "count",
  label: "Too many or too few events",
  takes: { filter: true, threshold: true },
  fields: { window: seconds("count: the events of the last this many seconds.").optional() },

  spec(f, issues) {
    if (f.window === undefined) issues.push(issue("window", "a count rule needs a window (seconds)"));
    return { kind: "count", window: ms(f.window) ?? 0 };
  },

  fieldsOf: (a) => ({ window: a.window / 1000 }),

  window: (a) => a.window,

  async find(a: AlertOf<"count">, reads) {
    const n = await reads.count();
    // Too few events is told only once a whole window was watched.
    const watchedSince = Math.max(reads.startedAt, a.state === "ok" ? a.since : -Infinity);
    if (a.threshold.compare === "below" && a.state === "ok" && reads.now - watchedSince < a.window) return null;
    // The latest matching event is told only in a notice of firing, read when it is written.
    const firing = beyond(a.threshold, n);
    const last = firing && a.state !== "firing" ? await reads.latest() : null;
    return { firing, facts: { count: n, last } };
  },

  notice(a, firing, still, facts) {
    const n = Number(facts.count);
    const window = formatDuration(a.window);
    const last = typeof facts.last === "number" ? ` The latest matching event happened at ${at(facts.last)}.` : "";
    const said = `${events(n)} of ${describeFilter(a.filter)} in the last ${window}; the rule fires ${fires(a.threshold)}.`;
    return {
      event: firing ? `${a.name}: ${still}${events(n)} in ${window}` : `${a.name} is back: ${count(n)} in ${window}`,
      description: `${said}${firing ? last : ""}`,
    };
  },

  describe: (a) =>
    `${describeFilter(a.filter)}: ${a.threshold.compare} ${a.threshold.limit.toLocaleString("en-US")} in ${formatDuration(a.window)}`,

  brief: (a) => `${a.threshold.compare} ${a.threshold.limit} in ${formatDuration(a.window)}`,

  form: {
    fields: (a, duration) => ({ window: duration(a.window) }),
    input: (_f, duration) => ({ window: duration("window") }),
  },
} satisfies AlertKindModule<"count">;
