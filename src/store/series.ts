// What both dialects' series share (store/sqlite/analytics.ts, store/pg/analytics.ts): finding a
// time's bucket, keeping the groups with the most, and putting the lines together in the order
// the answer gives them.
import type { SeriesLine } from "../model/analytics.ts";
import type { EventFilter } from "../model/filter.ts";

/** The bucket of `ts` among `bounds` (bucket i holds bounds[i] <= ts < bounds[i + 1]); -1 outside them. */
export function bucketOf(bounds: number[], ts: number): number {
  if (ts < bounds[0]! || ts >= bounds.at(-1)!) return -1;
  let lo = 0;
  let hi = bounds.length - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (bounds[mid]! <= ts) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** Most first; equal totals by name (no value first), so the same data always gives the same lines. */
export function byTotal(
  a: { group: string | null; total: number },
  b: { group: string | null; total: number },
): number {
  if (a.total !== b.total) return b.total - a.total;
  if (a.group === b.group) return 0;
  if (a.group === null) return -1;
  if (b.group === null) return 1;
  return byCodePoint(a.group, b.group);
}

/** Strings in the order of their code points (their UTF-8 bytes): how SQLite and PostgreSQL's "C" collation sort them. */
export function byCodePoint(a: string, b: string): number {
  if (a === b) return 0;
  for (let i = 0; ; ) {
    const x = a.codePointAt(i);
    const y = b.codePointAt(i);
    if (x === undefined || y === undefined) return x === undefined ? -1 : 1;
    if (x !== y) return x - y;
    i += x > 0xffff ? 2 : 1;
  }
}

/** Whether a filter asks about more than the project, a channel and the time: then counting needs the events themselves. */
export function narrowsEvents(f: EventFilter): boolean {
  return (
    f.userId !== undefined ||
    f.event !== undefined ||
    (f.tags?.length ?? 0) > 0 ||
    (f.terms?.length ?? 0) > 0 ||
    Boolean(f.liveOnly)
  );
}

/** The `limit` groups with the most (groups with nothing in the range left out), most first. */
export function topGroups<T extends { group: string | null; total: number }>(
  groups: T[],
  limit: number,
): { top: T[]; rest: T[] } {
  const sorted = groups.filter((g) => g.total > 0).sort(byTotal);
  return { top: sorted.slice(0, limit), rest: sorted.slice(limit) };
}

export const zeros = (n: number): number[] => new Array<number>(n).fill(0);

/** The line of the groups past the limit, from what their events add up to. */
export function otherLine(counts: number[], total: number): SeriesLine {
  return { group: null, other: true, total, counts };
}

/** A group's events per bucket, and in all. */
type GroupCounts = { group: string | null; total: number; counts: number[] };

/** The `limit` groups with the most events, and the rest added up as one line. */
export function combine(groups: GroupCounts[], limit: number): SeriesLine[] {
  const { top, rest } = topGroups(groups, limit);
  const lines: SeriesLine[] = top.map((g) => ({ ...g, other: false }));
  if (rest.length) {
    const counts = zeros(rest[0]!.counts.length);
    for (const g of rest) g.counts.forEach((c, b) => (counts[b]! += c));
    lines.push(
      otherLine(
        counts,
        rest.reduce((sum, g) => sum + g.total, 0),
      ),
    );
  }
  return lines;
}

/** A tag's lines, and the events without it (the whole less each value's) as the line of no value. */
export function withUntagged(lines: GroupCounts[], whole: Omit<GroupCounts, "group">, limit: number): SeriesLine[] {
  const without = { group: null, total: whole.total, counts: [...whole.counts] };
  for (const line of lines) {
    without.total -= line.total;
    line.counts.forEach((c, b) => (without.counts[b]! -= c));
  }
  return combine([...lines, without], limit);
}

/**
 * Counts of distinct users per bucket and over the range, per group, from (bucket, group, user)
 * rows in any order: what a series of users is made of where the database cannot count it alone.
 */
export class DistinctUsers {
  private readonly perGroup = new Map<string | null, { users: Set<string>; buckets: Map<number, Set<string>> }>();

  add(bucket: number, group: string | null, user: string): void {
    let g = this.perGroup.get(group);
    if (!g) this.perGroup.set(group, (g = { users: new Set(), buckets: new Map() }));
    g.users.add(user);
    let b = g.buckets.get(bucket);
    if (!b) g.buckets.set(bucket, (b = new Set()));
    b.add(user);
  }

  /** The lines: the `limit` groups with the most users, then the rest as one (its users counted once). */
  lines(n: number, limit: number): SeriesLine[] {
    const groups = [...this.perGroup].map(([group, g]) => ({ group, total: g.users.size, g }));
    const { top, rest } = topGroups(groups, limit);
    const line = (buckets: Map<number, Set<string>>[]) => {
      const counts = zeros(n);
      if (buckets.length === 1) {
        for (const [b, users] of buckets[0]!) counts[b] = users.size;
        return counts;
      }
      for (let b = 0; b < n; b++) {
        const seen = new Set<string>();
        for (const of of buckets) for (const user of of.get(b) ?? []) seen.add(user);
        counts[b] = seen.size;
      }
      return counts;
    };
    const lines: SeriesLine[] = top.map(({ group, total, g }) => ({
      group,
      other: false,
      total,
      counts: line([g.buckets]),
    }));
    if (rest.length) {
      const users = new Set<string>();
      for (const { g } of rest) for (const user of g.users) users.add(user);
      lines.push(otherLine(line(rest.map(({ g }) => g.buckets)), users.size));
    }
    return lines;
  }
}
