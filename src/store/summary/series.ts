// Series answered from the summaries (store/summary/deltas.ts), the same for both stores: each
// bucket is whole hours, read from the hourly counts or the monthly activity rows, and at most a
// part of an hour at each end, read from the events themselves. So a question costs its buckets
// and, for users, a row per user and month, however many events the range holds. What the
// summaries cannot answer (words, a user, a channel with users, a tag with anything else, a key
// with too many values, a project whose summaries are being built) gets null: the store then
// counts the events (its raw series).
import type { SeriesLine, SeriesQuery } from "../../model/analytics.ts";
import type { EventFilter } from "../../model/filter.ts";
import { combine, otherLine, topGroups, zeros } from "../series.ts";
import { crossingMonths, monthMaps, walkActivity } from "./activity.ts";
import { ACTIVITY, type ActivityKind, VALUES } from "./deltas.ts";
import { type Cover, cover, type Group, type Span, type SummaryReads } from "./reads.ts";

/** Buckets whose edges cut hours in two (zones half an hour off UTC) read that many hours of events; past this many, users are counted from the events. */
const MAX_RAW_USER_SPANS = 4;

/** The series from the summaries, or null when they cannot answer it. */
export async function summarySeries(q: SeriesQuery, reads: SummaryReads): Promise<SeriesLine[] | null> {
  const { filter } = q;
  if (!onlyChannelNameTag(filter)) return null;
  if (!(await reads.ready(filter.projectId))) return null;
  return q.measure === "events" ? eventSeries(q, reads) : userSeries(q, reads);
}

/** Nothing but a project, a channel, a name and one tag (words, a user and live-only need the events). */
function onlyChannelNameTag(f: EventFilter): boolean {
  return f.userId === undefined && !f.terms?.length && !f.liveOnly && (f.tags?.length ?? 0) <= 1;
}

type Bucketed = { covers: Cover[]; hourSpans: Span[]; hourOf: number[]; rawSpans: Span[]; rawOf: number[] };

function bucketed(bounds: number[]): Bucketed {
  const out: Bucketed = { covers: [], hourSpans: [], hourOf: [], rawSpans: [], rawOf: [] };
  for (let b = 0; b + 1 < bounds.length; b++) {
    const c = cover(bounds[b]!, bounds[b + 1]!);
    out.covers.push(c);
    if (c.hours) {
      out.hourSpans.push(c.hours);
      out.hourOf.push(b);
    }
    for (const span of c.raw) {
      out.rawSpans.push(span);
      out.rawOf.push(b);
    }
  }
  return out;
}

/** Per group, a count per bucket. */
class Counts {
  readonly lines = new Map<Group, number[]>();
  constructor(private readonly n: number) {}
  add(group: Group, bucket: number, count: number): void {
    let line = this.lines.get(group);
    if (!line) this.lines.set(group, (line = zeros(this.n)));
    line[bucket]! += count;
  }
  addAll(found: Map<Group, number>[], bucketOf: number[]): void {
    found.forEach((groups, i) => {
      for (const [group, count] of groups) this.add(group, bucketOf[i]!, count);
    });
  }
}

async function eventSeries(q: SeriesQuery, reads: SummaryReads): Promise<SeriesLine[] | null> {
  const { filter, groupBy } = q;
  const projectId = filter.projectId;
  const tag = filter.tags?.[0];
  const n = q.bounds.length - 1;
  const b = bucketed(q.bounds);
  const counts = new Counts(n);
  if (groupBy?.by === "tag") {
    if (tag || filter.channel !== undefined || filter.event !== undefined) return null;
    if (await reads.wide(projectId, VALUES.tag, groupBy.key)) return null;
    const [values, whole, raw] = await Promise.all([
      reads.tagCounts({ projectId, key: groupBy.key }, b.hourSpans),
      reads.counts({ projectId, by: null }, b.hourSpans),
      reads.rawCounts(filter, groupBy, b.rawSpans),
    ]);
    // The events without the tag are the whole less those with one of its values.
    values.forEach((found, i) => {
      let without = whole[i]!.get(null) ?? 0;
      for (const [value, count] of found) {
        counts.add(value, b.hourOf[i]!, count);
        without -= count;
      }
      counts.add(null, b.hourOf[i]!, without);
    });
    counts.addAll(raw, b.rawOf);
  } else if (tag) {
    if (groupBy || filter.channel !== undefined || filter.event !== undefined) return null;
    if (await reads.wide(projectId, VALUES.tag, tag[0])) return null;
    const [found, raw] = await Promise.all([
      reads.tagCounts({ projectId, key: tag[0], value: tag[1] }, b.hourSpans),
      reads.rawCounts(filter, null, b.rawSpans),
    ]);
    found.forEach((values, i) => counts.add(null, b.hourOf[i]!, values.get(tag[1]) ?? 0));
    counts.addAll(raw, b.rawOf);
  } else {
    const by = groupBy?.by ?? null;
    if ((by === "event" || filter.event !== undefined) && (await reads.wide(projectId, VALUES.event, ""))) return null;
    const channelId =
      filter.channel === undefined ? undefined : ((await reads.channelId(projectId, filter.channel)) ?? -1);
    const [found, raw] = await Promise.all([
      reads.counts({ projectId, channelId, name: filter.event, by }, b.hourSpans),
      reads.rawCounts(filter, groupBy, b.rawSpans),
    ]);
    counts.addAll(found, b.hourOf);
    counts.addAll(raw, b.rawOf);
  }
  const groups = [...counts.lines].map(([group, line]) => ({ group, counts: line, total: sum(line) }));
  if (!groupBy) return [{ group: null, other: false, ...(groups[0] ?? { counts: zeros(n), total: 0 }) }];
  return combine(groups, q.limit);
}

const sum = (line: number[]) => line.reduce((a, c) => a + c, 0);

/** Which activity rows answer a question of users: its kind, key and value (none: every value, a group each). */
type UserSpec = { kind: ActivityKind; key: string; value?: string };

async function userSpec(q: SeriesQuery, reads: SummaryReads): Promise<UserSpec | null> {
  const { filter, groupBy } = q;
  const projectId = filter.projectId;
  const tag = filter.tags?.[0];
  if (filter.channel !== undefined || groupBy?.by === "channel") return null;
  const asks = [groupBy, filter.event !== undefined, tag].filter(Boolean).length;
  if (asks > 1) return null;
  if (groupBy?.by === "tag" || tag) {
    const key = groupBy?.by === "tag" ? groupBy.key : tag![0];
    if (await reads.wide(projectId, VALUES.tag, key)) return null;
    // Split by a tag, users of events without it are a line too, which no activity row holds: the
    // summaries answer only when every event of the range has the tag.
    if (groupBy?.by === "tag" && (await someWithout(q, key, reads))) return null;
    return { kind: ACTIVITY.tag, key, value: tag?.[1] };
  }
  if (groupBy?.by === "event" || filter.event !== undefined) {
    if (await reads.wide(projectId, VALUES.event, "")) return null;
    return { kind: ACTIVITY.event, key: "", value: filter.event };
  }
  return { kind: ACTIVITY.all, key: "", value: "" };
}

/** Whether some event of the range lacks the tag `key`. */
async function someWithout(q: SeriesQuery, key: string, reads: SummaryReads): Promise<boolean> {
  const projectId = q.filter.projectId;
  const span: Span[] = [[q.bounds[0]!, q.bounds.at(-1)!]];
  const c = cover(span[0]![0], span[0]![1]);
  const hours = c.hours ? [c.hours] : [];
  const [values, whole, raw] = await Promise.all([
    reads.tagCounts({ projectId, key }, hours),
    reads.counts({ projectId, by: null }, hours),
    reads.rawCounts({ projectId }, { by: "tag", key }, c.raw),
  ]);
  const tagged = values[0] ? sum([...values[0].values()]) : 0;
  return (whole[0]?.get(null) ?? 0) > tagged || raw.some((found) => (found.get(null) ?? 0) > 0);
}

/**
 * Distinct users per bucket from the activity rows: a user is in a bucket when one of their rows
 * has a bit of it (a day wholly in it, or an hour of a day it holds in part), or an event in a part
 * of an hour at its ends. A bucket within one month, with no such part, counts its rows (a user
 * has one row per month); any other keeps the users it saw.
 */
async function userSeries(q: SeriesQuery, reads: SummaryReads): Promise<SeriesLine[] | null> {
  const spec = await userSpec(q, reads);
  if (!spec) return null;
  const n = q.bounds.length - 1;
  const b = bucketed(q.bounds);
  if (b.rawSpans.length > MAX_RAW_USER_SPANS) return null;
  const maps = monthMaps(b.covers);
  if (reads.users)
    return reads.users({
      projectId: q.filter.projectId,
      ...spec,
      n,
      maps,
      rawSpans: b.rawSpans,
      rawOf: b.rawOf,
      filter: q.filter,
      groupBy: q.groupBy,
      limit: q.limit,
    });
  const shared = new Set<number>([...b.rawOf, ...crossingMonths(maps)]);
  const raw = await reads.rawUsers(q.filter, q.groupBy, b.rawSpans);

  /** One pass over the rows (of `only` groups, or all): each group's users, or those of `only` as one group. */
  const pass = async (only?: Set<string>) => {
    const groups = new Map<Group, UserCounts>();
    const everywhere = new Set(Array.from({ length: n }, (_, i) => i));
    const of = (group: Group) => {
      const key = only ? null : group;
      let g = groups.get(key);
      if (!g) groups.set(key, (g = new UserCounts(n, only ? everywhere : shared)));
      return g;
    };
    for (const [i, group, user] of raw)
      if (!only || (group !== null && only.has(group))) of(group).see(user, [b.rawOf[i]!]);
    await walkActivity(reads, { projectId: q.filter.projectId, ...spec, only }, maps, (value, user, hits) =>
      of(spec.value === undefined ? value : null).see(user, hits),
    );
    return groups;
  };

  const groups = await pass();
  const lines = [...groups].map(([group, g]) => ({ group, ...g.line() }));
  if (!q.groupBy) return [{ group: null, other: false, ...(lines[0] ?? { counts: zeros(n), total: 0 }) }];
  const { top, rest } = topGroups(lines, q.limit);
  const out: SeriesLine[] = top.map((line) => ({ ...line, other: false }));
  if (rest.length) {
    // A user in two groups past the limit counts once there: the rows of those groups again, their users kept.
    const other = (await pass(new Set(rest.map((r) => r.group as string)))).get(null)!.line();
    out.push(otherLine(other.counts, other.total));
  }
  return out;
}

/** A group's users: counted per bucket, or kept where a user may be seen twice (`shared` buckets); all of them for the total. */
class UserCounts {
  private readonly counts: number[];
  private readonly seen = new Map<number, Set<string>>();
  private readonly all = new Set<string>();
  constructor(
    n: number,
    private readonly shared: Set<number>,
  ) {
    this.counts = zeros(n);
  }
  /** A user seen in these buckets (each once). */
  see(user: string, buckets: number[]): void {
    this.all.add(user);
    for (const bucket of buckets) {
      if (!this.shared.has(bucket)) {
        this.counts[bucket]!++;
        continue;
      }
      let users = this.seen.get(bucket);
      if (!users) this.seen.set(bucket, (users = new Set()));
      users.add(user);
    }
  }
  line(): { total: number; counts: number[] } {
    const counts = [...this.counts];
    for (const [bucket, users] of this.seen) counts[bucket] = users.size;
    return { total: this.all.size, counts };
  }
}
