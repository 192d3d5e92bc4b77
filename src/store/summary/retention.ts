// Retention, the same for both stores: each user's periods with the start event and with the return
// event, from the activity rows of the two names when nothing but the project filters them (a row per
// user and month of each), else from the events themselves (each store's own read); then counted here.
import type { RetentionCounts, RetentionQuery } from "../../model/analytics.ts";
import { monthMaps, walkActivity } from "./activity.ts";
import { ACTIVITY, VALUES } from "./deltas.ts";
import { cover, type SummaryReads } from "./reads.ts";

/** Each user's periods (indexes into the query's bounds) with the start event and with the return event. */
export type UserPeriods = { starts: Map<string, Iterable<number>>; returns: Map<string, Iterable<number>> };

/** The cohorts counted from each user's periods. */
export function cohortCounts(q: Pick<RetentionQuery, "cohorts" | "periods">, users: UserPeriods): RetentionCounts {
  const out: RetentionCounts = Array.from({ length: q.cohorts }, () => ({
    users: 0,
    returned: new Array<number>(q.periods + 1).fill(0),
  }));
  const back = new Set<number>();
  for (const [user, starts] of users.starts) {
    back.clear();
    for (const p of users.returns.get(user) ?? []) back.add(p);
    for (const c of new Set(starts)) {
      if (c >= q.cohorts) continue;
      const cohort = out[c]!;
      cohort.users++;
      for (let k = 0; k <= q.periods; k++) if (back.has(c + k)) cohort.returned[k]!++;
    }
  }
  return out;
}

/** Retention from the activity rows, or null when they cannot answer (a filter, a name past the limit, periods that cut hours). */
export async function summaryRetention(q: RetentionQuery, reads: SummaryReads): Promise<RetentionCounts | null> {
  const f = q.filter;
  if (f.channel !== undefined || f.event !== undefined || f.userId !== undefined || f.tags?.length || f.terms?.length)
    return null;
  if (f.liveOnly) return null;
  if (!(await reads.ready(f.projectId)) || (await reads.wide(f.projectId, VALUES.event, ""))) return null;
  const covers = q.bounds.slice(0, -1).map((lo, i) => cover(lo, q.bounds[i + 1]!));
  if (covers.some((c) => c.raw.length)) return null;
  const maps = monthMaps(covers);
  if (reads.cohorts) return reads.cohorts({ ...q, maps });
  const periodsOf = async (name: string) => {
    const found = new Map<string, number[]>();
    await walkActivity(
      reads,
      { projectId: f.projectId, kind: ACTIVITY.event, key: "", value: name },
      maps,
      (_, user, hits) => {
        const known = found.get(user);
        if (known) known.push(...hits);
        else found.set(user, [...hits]);
      },
    );
    return found;
  };
  const starts = await periodsOf(q.startEvent);
  const returns = q.returnEvent === q.startEvent ? starts : await periodsOf(q.returnEvent);
  return cohortCounts(q, { starts, returns });
}
