// Silence: on each round of the alert runner (SIGNALBOARD_ALERT_INTERVAL, on one instance at a time
// when several share PostgreSQL), the checks whose next_due has passed go down: no success within
// their period (or by their next scheduled time) plus grace, or a start with no finish within grace.
// They are read from the next_due index a batch at a time, and each is changed only if it still is
// where the round saw it (a ping may have come meanwhile), with its notice in the same transaction.
// Quiet (quiet.ts) decides whether the notice notifies; a notice held back by a maintenance window
// brings the check back on the round at the window's end, and a down not yet told (notify_after)
// at each further deadline it misses, each one more failure in a row.
import type { Announce } from "../live/hub.ts";
import type { Check } from "../model/check.ts";
import type { Project } from "../model/project.ts";
import type { Store } from "../store/store.ts";
import type { Maintenance } from "../model/maintenance.ts";
import {
  type CheckChange,
  countFailure,
  decideCheck,
  dueAt,
  nextFailureAt,
  revisitAt,
  standingChange,
} from "./check-notices.ts";
import type { Decision } from "./quiet.ts";
import { announceWritten, writeNotice } from "./check-pings.ts";

/**
 * Checks read and changed in one transaction; a round takes as many batches as are due. Small: on
 * SQLite a transaction's body holds the event loop, and a check's change with its notice (an event
 * with notify, queued for delivery) costs most of a millisecond on a busy 2-core machine.
 */
const BATCH = 10;
/** A round stops after this many batches (the next round goes on): a round has an end, whatever is due. */
const MAX_BATCHES = 1000;

export function checkRunner(store: Store, announce: Announce, { baseUrl }: { baseUrl: string }) {
  /** Down, for a check due at `now`: why it is. */
  const changeOf = (c: Check): CheckChange => ({ to: "down", why: c.state === "started" ? "unfinished" : "silent" });

  /** When silence makes `c` down, or (down already) counts one more failure. */
  const silentAt = (c: Check, now: number): number | null => (c.state === "down" ? nextFailureAt(c, now) : dueAt(c));

  /**
   * What the round does to a due check: down by silence (or one more failure counted while down),
   * or only a notice held back that may go out now (a window ended); what quiet.ts decides, and when
   * to look again.
   */
  function stepOf(c: Check, now: number, windows: Maintenance[], decision: Decision) {
    const after = { ...c, notified: decision.toldFailing ? ("down" as const) : ("up" as const) };
    const due = after.state === "down" ? null : silentAt(after, now);
    return { ...after, nextDue: revisitAt(after, due, decision, windows, now) };
  }

  async function downBatch(due: Check[], now: number): Promise<number> {
    const written = { events: [], channels: [] } as Parameters<typeof announceWritten>[1];
    const projects = new Map<number, Project | null>();
    const windows = new Map<number, Maintenance[]>();
    for (const c of due)
      if (!projects.has(c.projectId)) {
        projects.set(c.projectId, await store.projects.findById(c.projectId));
        windows.set(c.projectId, await store.maintenance.list(c.projectId));
      }
    const changed = await store.tx(async (tx) => {
      written.events = [];
      written.channels = [];
      let n = 0;
      for (const c of due) {
        const project = projects.get(c.projectId);
        if (!project || c.paused || (c.state !== "up" && c.state !== "started" && c.state !== "down")) continue;
        const ws = windows.get(c.projectId) ?? [];
        const at = silentAt(c, now);
        const missed = at !== null && at <= now;
        const counted: Check = missed
          ? { ...c, state: "down", since: c.state === "down" ? c.since : now, ...countFailure(c, now) }
          : c;
        const decision = await decideCheck(counted, now, async () => ws);
        const after = stepOf(counted, now, ws, decision);
        const mark = { state: c.state, nextDue: c.nextDue, streak: c.streak, notified: c.notified };
        const changes = {
          state: after.state,
          since: after.since,
          streak: after.streak,
          counted: after.counted,
          notified: after.notified,
          nextDue: after.nextDue,
        };
        if (!(await tx.checks.transition(c.id, mark, changes, now))) continue;
        const change = missed && c.state !== "down" ? changeOf(c) : null;
        if (change || decision.notify)
          await writeNotice(tx, project, c, change ?? standingChange(after), decision, { baseUrl, now }, written);
        n++;
      }
      return n;
    });
    announceWritten(announce, written);
    return changed;
  }

  /** For /metrics: checks this instance's rounds changed since start, and in its last round. */
  const stats = { changed: 0, lastChanged: 0 };

  return {
    stats,
    /** Every check due by `now` goes down, once; how many did. Call it on the alert runner's turn. */
    async round(now: number): Promise<number> {
      let changed = 0;
      for (let i = 0; i < MAX_BATCHES; i++) {
        const due = await store.checks.due(now, BATCH);
        if (!due.length) break;
        const n = await downBatch(due, now);
        changed += n;
        // Nothing of a batch could change (each changed meanwhile, or cannot be down): the rest waits for the next round.
        if (n === 0) break;
      }
      stats.changed += changed;
      stats.lastChanged = changed;
      return changed;
    },
  };
}

export type CheckRunner = ReturnType<typeof checkRunner>;
