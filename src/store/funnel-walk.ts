// Funnels, the same for both stores: each user's events of the steps walked in time order
// (chains), read backwards from the latest in spans of time that double, until every user's
// latest chain that reaches the last step lies in what was read. Such a chain, and each step's
// chain with the latest start, start at or after the span read: nothing before it can change
// them. So a funnel reads the recent events of users who convert often, not the whole range,
// and its cost follows how far back its users' last conversions lie, not the history's size.
// Users who never reach the last step are walked on all their events of the range.
import type { FunnelCounts, FunnelQuery } from "../model/analytics.ts";

/** An event of one of the steps: which ones it matches are the bits of `m` (step j, from 0: bit j). */
export type StepEvent = { ts: number; id: number; m: number };

/** An event that reached a step: the latest start (step 1's time) of a chain that reaches it there, and when that chain did the step before. */
type Reached = StepEvent & { s: number; p: number };

/** What a store reads for a funnel. */
export interface FunnelReads {
  /** When the latest event of one of the steps happened before `before` (null when none did). */
  latest(q: FunnelQuery, before: number): Promise<number | null>;
  /** Each user's events of the steps with lo <= time < hi, handed to `each` some users at a time (each user once). */
  stepEvents(q: FunnelQuery, lo: number, hi: number, each: (users: [string, StepEvent[]][]) => void): Promise<void>;
  /** A turn for other work, every so many users walked (where the walk shares its thread with requests). */
  pause?(): Promise<void>;
}

/** A span that settles fewer of the users it saw than this leaves the rest of the range to be read at once. */
const MIN_SETTLED = 0.2;
/** Users walked between two pauses. */
const USERS_PER_TURN = 2000;

/** The first span read back from the latest event; each next one doubles. */
const FIRST_SPAN = 86_400_000;

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
  const end = q.to + q.window;
  const newest = await reads.latest(q, end);
  if (newest !== null && newest >= q.from) {
    /** Users still walked: their events read so far, oldest first. */
    const open = new Map<string, StepEvent[]>();
    const done = new Set<string>();
    let hi = newest + 1;
    // `raw`: everything at once, what the walk backwards is held equal to.
    let span = q.raw ? Number.POSITIVE_INFINITY : FIRST_SPAN;
    while (hi > q.from) {
      const lo = Math.max(q.from, hi - span);
      const touched = new Set<string>();
      await reads.stepEvents(q, lo, hi, (page) => {
        for (const [user, events] of page) {
          if (done.has(user)) continue;
          const known = open.get(user);
          open.set(user, known ? [...events, ...known] : events);
          touched.add(user);
        }
      });
      const final = lo <= q.from;
      const before = open.size;
      let walked = 0;
      for (const user of final ? [...open.keys()] : touched) {
        if (reads.pause && ++walked % USERS_PER_TURN === 0) await reads.pause();
        const events = open.get(user)!;
        events.sort((a, b) => a.ts - b.ts || a.id - b.id);
        const levels = chains(events, q);
        if (levels.length - 1 === last || final) {
          count(levels);
          open.delete(user);
          done.add(user);
        }
      }
      hi = lo;
      // Users whose last conversions are further back than most spans would reach: the rest at once.
      span = open.size > 0 && before - open.size < touched.size * MIN_SETTLED ? Number.POSITIVE_INFINITY : span * 2;
    }
  }
  return users.map((n, j) => ({ users: n, medianMs: j > 0 ? median(deltas[j]!) : null }));
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
