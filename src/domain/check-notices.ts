// What a check's notices say: the event recorded in the project's `alerts` channel, with notify,
// when a check goes down (a failure reported, silence past its schedule and grace, a run that never
// finished) and when it comes back up, written in the transaction that records its new state; and
// whether it notifies (quiet.ts: maintenance windows, notify_after), with what was told kept beside
// the check's state.
import type { Tags } from "../model/event.ts";
import type { Check } from "../model/check.ts";
import type { Maintenance } from "../model/maintenance.ts";
import { at } from "./alert-kinds/kind.ts";
import type { Notice } from "./alert-notices.ts";
import { deadlineOf } from "./checks.ts";
import { type Decision, decide, occurrence } from "./quiet.ts";
import { formatDuration, formatElapsed } from "./units.ts";

/** Why a check changed: a ping that reported a failure, silence, a start with no finish, or a success. */
export type CheckChange =
  | { to: "down"; why: "failed"; exitStatus: number | null }
  | { to: "down"; why: "silent" | "unfinished" }
  | { to: "up"; why: "success" };

/** A failure counted (a failure ping, a deadline missed): the streak, up to notifyAfter, and when. */
export const countFailure = (c: Check, now: number): Pick<Check, "streak" | "counted"> => ({
  streak: Math.min(c.streak + 1, c.notifyAfter),
  counted: now,
});

/**
 * Whether `c`, as it is after a ping or a round, notifies now: quiet.ts's decision (maintenance
 * windows of its project, notify_after, a recovery from a down never told). The windows are read
 * only when what was told differs from where it stands, so most pings read nothing more.
 */
export async function decideCheck(c: Check, now: number, windows: () => Promise<Maintenance[]>): Promise<Decision> {
  const failing = c.state === "down";
  const toldFailing = c.notified === "down";
  const standing = { projectId: c.projectId, failing, streak: c.streak, notifyAfter: c.notifyAfter, toldFailing, now };
  // Nothing to tell: no window changes that (quiet.ts), so none is read.
  return decide(failing === toldFailing ? [] : await windows(), standing);
}

/** When silence makes `c` down: a period (or its next cron time) and grace after its last ping, or grace after its open start; null when it cannot (new, down, paused). */
export function dueAt(c: Check): number | null {
  if (c.state === "up") return deadlineOf(c.schedule, c.grace, c.lastPing ?? c.since);
  if (c.state === "started") return (c.lastStart ?? c.since) + c.grace * 1000;
  return null;
}

/** When a down check's next missed deadline counts another failure: from the last one counted. */
export function nextFailureAt(c: Check, now: number): number | null {
  return deadlineOf(c.schedule, c.grace, c.counted ?? now);
}

/**
 * When the silence round looks at `c` (as it is after a change) again: its own deadline (`due`,
 * null when down); for a down not yet told, the next deadline that counts a failure; and for a
 * notice held by a maintenance window, that window's end, when it goes out if still due.
 */
export function revisitAt(
  c: Check,
  due: number | null,
  decision: Decision,
  windows: Maintenance[],
  now: number,
): number | null {
  let at = due;
  const soonest = (t: number | null) => {
    if (t !== null && (at === null || t < at)) at = t;
  };
  if (c.state === "down" && !decision.toldFailing && c.streak < c.notifyAfter) soonest(nextFailureAt(c, now));
  if (decision.quiet === "maintenance")
    for (const w of windows) {
      const o = occurrence(w, now);
      if (o && o.start <= now && o.end > now) soonest(o.end);
    }
  return at;
}

/** The change a notice tells when it goes out late (a window ended, the streak grew): where it stands. */
export function standingChange(c: Check, failed: { exitStatus: number | null } | null = null): CheckChange {
  if (c.state !== "down") return { to: "up", why: "success" };
  return failed ? { to: "down", why: "failed", exitStatus: failed.exitStatus } : { to: "down", why: "silent" };
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
