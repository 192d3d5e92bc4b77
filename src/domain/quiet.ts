// Quiet when it should be: whether a change of what a project watches notifies anyone now. One
// decision for everything that watches and notifies (alert rules today, checks beside them): it
// is given the thing's project, whether it is failing (a rule firing, a check down), how many
// rounds or failures in a row it has been failing, after how many it should notify, what its last
// notice told, and the time; it answers whether to notify now, what will have been told after,
// and, when it holds a notice back, why.
//
// - Inside one of the project's maintenance windows nothing notifies; what changed is recorded
//   (the caller still writes the state and its event, without notify). When the window ends, a
//   thing whose state differs from what was told notifies on its next round: still failing, it
//   says so then; failing and back inside the window, nothing was told and nothing is.
// - A failure notifies once it has lasted `notifyAfter` rounds (or failures) in a row.
// - A recovery notifies only if the failure was told.
//
// The decision reads only what it is given and the windows, so it survives restarts when the caller
// stores what was told (and the streak) with the state, in the transaction that writes the notice.
import { Cron } from "croner";
import type { Maintenance } from "../model/maintenance.ts";
import type { Store } from "../store/store.ts";

/** Where a watched thing stands, as its round sees it. */
export type Standing = {
  projectId: number;
  /** In trouble now: a rule firing, a check down. */
  failing: boolean;
  /** Rounds (or failures) in a row it has been failing, this one included; 0 when it is not failing. */
  streak: number;
  /** How many in a row a failure lasts before it notifies (1: at once). */
  notifyAfter: number;
  /** What its last notice told: that it was failing (true), or fine (false; also before any notice). */
  toldFailing: boolean;
  now: number;
};

/** Why a notice is not sent now: a maintenance window, a failure not yet `notifyAfter` long, or a recovery from a failure never told. */
export type Hush = "maintenance" | "notify_after" | "untold";

export type Decision = {
  /** Send a notice of where it stands now. */
  notify: boolean;
  /** What will have been told once this decision is carried out: store it with the state. */
  toldFailing: boolean;
  /** Why nothing is sent (null: nothing held back; a repeat of a told failure may go out). */
  quiet: Hush | null;
};

/** The decision for `s`, given its project's maintenance windows. */
export function decide(windows: Maintenance[], s: Standing): Decision {
  return decideIn(inAny(windows, s.now), s);
}

/** The decision for `s`, inside a maintenance window or not. */
function decideIn(maintenance: boolean, s: Standing): Decision {
  const hold = (quiet: Hush | null): Decision => ({ notify: false, toldFailing: s.toldFailing, quiet });
  if (!s.failing && !s.toldFailing) return hold("untold");
  if (s.failing && s.toldFailing) return hold(maintenance ? "maintenance" : null);
  if (maintenance) return hold("maintenance");
  if (s.failing && s.streak < s.notifyAfter) return hold("notify_after");
  return { notify: true, toldFailing: s.failing, quiet: null };
}

/** Whether `now` is inside any of the windows. */
export const inAny = (windows: Maintenance[], now: number): boolean => windows.some((w) => inWindow(w, now));

/** Whether `now` is inside the window: from its start (included) to its end (not). */
export function inWindow(w: Maintenance, now: number): boolean {
  const s = w.schedule;
  if (s.kind === "once") return s.startsAt <= now && now < s.endsAt;
  const next = cron(w)?.nextRun(new Date(now - s.length));
  return next !== null && next !== undefined && next.getTime() <= now;
}

/** The window's occurrence that holds `now`, or else its next one; null when none comes. */
export function occurrence(w: Maintenance, now: number): { start: number; end: number } | null {
  const s = w.schedule;
  if (s.kind === "once") return now < s.endsAt ? { start: s.startsAt, end: s.endsAt } : null;
  const next = cron(w)?.nextRun(new Date(now - s.length)) ?? null;
  return next ? { start: next.getTime(), end: next.getTime() + s.length } : null;
}

function cron(w: Maintenance): Cron | null {
  const s = w.schedule;
  if (s.kind !== "cron") return null;
  try {
    return new Cron(s.cron, { timezone: s.tz, paused: true });
  } catch {
    return null; // checked when made; a zone the system no longer knows holds nothing
  }
}

/**
 * Decisions for one round: each project's windows are read once (an index lookup) and looked at
 * once for each moment, however many of its things the round decides on. A new one per round, so
 * a window made meanwhile counts.
 */
export function quietRound(store: Pick<Store, "maintenance">): (s: Standing) => Promise<Decision> {
  const inside = new Map<string, Promise<boolean>>();
  return async (s) => {
    const key = `${s.projectId}@${s.now}`;
    let known = inside.get(key);
    if (!known) inside.set(key, (known = store.maintenance.list(s.projectId).then((w) => inAny(w, s.now))));
    return decideIn(await known, s);
  };
}
