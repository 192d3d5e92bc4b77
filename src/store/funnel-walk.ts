// Funnels, the same for both stores: each user's events of the steps walked in time order
// (chains), read backwards from the latest in spans of time that double, until every user's
// latest chain that reaches the last step lies in what was read. Such a chain, and each step's
// chain with the latest start, start at or after the span read: nothing before it can change
// them. A user with no event of the first step's name before the span (the summaries' activity
// rows tell, a day at a time) is settled too: every chain of theirs starts in what was read. Once
// every user who did the first step before the span is settled, the rest of the range is not read.
// So a funnel reads the recent events of users who convert often, not the whole range, and its
// cost follows how far back its users' last conversions lie, not the history's size. The rest of
// the range, when it must be read, comes user by user (memory for one user's events, not the range's).
import type { FunnelCounts, FunnelQuery } from "../model/analytics.ts";
import { ACTIVITY, HOUR, monthStart, place, VALUES } from "./summary/deltas.ts";
import type { Span, SummaryReads } from "./summary/reads.ts";

/** An event of one of the steps: which ones it matches are the bits of `m` (step j, from 0: bit j). */
export type StepEvent = { ts: number; id: number; m: number };

/** An event that reached a step: the latest start (step 1's time) of a chain that reaches it there, and when that chain did the step before. */
type Reached = StepEvent & { s: number; p: number };

/** What a store reads for a funnel. */
export interface FunnelReads {
  /** When the latest event of one of the steps happened before `before` (null when none did). */
  latest(q: FunnelQuery, before: number): Promise<number | null>;
  /**
   * Each user's events of the steps with lo <= time < hi, oldest first, but those of users in
   * `skip`; only those of `only`'s users when it is given (read user by user).
   */
  stepEvents(
    q: FunnelQuery,
    lo: number,
    hi: number,
    skip: Set<string>,
    only: string[] | undefined,
    each: (user: string, events: StepEvent[]) => void,
  ): Promise<void>;
  /** The same, user after user (each user's events handed at once, one user held at a time). */
  userEvents(
    q: FunnelQuery,
    lo: number,
    hi: number,
    skip: Set<string>,
    each: (user: string, events: StepEvent[]) => void,
  ): Promise<void>;
  /** The summaries, which tell who did the first step before a span (without them, the range is read to its start). */
  summaries?: SummaryReads;
}

/** Events held for users not settled yet past which the rest of the range is read user by user. */
const MAX_HELD = 1_000_000;

/** The first span read back from the latest event holds about this many events of the steps (at least a day); each next one doubles. */
const FIRST_EVENTS = 400_000;
const DAY = 86_400_000;

export async function funnelCounts(q: FunnelQuery, reads: FunnelReads): Promise<FunnelCounts> {
  const last = q.steps.length - 1;
  const users = new Array<number>(q.steps.length).fill(0);
  const deltas = q.steps.map(() => [] as number[]);
  const count = (levels: Reached[][]) =>
    levels.forEach((level, j) => {
      users[j]!++;
      if (j > 0) {
        const best = latest(level);
        deltas[j]!.push(best.ts - best.p);
      }
    });
  const newest = await reads.latest(q, q.to + q.window);
  if (newest === null || newest < q.from) return users.map((n) => ({ users: n, medianMs: null }));
  /** Users still walked: their events read so far, oldest first. */
  const open = new Map<string, StepEvent[]>();
  const done = new Set<string>();
  let held = 0;
  const settle = (user: string, levels: Reached[][]) => {
    count(levels);
    held -= open.get(user)?.length ?? 0;
    open.delete(user);
    done.add(user);
  };
  // When each user first did the first step in the range, to the day (null: the summaries cannot tell).
  const firstDays = q.raw || !reads.summaries ? null : await firstStepDays(reads.summaries, q);
  const lastBit = 1 << last;
  let hi = newest + 1;
  // `raw`: the whole range at once, what the walk backwards is held equal to.
  let span = q.raw ? Number.POSITIVE_INFINITY : await firstSpan(reads.summaries, q, hi);
  /** The users left, once they are few beside those settled: read one by one, not in the span's events. */
  let few: string[] | undefined;
  while (hi > q.from) {
    // A span past half of what is left reads all of it: the next would reach the start anyway.
    const lo = hi - 2 * span <= q.from ? q.from : hi - span;
    if (lo === q.from && !few) {
      // The rest of the range, user by user, with what was read of each already.
      await reads.userEvents(q, q.from, hi, done, (user, events) => {
        const known = open.get(user);
        settle(user, chains(known ? events.concat(known) : events, q));
      });
      for (const [user, events] of open) settle(user, chains(events, q));
      break;
    }
    const touched = new Set<string>();
    await reads.stepEvents(q, lo, hi, done, few, (user, events) => {
      const known = open.get(user);
      open.set(user, known ? events.concat(known) : events);
      held += events.length;
      touched.add(user);
    });
    /** Whether a user did the first step before `lo` (always, when the summaries cannot tell). */
    const older = (user: string) => lo > q.from && (!firstDays || (firstDays.get(user) ?? Infinity) < lo);
    for (const user of touched) {
      const events = open.get(user)!;
      if (older(user) && !events.some((e) => e.m & lastBit)) continue;
      const levels = chains(events, q);
      if (levels.length - 1 === last || !older(user)) settle(user, levels);
    }
    if (firstDays) {
      for (const [user, events] of open) if (!older(user)) settle(user, chains(events, q));
      // Who did the first step before `lo` and is not settled: once none, nothing before `lo` counts.
      const left: string[] = [];
      for (const [user, day] of firstDays) if (day < lo && !done.has(user)) left.push(user);
      if (!left.length) break;
      if (left.length * 4 <= done.size) few = left;
    }
    hi = lo;
    span = held > MAX_HELD ? Number.POSITIVE_INFINITY : span * 2;
  }
  return users.map((n, j) => ({ users: n, medianMs: j > 0 ? median(deltas[j]!) : null }));
}

/**
 * The first span to read back from `hi`: whole days, as many as hold about FIRST_EVENTS events of
 * the steps' names by the hourly counts (so a round reads what it can hold, in a busy project or a
 * quiet one); a day without them.
 */
export async function firstSpan(reads: SummaryReads | undefined, q: FunnelQuery, hi: number): Promise<number> {
  if (!reads || !(await reads.ready(q.projectId)) || (await reads.wide(q.projectId, VALUES.event, ""))) return DAY;
  const names = new Set(q.steps.map((s) => s.event));
  const days = Math.ceil((hi - q.from) / DAY);
  const end = Math.ceil(hi / HOUR);
  const spans: Span[] = Array.from({ length: days }, (_, d) => [end - (d + 1) * 24, end - d * 24]);
  const counts = await reads.counts({ projectId: q.projectId, by: "event" }, spans);
  let events = 0;
  for (let d = 0; d < days; d++) {
    for (const [name, n] of counts[d]!) if (names.has(name as string)) events += n;
    if (events >= (q.spanEvents ?? FIRST_EVENTS)) return (d + 1) * DAY;
  }
  return days * DAY;
}

/**
 * When each user who may have done the funnel's first step in its range first did so: the start of
 * the first UTC day of the range with an event of its name, from the activity rows (its channel and
 * tags are not asked: more users, never fewer). Null while the summaries cannot tell.
 */
export async function firstStepDays(reads: SummaryReads, q: FunnelQuery): Promise<Map<string, number> | null> {
  if (!(await reads.ready(q.projectId)) || (await reads.wide(q.projectId, VALUES.event, ""))) return null;
  const first = place(q.from);
  const end = place(q.to - 1);
  const found = new Map<string, number>();
  const ask = { projectId: q.projectId, kind: ACTIVITY.event, key: "", value: q.steps[0]!.event };
  await reads.activity({ ...ask, months: [first.month, end.month], columns: [] }, (rows) => {
    for (const [, month, user, days] of rows) {
      let mask = days;
      if (month === first.month) mask &= ~((1 << first.day) - 1);
      if (month === end.month) mask &= end.day >= 30 ? 0x7fffffff : (1 << (end.day + 1)) - 1;
      if (!mask) continue;
      const day = monthStart(month) + (31 - Math.clz32(mask & -mask)) * DAY;
      const known = found.get(user);
      if (known === undefined || day < known) found.set(user, day);
    }
  });
  return found;
}

/**
 * A user's chains, step by step: the events that reach each step (an empty step ends the list).
 * A step's event takes the latest start among the events of the step before that come before it
 * (the later the start, the more of the window is left), if it is within the window of it. At equal
 * times an event of only the earlier step comes first, one of only the later step last, and one
 * of both steps in stored order, so one event never counts for two steps of a chain.
 */
export function chains(events: StepEvent[], q: Pick<FunnelQuery, "steps" | "from" | "to" | "window">): Reached[][] {
  const first = events.filter((e) => e.m & 1 && e.ts >= q.from && e.ts < q.to).map((e) => ({ ...e, s: e.ts, p: e.ts }));
  const levels: Reached[][] = first.length ? [first] : [];
  for (let j = 1; j < q.steps.length && levels.length === j; j++) {
    const bit = 1 << j;
    const before = 1 << (j - 1);
    const rows = [
      ...levels[j - 1]!.map((e) => ({ e, next: false, g: e.m & bit ? 1 : 0, tie: e.m & bit ? e.id : 0, sub: 1 })),
      ...events
        .filter((e) => e.m & bit)
        .map((e) => ({ e, next: true, g: e.m & before ? 1 : 2, tie: e.m & before ? e.id : 0, sub: 0 })),
    ].sort((a, b) => a.e.ts - b.e.ts || a.g - b.g || a.tie - b.tie || a.sub - b.sub);
    let start = Number.NEGATIVE_INFINITY;
    let previous = 0;
    const reached: Reached[] = [];
    for (const { e, next } of rows) {
      if (!next) {
        const s = (e as Reached).s;
        if (s > start) [start, previous] = [s, e.ts];
      } else if (e.ts - start <= q.window) reached.push({ ...e, s: start, p: previous });
    }
    if (reached.length) levels.push(reached);
  }
  return levels;
}

/** The chain that reached a step with the latest start, at its earliest event there. */
function latest(level: Reached[]): Reached {
  return level.reduce((best, r) => (r.s > best.s || (r.s === best.s && r.ts < best.ts) ? r : best));
}

export function median(values: number[]): number | null {
  if (!values.length) return null;
  values.sort((a, b) => a - b);
  const mid = values.length >> 1;
  return values.length % 2 ? values[mid]! : (values[mid - 1]! + values[mid]!) / 2;
}
