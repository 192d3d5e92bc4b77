// What a check's notices say: the event recorded in the project's `alerts` channel, with notify,
// when a check goes down (a failure reported, silence past its schedule and grace, a run that never
// finished) and when it comes back up, written in the transaction that records its new state.
import type { Tags } from "../model/event.ts";
import type { Check } from "../model/check.ts";
import { at } from "./alert-kinds/kind.ts";
import type { Notice } from "./alert-notices.ts";
import { formatDuration, formatElapsed } from "./units.ts";

/** Why a check changed: a ping that reported a failure, silence, a start with no finish, or a success. */
export type CheckChange =
  | { to: "down"; why: "failed"; exitStatus: number | null }
  | { to: "down"; why: "silent" | "unfinished" }
  | { to: "up"; why: "success" };

/**
 * Whether this change notifies. Every change does today; this is the one place where quiet hours
 * (maintenance windows) and "after N failures in a row" decide for checks, as they do for alert
 * rules: a change that does not notify is still recorded, as an event without notify.
 */
export function notifies(_check: Check, _change: CheckChange, _now: number): boolean {
  return true;
}

export function describeSchedule(c: Pick<Check, "schedule" | "grace">): string {
  const s = c.schedule;
  const expected = s.kind === "cron" ? `when “${s.expr}” says (${s.tz})` : `every ${formatDuration(s.seconds * 1000)}`;
  return `${expected}, grace ${formatDuration(c.grace * 1000)}`;
}

export function checkNotice(c: Check, change: CheckChange, now: number): Notice {
  const tags: Tags = { check: c.slug, state: change.to, why: change.why };
  if (change.to === "up")
    return {
      event: `${c.name} is up`,
      description: `A success came at ${at(now)}, after ${formatElapsed(now - c.since)} down.`,
      icon: "✅",
      tags,
    };
  const words = {
    failed:
      change.why === "failed" && change.exitStatus !== null
        ? `It reported exit status ${change.exitStatus} at ${at(now)}.`
        : `It reported a failure at ${at(now)}.`,
    silent: `No success since ${c.lastPing === null ? "it was watched" : at(c.lastPing)}; expected ${describeSchedule(c)}.`,
    unfinished: `It started at ${c.lastStart === null ? "?" : at(c.lastStart)} and never finished within its grace of ${formatDuration(c.grace * 1000)}.`,
  }[change.why];
  const event = change.why === "unfinished" ? `${c.name} is down: started, never finished` : `${c.name} is down`;
  return { event, description: words, icon: "🚨", tags };
}
