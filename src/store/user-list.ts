// The users page's query, the same for both dialects over a few queries each dialect answers
// (store/sqlite/users-list.ts, store/pg/users-list.ts). A user's activity is their events and
// their identify calls; the list runs newest activity first.
//
// The plain list walks the project's activity backwards (the events' time index and the profiles'
// identify-time index, merged) and takes users as it first meets them: a page reads about as many
// rows as it shows, however many events and users there are. A walk that reads too much before it
// fills a page (deep pages of a few busy users) enumerates the project's user ids instead (one
// index seek per user). A search asks the users index (store/user-search.ts): when its narrowest
// condition finds few rows, their users are checked against the rest and ordered by activity (a
// seek or two each); when every condition finds many (`user-` among 100,000 users), the search
// walks, checking the users it meets in rounds, since a page of them comes soon.
import { type SQL, sql } from "drizzle-orm";
import type { Properties, UserFilter, UserSummary } from "../model/profile.ts";
import { userAtoms } from "./user-search.ts";

/** A user's activity at a time (Unix ms). */
export type Seen = { userId: string; at: number };

/** What each dialect answers. */
export type UserListSource = {
  /** Up to `limit` events that have a user id, newest first by (ts, id), strictly older than `from`. */
  events(
    projectId: number,
    from: { ts: number; id: number },
    limit: number,
  ): Promise<{ userId: string; ts: number; id: number }[]>;
  /** Up to `limit` profiles, newest identify first by (updatedAt, userId), strictly before `from`. */
  profiles(projectId: number, from: Seen, limit: number): Promise<Seen[]>;
  /** The ids of every user of the project, in the list's order, after `before`, at most `limit`. */
  everyone(filter: UserFilter): Promise<string[]>;
  /**
   * The ids of the users the search matches, in the list's order, after `before`, at most `limit`;
   * null when even its narrowest condition finds more than `cap` rows (a walk finds a page sooner).
   */
  matching(filter: UserFilter, cap?: number): Promise<string[] | null>;
  /** A check, for one listing, of which of some users the search matches (called in rounds, as a walk meets users). */
  matcher(filter: UserFilter): (userIds: string[]) => Promise<string[]>;
  /** What the page shows of each user (no row for an id that has no event and no profile). */
  facts(projectId: number, userIds: string[]): Promise<UserFacts[]>;
};

export type UserFacts = {
  userId: string;
  firstEvent: number | null;
  lastEvent: number | null;
  events: number;
  properties: string | null;
  createdAt: number | null;
  updatedAt: number | null;
};

/** How a dialect writes the list's order (latest activity first, then the ids' code points, last first). */
export type ListOrder = {
  /** A user's latest activity: their events' latest time, or their profile's (`p`) last identify. */
  last: (projectId: number, id: SQL) => SQL;
  /** Users after `before` in the list's order. */
  after: (before: NonNullable<UserFilter["before"]>) => SQL;
  /** The id as the order compares it. */
  id: SQL;
};

/** The queries that give users in the list's order, as a dialect writes it. */
export function listQueries(order: ListOrder) {
  /**
   * The ids of `listed` (a query, after the CTEs `ctes`) in the list's order, after the cursor, at
   * most `limit`. A user's rows outlive their last event (retention deletes events, not rows): one
   * with no activity left is not a user.
   */
  const ordered = ({ projectId, before, limit }: UserFilter, listed: SQL, ctes = sql``): SQL =>
    sql`WITH RECURSIVE ${ctes}listed(id) AS (${listed}),
      scored AS (
        SELECT l.id, ${order.last(projectId, sql`l.id`)} AS last
        FROM listed l LEFT JOIN profiles p ON p.project_id = ${projectId} AND p.user_id = l.id)
      SELECT id FROM scored WHERE last IS NOT NULL${before ? sql` AND ${order.after(before)}` : sql``}
      ORDER BY last DESC, ${order.id} DESC LIMIT ${limit}`;
  return {
    ordered,
    /** Everyone (a walk that read too much): the users of the events, one seek each (a loose index scan), and the identified. */
    everyone: (filter: UserFilter): SQL =>
      ordered(
        filter,
        sql`SELECT id FROM seen WHERE id IS NOT NULL UNION SELECT user_id FROM profiles WHERE project_id = ${filter.projectId}`,
        sql`seen(id) AS (
          SELECT (SELECT min(user_id) FROM events WHERE project_id = ${filter.projectId} AND user_id IS NOT NULL)
          UNION ALL
          SELECT (SELECT min(user_id) FROM events WHERE project_id = ${filter.projectId} AND user_id > seen.id) FROM seen WHERE seen.id IS NOT NULL),`,
      ),
  };
}

const BATCH = 256;
/** Rows of activity a walk may read before the full enumeration is cheaper (about 60 ms of work at 50,000 users). */
const WALK_LIMIT = 20_000;
/** Rows a search's narrowest condition may find for its users to be ordered all (a seek or two each) rather than walked. */
const FEW_MATCHES = 2000;

export async function listUsers(source: UserListSource, filter: UserFilter): Promise<UserSummary[]> {
  if (filter.limit < 1) return [];
  const ids = await userIds(source, filter);
  if (!ids.length) return [];
  const byId = new Map((await source.facts(filter.projectId, ids)).map((f) => [f.userId, summary(f)]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

async function userIds(source: UserListSource, filter: UserFilter): Promise<string[]> {
  if (!userAtoms(filter.terms).length) return (await walk(source, filter)) ?? (await source.everyone(filter));
  return (
    (await source.matching(filter, FEW_MATCHES)) ??
    (await walk(source, filter, source.matcher(filter))) ??
    (await source.matching(filter))!
  );
}

/** One user as the list shows them (the same first and last seen everywhere); null when they have no event and no profile. */
export async function userSummary(
  source: UserListSource,
  projectId: number,
  userId: string,
): Promise<UserSummary | null> {
  const [facts] = await source.facts(projectId, [userId]);
  return facts ? summary(facts) : null;
}

export function summary(f: UserFacts): UserSummary {
  const firsts = [f.firstEvent, f.createdAt].filter((n): n is number => n !== null);
  const lasts = [f.lastEvent, f.updatedAt].filter((n): n is number => n !== null);
  return {
    userId: f.userId,
    firstSeen: Math.min(...firsts.map(Number)),
    lastSeen: Math.max(...lasts.map(Number)),
    events: Number(f.events),
    properties: f.properties === null ? null : (JSON.parse(f.properties) as Properties),
  };
}

/** Order of the list: newer activity first, then the greater id. */
export const inOrder = (a: Seen, b: Seen) => b.at - a.at || (a.userId < b.userId ? 1 : a.userId > b.userId ? -1 : 0);

/** A page of the list by walking the activity (only the users `keep` keeps, if given); null when that reads too much. */
async function walk(
  source: UserListSource,
  { projectId, before, limit }: UserFilter,
  keep?: (userIds: string[]) => Promise<string[]>,
): Promise<string[] | null> {
  // Activity at or before the cursor's time (ties at that time are sorted out below).
  const start = before ? before.lastSeen + 1 : Number.MAX_SAFE_INTEGER;
  const events = new Stream<{ userId: string; ts: number; id: number }>((last, n) =>
    source.events(projectId, last ? { ts: last.ts, id: last.id } : { ts: start, id: 0 }, n),
  );
  const profiles = new Stream<Seen>((last, n) => source.profiles(projectId, last ?? { at: start, userId: "" }, n));
  const met = new Set<string>();
  const found: Seen[] = [];
  let read = 0;
  // Without a cursor, a user's first appearance is their newest activity. With one, it is when
  // their newest activity is at or before the cursor: checked in rounds, one query each (as are
  // the users a search keeps).
  const round = before || keep ? 64 : 1;
  for (;;) {
    const fresh: Seen[] = [];
    let next: Seen | null = null;
    while (fresh.length < round) {
      next = await nextOf(events, profiles);
      if (!next) break;
      if (++read > WALK_LIMIT) return null;
      if (met.has(next.userId)) continue;
      met.add(next.userId);
      fresh.push(next);
    }
    const kept = keep && fresh.length ? new Set(await keep(fresh.map((s) => s.userId))) : null;
    const placed = kept ? fresh.filter((s) => kept.has(s.userId)) : fresh;
    found.push(...(before ? await newestBefore(source, projectId, placed, before) : placed));
    // Without a cursor users arrive newest first (ties aside, which leave the times in place), so
    // the page's last time needs no sort; with one they arrive in any order.
    if (before) found.sort(inOrder);
    const upcoming = next && (await nextOf(events, profiles, true));
    // Enough: a full page, and nothing still to come at the page's last time (a tie).
    if (!upcoming || (found.length >= limit && upcoming.at < found[limit - 1]!.at)) break;
  }
  return found
    .sort(inOrder)
    .slice(0, limit)
    .map((s) => s.userId);
}

/** Of users met walking back from the cursor, those whose newest activity is after the cursor's user in the list. */
async function newestBefore(
  source: UserListSource,
  projectId: number,
  met: Seen[],
  before: { lastSeen: number; userId: string },
): Promise<Seen[]> {
  if (!met.length) return [];
  const facts = await source.facts(
    projectId,
    met.map((m) => m.userId),
  );
  return facts
    .map(summary)
    .flatMap((s) =>
      s.lastSeen < before.lastSeen || (s.lastSeen === before.lastSeen && s.userId < before.userId)
        ? [{ userId: s.userId, at: s.lastSeen }]
        : [],
    );
}

/** The newer of the two streams' heads (taken, unless `peek`). */
async function nextOf(
  a: Stream<{ userId: string; ts: number; id: number }>,
  b: Stream<Seen>,
  peek = false,
): Promise<Seen | null> {
  const [x, y] = await Promise.all([a.head(), b.head()]);
  if (!x && !y) return null;
  if (x && (!y || x.ts >= y.at)) {
    if (!peek) a.take();
    return { userId: x.userId, at: x.ts };
  }
  if (!peek) b.take();
  return y;
}

/** Rows of one keyset-paged query, read a batch at a time. */
class Stream<T> {
  private rows: T[] = [];
  private last: T | null = null;
  private done = false;
  constructor(private readonly fetch: (last: T | null, n: number) => Promise<T[]>) {}

  async head(): Promise<T | null> {
    if (!this.rows.length && !this.done) {
      this.rows = await this.fetch(this.last, BATCH);
      if (this.rows.length < BATCH) this.done = true;
    }
    return this.rows[0] ?? null;
  }

  take(): void {
    this.last = this.rows.shift() ?? this.last;
  }
}
