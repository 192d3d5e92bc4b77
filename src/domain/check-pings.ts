// Pings: what a check's ping (Healthchecks' /ping/..., Uptime Kuma's /api/push/...) does. Each is
// one write: the check read locked, its new state, the ping as an event of the check's channel, and
// the notice when it went down or came back up (with notify unless quiet.ts holds it back), and what
// was told, in one transaction; so a ping retried, or two at once on two instances, notify once.
import { type Clock, systemClock } from "../clock.ts";
import { log } from "../logger.ts";
import type { Check, CheckChanges, CheckKey } from "../model/check.ts";
import type { StoredEvent, Tags } from "../model/event.ts";
import type { Maintenance } from "../model/maintenance.ts";
import type { Project } from "../model/project.ts";
import type { Announce } from "../live/hub.ts";
import type { Repositories, Store } from "../store/store.ts";
import { ALERTS_CHANNEL } from "./alert-runner.ts";
import { quietly } from "./alert-notices.ts";
import {
  type CheckChange,
  checkNotice,
  countFailure,
  decideCheck,
  revisitAt,
  standingChange,
} from "./check-notices.ts";
import { CREATED_BY_PING, createCheck, deadlineOf, MOST_CHECKS_BY_PING } from "./checks.ts";
import { ingestWrites } from "./ingest-writes.ts";
import type { Decision } from "./quiet.ts";

/** success (exit status 0 too), start, fail (a non-zero exit status too), log (state unchanged). */
export type PingKind = "success" | "start" | "fail" | "log";

export type Ping = {
  kind: PingKind;
  /** The exit status of /ping/<uuid>/<N>; null when the URL gave none. */
  exitStatus: number | null;
  /** ?rid=: pairs a start with its finish when runs overlap. */
  rid: string | null;
  /** The body (already cut to SIGNALBOARD_PING_BODY_LIMIT), the event's description. */
  body: string;
  /** More tags (Uptime Kuma's `ping`). */
  tags?: Tags;
};

/** Which check a ping URL names: by UUID, by push token, or by the project's ping key and a slug. */
export type PingTarget = CheckKey | { pingKey: string; slug: string; create: boolean };

export type PingOutcome = "ok" | "not found" | "not unique";

/** Open starts kept per check: enough for the runs that overlap, however many starts never finish. */
const RUNS_KEPT = 10;

/** What a ping does to a check: the changes to write, the run it closed, and a change of state that notifies. */
export function stepOf(
  c: Check,
  p: Ping,
  now: number,
): { changes: CheckChanges; durationMs: number | null; change: CheckChange | null } {
  if (c.paused || p.kind === "log") return { changes: {}, durationMs: null, change: null };
  const runs = { ...c.runs };
  const key = p.rid ?? "";
  if (p.kind === "start") {
    delete runs[key];
    runs[key] = now;
    const kept = Object.entries(runs)
      .sort((a, b) => b[1] - a[1])
      .slice(0, RUNS_KEPT);
    // A start while down keeps it down: only a success brings it back.
    const started = c.state !== "down";
    return {
      changes: {
        lastPing: now,
        lastStart: now,
        lastStartRid: p.rid,
        runs: Object.fromEntries(kept),
        ...(started && {
          state: "started" as const,
          since: c.state === "started" ? c.since : now,
          nextDue: now + c.grace * 1000,
        }),
      },
      durationMs: null,
      change: null,
    };
  }
  const opened = runs[key];
  delete runs[key];
  const durationMs = opened === undefined ? null : now - opened;
  const finished = { lastPing: now, runs, lastDurationMs: durationMs };
  if (p.kind === "fail")
    return {
      changes: {
        ...finished,
        state: "down",
        since: c.state === "down" ? c.since : now,
        nextDue: null,
        ...countFailure(c, now),
      },
      durationMs,
      change: c.state === "down" ? null : { to: "down", why: "failed", exitStatus: p.exitStatus },
    };
  return {
    changes: {
      ...finished,
      state: "up",
      since: c.state === "up" ? c.since : now,
      nextDue: deadlineOf(c.schedule, c.grace, now),
      streak: 0,
      counted: null,
    },
    durationMs,
    change: c.state === "down" ? { to: "up", why: "success" } : null,
  };
}

/** The event's name after the check's: "success", "start", "fail", "exit 3", "log". */
function labelOf(p: Ping): string {
  if (p.exitStatus !== null && p.exitStatus !== 0) return `exit ${p.exitStatus}`;
  return p.kind;
}

function tagsOf(c: Check, p: Ping, durationMs: number | null): Tags {
  return {
    check: c.slug,
    kind: p.exitStatus !== null && p.exitStatus !== 0 ? "exit" : p.kind,
    ...(p.exitStatus !== null && { "exit-status": p.exitStatus }),
    ...(p.rid !== null && { rid: p.rid }),
    ...(durationMs !== null && { duration: Math.round(durationMs) / 1000 }),
    ...p.tags,
  };
}

type Written = { events: StoredEvent[]; channels: { project: Project; channel: string }[] };

/**
 * Writes `change`'s notice in the project's alerts channel, in the transaction `tx` that records
 * the check's new state: with notify when `decision` says so, else recorded quietly (tagged why).
 */
export async function writeNotice(
  tx: Repositories,
  project: Project,
  c: Check,
  change: CheckChange,
  decision: Decision,
  { baseUrl, now }: { baseUrl: string; now: number },
  written: Written,
): Promise<void> {
  const told = checkNotice(c, change, now);
  const n = decision.notify ? { ...told, notify: true } : quietly(told, decision.quiet);
  const { written: w, newChannel } = await ingestWrites.logEvent(tx, {
    input: { project: project.name, channel: ALERTS_CHANNEL, ...n },
    baseUrl,
    now,
  });
  written.events.push(w.result!);
  if (newChannel) written.channels.push({ project, channel: ALERTS_CHANNEL });
}

/**
 * What was written, told to live views after the commit; each notice (a change of a check's state,
 * told or held) is also a log line, whether a ping or the round wrote it.
 */
export function announceWritten(announce: Announce, written: Written): void {
  for (const { project, channel } of written.channels)
    announce({ type: "channel", projectId: project.id, project: project.name, channel });
  for (const event of written.events) {
    announce({ type: "event", event });
    if (event.channel === ALERTS_CHANNEL && event.tags?.check !== undefined) logNotice(event);
  }
}

/** A check's notice as a log line, as an alert rule's is: the project, the check, where it went and why, and what held it back. */
function logNotice(event: StoredEvent): void {
  const tags = event.tags ?? {};
  log.info("check", {
    project: event.project,
    check: tags.check,
    name: event.name,
    state: tags.state ?? null,
    why: tags.why ?? null,
    ...(event.notify ? {} : { quiet: tags.quiet ?? null }),
  });
}

export function pingService(
  store: Store,
  announce: Announce,
  { baseUrl, clock = systemClock }: { baseUrl: string; clock?: Clock },
) {
  /** The check a target names, locked; made when a slug URL says ?create=1 and there is none. */
  async function locate(tx: Repositories, target: PingTarget, now: number): Promise<Check[]> {
    if (!("pingKey" in target)) return tx.checks.findBy(target, { lock: true });
    const projectId = await tx.checks.projectOfPingKey(target.pingKey);
    if (projectId === null) return [];
    const key = { projectId, slug: target.slug };
    const found = await tx.checks.findBy(key, { lock: true });
    if (found.length || !target.create) return found;
    // Two first pings at once (two instances): the second, once the first committed, finds its check.
    await tx.checks.lockNames();
    const made = await tx.checks.findBy(key, { lock: true });
    if (made.length) return made;
    const project = await tx.projects.findById(projectId);
    if (!project || (await tx.checks.count(projectId)) >= MOST_CHECKS_BY_PING) return [];
    await createCheck(tx, project, { name: target.slug, slug: target.slug, ...CREATED_BY_PING }, now);
    return tx.checks.findBy(key, { lock: true });
  }

  return {
    async ping(target: PingTarget, p: Ping, now = clock.now()): Promise<PingOutcome> {
      const written: Written = { events: [], channels: [] };
      const outcome = await store.tx(async (tx): Promise<PingOutcome> => {
        written.events = [];
        written.channels = [];
        const found = await locate(tx, target, now);
        if (found.length === 0) return "not found";
        if (found.length > 1) return "not unique";
        const c = found[0]!;
        const project = await tx.projects.findById(c.projectId);
        if (!project) return "not found";
        const { changes, durationMs, change } = stepOf(c, p, now);
        let decision: Decision | null = null;
        if (Object.keys(changes).length) {
          const after = { ...c, ...changes };
          let windows: Maintenance[] = [];
          decision = await decideCheck(after, now, async () => (windows = await tx.maintenance.list(c.projectId)));
          changes.notified = decision.toldFailing ? "down" : "up";
          changes.nextDue = revisitAt(after, after.state === "down" ? null : after.nextDue, decision, windows, now);
          await tx.checks.update(c.id, changes, now);
        }
        const { written: w, newChannel } = await ingestWrites.logEvent(tx, {
          input: {
            project: project.name,
            channel: c.channel,
            event: `${c.name}: ${labelOf(p)}`,
            ...(p.body && { description: p.body }),
            tags: tagsOf(c, p, durationMs),
          },
          baseUrl,
          now,
        });
        written.events.push(w.result!);
        if (newChannel) written.channels.push({ project, channel: c.channel });
        if (decision && (change || decision.notify)) {
          const told = change ?? standingChange({ ...c, ...changes }, p.kind === "fail" ? p : null);
          await writeNotice(tx, project, c, told, decision, { baseUrl, now }, written);
        }
        return "ok";
      });
      announceWritten(announce, written);
      return outcome;
    },
  };
}

export type PingService = ReturnType<typeof pingService>;
