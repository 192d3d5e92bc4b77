// Absence rules: an event matching the filter at least every period, or when a cron schedule says,
// plus a grace. The runner follows matching events live (a database read only when it does not know
// yet), so a firing rule is settled by the event that brings it back.
import { Cron } from "croner";
import { z } from "zod";
import type { AlertOf } from "../../model/alert.ts";
import { zoneName } from "../calendar.ts";
import * as rule from "../input-fields.ts";
import { formatDuration, formatElapsed } from "../units.ts";
import { type AlertKindModule, at, type Finding, describeFilter, issue, MAX_SECONDS, ms, seconds } from "./kind.ts";

/** Default grace: a tenth of the period; five minutes after a scheduled time. */
const CRON_GRACE_MS = 300_000;

type Absence = AlertOf<"absence">;

/** When silence after `base` becomes a problem: a period after it, or the next scheduled time after it; plus the grace. */
export function deadline(alert: Absence, base: number): number {
  const s = alert.schedule;
  if ("cron" in s) {
    const next = new Cron(s.cron, { timezone: s.tz, paused: true }).nextRun(new Date(base));
    return (next ? next.getTime() : Infinity) + alert.grace;
  }
  return base + s.period + alert.grace;
}

/** When a rule expects events, in words. */
export function describeSchedule(a: Absence): string {
  const s = a.schedule;
  const expected = "cron" in s ? `when “${s.cron}” says (${s.tz})` : `every ${formatDuration(s.period)}`;
  return `${expected}, grace ${formatDuration(a.grace)}`;
}

/** A cron schedule's problem, if it has one: five fields, as crontab has them, and a time that comes. */
export function cronProblem(cron: string, tz: string): string | null {
  const fields = cron.trim().split(/\s+/).length;
  try {
    // croner also takes seconds (a sixth, "every second"), which no rule can mean.
    if (fields !== 5 && !cron.trim().startsWith("@"))
      throw new Error(`${fields} field${fields === 1 ? "" : "s"}${fields === 6 ? ", a sixth for seconds" : ""}`);
    // A schedule that never comes (the 31st of February) is refused: nothing could be due, and croner looks years ahead for it at every check.
    if (!new Cron(cron, { timezone: tz, paused: true }).nextRun())
      return `never comes (${JSON.stringify(cron)} names no day that exists); five fields: minute hour day month weekday, as in "0 3 * * *"`;
  } catch (error) {
    return `${JSON.stringify(cron)} is not a cron schedule (${(error as Error).message}); five fields: minute hour day month weekday, as in "0 3 * * *"`;
  }
  return null;
}

export const absence = {
  kind: "absence",
  label: "An event stops coming (a heartbeat)",
  takes: { filter: true, threshold: false },
  fields: {
    period: seconds("absence: an event is expected at least this often.").optional(),
    cron: rule
      .text(100)
      .optional()
      .meta({ description: 'absence: when events are due, as a cron expression ("0 3 * * *"), instead of a period.' }),
    tz: rule.text(64).optional().meta({ description: "absence with cron: its time zone (an IANA name; default UTC)." }),
    grace: z
      .number({ error: "must be a number of seconds" })
      .min(0, "must be 0 or more")
      .max(MAX_SECONDS, "must be at most 366 days")
      .optional()
      .meta({
        description:
          "absence: how late an event may be (default: a tenth of the period, or 5 minutes after a scheduled time).",
      }),
  },

  spec(f, issues) {
    if (f.period === undefined && f.cron === undefined)
      issues.push(issue("period", "an absence rule needs a period (seconds) or a cron schedule"));
    if (f.period !== undefined && f.cron !== undefined)
      issues.push(issue("cron", "give a period or a cron schedule, not both"));
    const tz = f.cron === undefined ? null : zoneName(f.tz ?? "UTC");
    if (f.cron !== undefined && !tz)
      issues.push(issue("tz", `${JSON.stringify(f.tz)} is not a time zone; use an IANA name such as Europe/Berlin`));
    const problem = f.cron !== undefined && tz ? cronProblem(f.cron, tz) : null;
    if (problem) issues.push(issue("cron", problem));
    const period = ms(f.period) ?? 0;
    return {
      kind: "absence",
      schedule: f.cron !== undefined ? { cron: f.cron, tz: tz ?? "UTC" } : { period },
      grace: ms(f.grace) ?? (f.cron === undefined ? Math.round(period / 10) : CRON_GRACE_MS),
    };
  },

  fieldsOf(a) {
    const s = a.schedule;
    return { ...("cron" in s ? { cron: s.cron, tz: s.tz } : { period: s.period / 1000 }), grace: a.grace / 1000 };
  },

  watches: true,

  async find(a, reads): Promise<Finding | null> {
    const lastSeen = await reads.lastSeen();
    // Firing, only an event brings it back; otherwise silence is counted from the rule's start, the
    // server's start (it did not watch before) or the last event, whichever is latest.
    const base = a.state === "firing" ? lastSeen : Math.max(lastSeen ?? -Infinity, a.since, reads.startedAt);
    if (base === null) return { firing: true, facts: { last: null, watched: a.since } };
    const due = deadline(a, base);
    return { firing: reads.now > due, facts: { last: lastSeen, watched: base, due } };
  },

  notice(a, firing, still, facts, now) {
    const last = typeof facts.last === "number" ? facts.last : null;
    // Silence counts from the last event, or from when watching began when there was none.
    const silence = formatElapsed(now - (last ?? Number(facts.watched)));
    const seen =
      last === null
        ? `No matching event was stored in the ${silence} watched`
        : `The last matching event happened at ${at(last)}, ${silence} ago`;
    if (!firing)
      return {
        event: `${a.name} is back`,
        description: `${seen}: ${describeFilter(a.filter)}. Expected ${describeSchedule(a)}.`,
      };
    return {
      event: `${a.name}: ${still}no event for ${silence}`,
      description: `${seen} (${describeFilter(a.filter)}). Expected ${describeSchedule(a)}.`,
    };
  },

  describe: (a) => `${describeFilter(a.filter)}: expected ${describeSchedule(a)}`,

  brief(a) {
    const s = a.schedule;
    const grace = formatDuration(a.grace);
    return "cron" in s
      ? `cron "${s.cron}" ${s.tz}, grace ${grace}`
      : `every ${formatDuration(s.period)}, grace ${grace}`;
  },

  form: {
    fields(a, duration) {
      const s = a.schedule;
      return {
        schedule: "cron" in s ? "cron" : "period",
        period: "period" in s ? duration(s.period) : "",
        cron: "cron" in s ? s.cron : "",
        tz: "cron" in s ? s.tz : "",
        grace: duration(a.grace),
      };
    },
    input(f, duration) {
      const onSchedule = f.schedule === "cron";
      return {
        ...(onSchedule ? { cron: f.cron || undefined, tz: f.tz || undefined } : { period: duration("period") }),
        grace: duration("grace"),
      };
    },
  },
} satisfies AlertKindModule<"absence">;
