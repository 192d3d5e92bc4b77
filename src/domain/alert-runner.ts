// The alert runner: every SIGNALBOARD_ALERT_INTERVAL it checks each rule that is not paused (on one
// instance at a time when several share PostgreSQL), and records each change of a rule's state as
// an event in its project's `alerts` channel, in the transaction that writes the rule's new state:
// with notify unless quiet.ts holds it back (a maintenance window, notify_after not reached, a
// recovery from a firing never told), then later a notice of its own when it is due. A notice goes
// through the delivery queue, appears live, and happens once, whoever sees the change first and
// whatever stops in the middle.
//
// What it reads: for absence rules, when the latest matching event happened, which it learns from
// the live hub as events are stored (a database read only when it does not know yet: at start, or
// for a new rule); for count rules, the matching events of the window, an index range read on the
// read path; for metric rules, the metric's value. A matching event settles a firing absence rule
// at once, without waiting for the next round.
import { type Clock, systemClock, type Timer } from "../clock.ts";
import { log } from "../logger.ts";
import type { Alert, AlertFilter, AlertMark, AlertTransition } from "../model/alert.ts";
import type { StoredEvent } from "../model/event.ts";
import type { EventFilter } from "../model/filter.ts";
import type { Announce, Hub } from "../live/hub.ts";
import type { Store, WindowQuestion } from "../store/store.ts";
import { kindOf } from "./alert-kinds/index.ts";
import type { Finding, Reads } from "./alert-kinds/kind.ts";
import { type Notice, notice, quietly, testNotice } from "./alert-notices.ts";
import { eventMatcher } from "./filter.ts";
import { ingestWrites } from "./ingest-writes.ts";
import { type Decision, quietRound, type Standing } from "./quiet.ts";

export { deadline } from "./alert-kinds/absence.ts";

/** The channel where a project's alerts are recorded. */
export const ALERTS_CHANNEL = "alerts";

/**
 * `clock`: the time rounds see, and what runs them every `intervalMs` (the system's unless given).
 * `alsoEachRound`: what else is watched on the rules' round, on the same turn (the checks' silence).
 */
export type RunnerOptions = {
  intervalMs: number;
  baseUrl: string;
  clock?: Clock;
  alsoEachRound?: (now: number) => Promise<unknown>;
};

/**
 * The events that absence rules with one filter watch: when the latest happened (undefined until
 * the database was asked; meanwhile `early` keeps the latest one the hub brought, which that read
 * may have missed), and the rules that watch them. Rules with the same filter share one: an event
 * is matched once per filter, however many rules watch it.
 */
type Watched = {
  filter: EventFilter & { projectId: number };
  matches: (e: StoredEvent) => boolean;
  lastSeen: number | null | undefined;
  early: number | null;
  rules: Map<number, Alert>;
};

/** Questions asked of the read path in one read, at most: a round of many rules makes few reads. */
const BATCH = 100;

/** What a round read for its rules: count rules' counts, by rule. */
type Prefetched = Map<number, number>;

/** Thrown in a transition's transaction when another writer changed the rule first: nothing is written. */
class Raced extends Error {}

export function watchedFilter(projectId: number, f: AlertFilter): EventFilter & { projectId: number } {
  return {
    projectId,
    channel: f.channel,
    event: f.event,
    tags: Object.entries(f.tags ?? {}).map(([k, v]) => [k, String(v)] as [string, string]),
  };
}

export class AlertRunner {
  /** What absence rules watch, by filter; and each rule's filter. */
  private readonly watched = new Map<string, Watched>();
  private readonly filterOf = new Map<number, string>();
  /** Filters by project, channel and name (empty for "any"): an event looks at four lists, not at every rule. */
  private readonly byKey = new Map<string, Set<string>>();
  private readonly clock: Clock;
  private startedAt = 0;
  private timer: Timer | null = null;
  private unsubscribe: (() => void) | null = null;
  private running: Promise<unknown> | null = null;
  private settling = new Set<number>();
  /** For the benchmark and /metrics: rounds run, and how long the last one took. */
  readonly stats = { rounds: 0, lastRoundMs: 0, rules: 0 };

  constructor(
    private readonly store: Store,
    private readonly hub: Hub,
    private readonly announce: Announce,
    private readonly options: RunnerOptions,
  ) {
    this.clock = options.clock ?? systemClock;
  }

  private now(): number {
    return this.clock.now();
  }

  /** Starts watching: silence before now was not watched, so absence rules count from here at the earliest. */
  start(): void {
    this.startedAt = this.now();
    this.unsubscribe = this.hub.subscribe((message) => {
      if (message.type === "event") this.seen(message.event);
    });
    this.timer = this.clock.every(this.options.intervalMs, () => this.tick(), { background: true });
  }

  async stop(): Promise<void> {
    this.timer?.cancel();
    this.unsubscribe?.();
    await this.running?.catch(() => {});
  }

  private tick(): Promise<unknown> {
    this.running ??= this.round()
      .catch((error) =>
        log.warn("checking alert rules failed; the next round tries again", { error: (error as Error).message }),
      )
      .finally(() => (this.running = null));
    return this.running;
  }

  /** Checks every rule that is not paused, as at `now` (the leader's job when instances share a database). */
  async round(now = this.now()): Promise<{ checked: number; changed: number }> {
    let result = { checked: 0, changed: 0 };
    const work = async () => {
      const started = performance.now();
      const rules = await this.store.alerts.active();
      this.refresh(rules);
      const counts = await this.countWindows(
        rules.filter((r) => kindOf(r).window),
        now,
      );
      await this.learnLatest(
        rules.filter((r) => kindOf(r).watches),
        now,
      );
      const quiet = quietRound(this.store);
      for (const alert of rules) if (await this.check(alert, now, counts, quiet)) result.changed++;
      if (rules.length)
        await this.store.alerts.checked(
          rules.map((r) => r.id),
          now,
        );
      await this.options.alsoEachRound?.(now);
      result = { ...result, checked: rules.length };
      this.stats.rounds++;
      this.stats.lastRoundMs = performance.now() - started;
      this.stats.rules = rules.length;
    };
    if (this.store.shared) await this.store.shared.asLeader("alerts", work);
    else await work();
    return result;
  }

  /** Sends a rule's notice now, whatever its state (the dashboard's and the CLI's "test"). */
  async test(alert: Alert, now = this.now()): Promise<StoredEvent> {
    return (await this.record(alert, testNotice(alert), null, now))!;
  }

  /** The rules to watch, as the database has them now: a rule changed since is watched afresh. */
  private refresh(rules: Alert[]): void {
    const keep = new Set(rules.map((r) => r.id));
    for (const id of [...this.filterOf.keys()]) if (!keep.has(id)) this.unwatch(id);
    for (const alert of rules) {
      const key = this.filterOf.get(alert.id);
      const known = key === undefined ? undefined : this.watched.get(key)!.rules.get(alert.id);
      if (known && known.updatedAt === alert.updatedAt) {
        this.watched.get(key!)!.rules.set(alert.id, alert); // its state and times
        continue;
      }
      this.unwatch(alert.id);
      if (kindOf(alert).watches) this.watch(alert);
    }
  }

  private watch(alert: Alert): void {
    const filter = watchedFilter(alert.projectId, alert.filter);
    const key = JSON.stringify([
      filter.projectId,
      filter.channel ?? null,
      filter.event ?? null,
      [...filter.tags!].sort(),
    ]);
    let w = this.watched.get(key);
    if (!w) {
      this.watched.set(
        key,
        (w = { filter, matches: eventMatcher(filter), lastSeen: undefined, early: null, rules: new Map() }),
      );
      const index = keyOf(alert.projectId, alert.filter.channel, alert.filter.event);
      (this.byKey.get(index) ?? this.byKey.set(index, new Set()).get(index)!).add(key);
    }
    w.rules.set(alert.id, alert);
    this.filterOf.set(alert.id, key);
  }

  private unwatch(id: number): void {
    const key = this.filterOf.get(id);
    if (key === undefined) return;
    this.filterOf.delete(id);
    const w = this.watched.get(key)!;
    w.rules.delete(id);
    if (w.rules.size) return;
    this.watched.delete(key);
    this.byKey.get(keyOf(w.filter.projectId, w.filter.channel, w.filter.event))?.delete(key);
  }

  /** An event was stored: the filters it matches have seen one; their firing rules are settled at once. */
  private seen(e: StoredEvent): void {
    if (!this.watched.size || e.channel === ALERTS_CHANNEL) return;
    for (const index of [
      keyOf(e.projectId, e.channel, e.name),
      keyOf(e.projectId, e.channel),
      keyOf(e.projectId, undefined, e.name),
      keyOf(e.projectId),
    ]) {
      for (const key of this.byKey.get(index) ?? []) {
        const w = this.watched.get(key)!;
        if (!w.matches(e)) continue;
        if (w.lastSeen === undefined) w.early = Math.max(w.early ?? -Infinity, e.ts);
        else w.lastSeen = Math.max(w.lastSeen ?? -Infinity, e.ts);
        for (const [id, alert] of w.rules) if (alert.state === "firing") this.settle(id);
      }
    }
  }

  private settle(id: number): void {
    if (this.settling.has(id)) return;
    this.settling.add(id);
    setTimeout(async () => {
      this.settling.delete(id);
      const work = async () => {
        const alert = await this.store.alerts.find(id);
        if (alert && !alert.paused) await this.check(alert, this.now());
      };
      try {
        if (this.store.shared) await this.store.shared.asLeader("alerts", work);
        else await work();
      } catch (error) {
        log.warn("settling an alert rule failed; the next round does it", { id, error: (error as Error).message });
      }
    }, 0);
  }

  /** The count rules' windows, counted in reads of a hundred questions, each question asked once however many rules ask it. */
  private async countWindows(rules: Alert[], now: number): Promise<Prefetched> {
    const questions = new Map<string, WindowQuestion>();
    const keys = new Map<number, string>();
    for (const r of rules) {
      const question = this.windowOf(r, now);
      if (!question) continue;
      const key = JSON.stringify([r.projectId, question.filter, question.from]);
      keys.set(r.id, key);
      questions.set(key, question);
    }
    const asked = [...questions.keys()];
    const answers = new Map<string, number>();
    for (let i = 0; i < asked.length; i += BATCH) {
      const batch = asked.slice(i, i + BATCH);
      const counted = await this.store.alerts.counts(batch.map((k) => questions.get(k)!));
      batch.forEach((k, j) => answers.set(k, counted[j]!));
    }
    return new Map([...keys].map(([id, key]) => [id, answers.get(key)!]));
  }

  /** The window a rule counts at `now`, if its kind counts one. */
  private windowOf(r: Alert, now: number): WindowQuestion | null {
    const window = kindOf(r).window?.(r);
    if (window === undefined) return null;
    return { filter: watchedFilter(r.projectId, r.filter), from: now - window, to: now };
  }

  /** When each absence rule's latest event happened, for the rules not known yet (after a start, a new rule), in reads of a hundred. */
  private async learnLatest(rules: Alert[], now: number): Promise<void> {
    const unknown = [...new Set(rules.map((r) => this.watchedOf(r.id)))].filter(
      (w): w is Watched => w !== undefined && w.lastSeen === undefined,
    );
    for (let i = 0; i < unknown.length; i += BATCH) {
      const batch = unknown.slice(i, i + BATCH);
      const found = await this.store.alerts.latest(
        batch.map((w) => w.filter),
        now,
      );
      batch.forEach((w, j) => this.learnt(w, found[j] ?? null));
    }
  }

  /** What the database said of a rule's latest event, with what the hub brought meanwhile. */
  private learnt(w: Watched, found: number | null): void {
    if (w.lastSeen !== undefined) return;
    const latest = Math.max(found ?? -Infinity, w.early ?? -Infinity);
    w.lastSeen = latest === -Infinity ? null : latest;
  }

  /**
   * Checks one rule; true when a notice was recorded (a change of state, a notice held back until
   * now, or a repeat). Whether it notifies is quiet.ts's decision; the streak and what was told are
   * written with the state, so the decision holds across restarts and instances.
   */
  private async check(
    alert: Alert,
    now: number,
    counts: Prefetched = new Map(),
    quiet: (s: Standing) => Promise<Decision> = quietRound(this.store),
  ): Promise<boolean> {
    const finding = await this.find(alert, now, counts);
    if (!finding) return false;
    const { firing } = finding;
    const changed = firing !== (alert.state === "firing");
    const streak = firing ? Math.min((changed ? 0 : alert.streak) + 1, alert.notifyAfter) : 0;
    const decision = await quiet({
      projectId: alert.projectId,
      failing: firing,
      streak,
      notifyAfter: alert.notifyAfter,
      toldFailing: alert.notified === "firing",
      now,
    });
    const from: AlertMark = {
      state: alert.state,
      since: alert.since,
      lastNotified: alert.lastNotified,
      streak: alert.streak,
      notified: alert.notified,
    };
    const to: AlertMark = {
      state: firing ? "firing" : "ok",
      since: changed ? now : alert.since,
      lastNotified: decision.notify ? now : alert.lastNotified,
      streak,
      notified: decision.toldFailing ? "firing" : "ok",
    };
    const transition = { id: alert.id, from, to };
    if (changed || decision.notify) {
      const n = notice(alert, firing ? "firing" : "resolved", finding.facts, now);
      return (await this.record(alert, decision.notify ? n : quietly(n, decision.quiet), transition, now)) !== null;
    }
    if (streak !== alert.streak) {
      // Counting towards notify_after: nothing to record but the count.
      if (await this.store.alerts.transition(transition, now)) alert.streak = streak;
      return false;
    }
    const repeatDue =
      firing &&
      alert.notified === "firing" &&
      decision.quiet === null &&
      alert.repeat !== null &&
      now - (alert.lastNotified ?? alert.since) >= alert.repeat;
    if (!repeatDue) return false;
    return (
      (await this.record(
        alert,
        notice(alert, "repeat", finding.facts, now),
        { id: alert.id, from, to: { ...from, lastNotified: now } },
        now,
      )) !== null
    );
  }

  /** What the rule sees at `now`; null when it cannot tell (a metric that holds no number). */
  private find(alert: Alert, now: number, counts: Prefetched): Promise<Finding | null> {
    const filter = watchedFilter(alert.projectId, alert.filter);
    const reads: Reads = {
      now,
      startedAt: this.startedAt,
      count: async () => counts.get(alert.id) ?? (await this.store.alerts.counts([this.windowOf(alert, now)!]))[0]!,
      latest: async () => (await this.store.alerts.latest([filter], now))[0] ?? null,
      lastSeen: () => this.lastSeen(alert, filter, now),
      metric: (title) => this.store.metrics.find(alert.projectId, title),
    };
    return kindOf(alert).find(alert, reads);
  }

  private watchedOf(id: number): Watched | undefined {
    const key = this.filterOf.get(id);
    return key === undefined ? undefined : this.watched.get(key);
  }

  private async lastSeen(
    alert: Alert,
    filter: EventFilter & { projectId: number },
    now: number,
  ): Promise<number | null> {
    const w = this.watchedOf(alert.id);
    if (w && w.lastSeen !== undefined) return w.lastSeen;
    const found = (await this.store.alerts.latest([filter], now))[0] ?? null;
    if (!w) return found;
    this.learnt(w, found);
    return w.lastSeen!;
  }

  /**
   * Writes the notice as an event of the alerts channel (notify: queued for delivery with it), and,
   * with `transition`, the rule's new state, in one transaction: both or neither. Another writer
   * having changed the rule first, nothing is written (null).
   */
  private async record(
    alert: Alert,
    n: Notice,
    transition: AlertTransition | null,
    now: number,
  ): Promise<StoredEvent | null> {
    const project = await this.store.projects.findById(alert.projectId);
    if (!project) return null; // deleted meanwhile, with its rules
    let result: { event: StoredEvent; newChannel: boolean };
    try {
      result = await this.store.tx(async (tx) => {
        if (transition && !(await tx.alerts.transition(transition, now))) throw new Raced();
        // The notice is written when it is written (a round asked about another moment, as tests do, included).
        const { written, newChannel } = await ingestWrites.logEvent(tx, {
          input: { project: project.name, channel: ALERTS_CHANNEL, notify: true, ...n },
          baseUrl: this.options.baseUrl,
          now: this.now(),
        });
        return { event: written.result!, newChannel };
      });
    } catch (error) {
      if (error instanceof Raced) return null;
      throw error;
    }
    if (transition) {
      Object.assign(alert, transition.to);
      const watched = this.watchedOf(alert.id)?.rules.get(alert.id);
      if (watched) Object.assign(watched, transition.to);
    }
    if (result.newChannel)
      this.announce({ type: "channel", projectId: project.id, project: project.name, channel: ALERTS_CHANNEL });
    this.announce({ type: "event", event: result.event });
    log.info("alert", {
      rule: alert.id,
      project: project.name,
      name: alert.name,
      state: n.tags.state,
      ...(n.notify === false ? { quiet: n.tags.quiet } : {}),
    });
    return result.event;
  }
}

function keyOf(projectId: number, channel?: string, event?: string): string {
  return `${projectId}\u0000${channel ?? ""}\u0000${event ?? ""}`;
}
