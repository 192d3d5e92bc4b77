// The users page's queries on SQLite (the walk and the search around them: store/user-list.ts).
// A search reads the users index in search.db (users-index.ts), on the connection that has it
// attached; it sees an identify a moment after it was stored, as the event search sees events.
import { type SQL, sql } from "drizzle-orm";
import { listQueries, type Seen, type UserFacts, type UserListSource } from "../user-list.ts";
import { userAtoms } from "../user-search.ts";
import type { Db } from "./db.ts";
import { usersMatch } from "./users-index.ts";

/** `searching` is the connection that can see the index (see search.ts). */
export function userListSource(db: Db, searching: () => Db): UserListSource {
  const client = db.$client;
  // INDEXED BY: the time index walked backwards stops after a page; the user index would be read whole and sorted.
  const events = client.prepare<{ userId: string; ts: number; id: number }, [number, number, number, number]>(
    `SELECT user_id AS userId, ts, id FROM events INDEXED BY events_project_ts
      WHERE project_id = ?1 AND (ts < ?2 OR (ts = ?2 AND id < ?3)) AND user_id IS NOT NULL ORDER BY ts DESC, id DESC LIMIT ?4`,
  );
  const profiles = client.prepare<Seen, [number, number, string, number]>(
    `SELECT user_id AS userId, updated_at AS at FROM profiles INDEXED BY profiles_updated
      WHERE project_id = ?1 AND (updated_at < ?2 OR (updated_at = ?2 AND user_id < ?3)) ORDER BY updated_at DESC, user_id DESC LIMIT ?4`,
  );
  // Each aggregate over one user's range of the (project, user, ts) index: seeks, and a short count.
  const facts = client.prepare<UserFacts, [number, string]>(
    `SELECT u.value AS userId,
        (SELECT min(ts) FROM events WHERE project_id = ?1 AND user_id = u.value) AS firstEvent,
        (SELECT max(ts) FROM events WHERE project_id = ?1 AND user_id = u.value) AS lastEvent,
        (SELECT count(*) FROM events WHERE project_id = ?1 AND user_id = u.value) AS events,
        p.properties AS properties, p.created_at AS createdAt, p.updated_at AS updatedAt
      FROM json_each(?2) u LEFT JOIN profiles p ON p.project_id = ?1 AND p.user_id = u.value`,
  );

  return {
    async events(projectId, from, limit) {
      return events.all(projectId, from.ts, from.id, limit);
    },
    async profiles(projectId, from, limit) {
      return profiles.all(projectId, from.at, from.userId, limit);
    },
    async facts(projectId, userIds) {
      return facts.all(projectId, JSON.stringify(userIds)).filter((f) => f.lastEvent !== null || f.updatedAt !== null);
    },
    async everyone(filter) {
      return db.all<{ id: string }>(usersInOrder.everyone(filter)).map((r) => r.id);
    },
    async matching(filter, cap = Number.POSITIVE_INFINITY) {
      const conditions = usersMatch(userAtoms(filter.terms));
      const index = searching();
      // The narrowest condition finds the candidates; the others are checked per candidate.
      const rows = (c: Condition) =>
        c.match === null
          ? Number.POSITIVE_INFINITY
          : index.all<{ n: number }>(
              sql`SELECT count(*) AS n FROM (SELECT 1 FROM search.users_fts WHERE users_fts MATCH ${c.match} LIMIT ${cap + 1})`,
            )[0]!.n;
      const counted = Number.isFinite(cap)
        ? conditions.map((c) => ({ c, n: rows(c) })).sort((a, b) => a.n - b.n)
        : conditions.map((c) => ({ c, n: 0 }));
      if (counted[0]!.n > cap) return null;
      const [driver, ...others] = counted.map((x) => x.c);
      const matched = sql`SELECT DISTINCT d.user_id AS id FROM (${rowsOf(driver!)}) r CROSS JOIN search.user_parts p ON p.id = r.id CROSS JOIN search.user_docs d ON d.id = p.doc
        WHERE d.project_id = ${filter.projectId}${sql.join(others.map((c) => sql` AND ${holds(c, sql`d.id`)}`))}`;
      return index.all<{ id: string }>(usersInOrder.ordered(filter, matched)).map((r) => r.id);
    },
    matcher({ projectId, terms }) {
      const conditions = usersMatch(userAtoms(terms));
      return async (userIds) =>
        searching()
          .all<{
            id: string;
          }>(sql`SELECT d.user_id AS id FROM json_each(${JSON.stringify(userIds)}) u CROSS JOIN search.user_docs d ON d.project_id = ${projectId} AND d.user_id = u.value
            WHERE ${sql.join(
              conditions.map((c) => holds(c, sql`d.id`)),
              sql` AND `,
            )}`)
          .map((r) => r.id);
    },
  };
}

type Condition = { part: string | null; match: string | null };

/** The rows (their ids) that meet a condition, any user's (search.db's index, see users-index.ts). */
function rowsOf({ part, match }: Condition): SQL {
  if (match === null) return sql`SELECT id FROM search.user_parts WHERE part = ${part}`;
  if (part === null) return sql`SELECT rowid AS id FROM search.users_fts WHERE users_fts MATCH ${match}`;
  return sql`SELECT f.rowid AS id FROM search.users_fts f CROSS JOIN search.user_parts q ON q.id = f.rowid WHERE f.users_fts MATCH ${match} AND q.part = ${part}`;
}

/**
 * Whether the user of document `doc` has a row that meets the condition. A property's row is looked
 * up in the index by its id; any other condition's matches are read once for the statement: a
 * user may have a hundred rows to look up, and FTS5 reads a prefix's matches whole for each lookup.
 */
function holds({ part, match }: Condition, doc: SQL): SQL {
  const inPart = part === null ? sql`` : sql` AND q.part = ${part}`;
  if (match === null) return sql`EXISTS (SELECT 1 FROM search.user_parts q WHERE q.doc = ${doc}${inPart})`;
  if (part !== null && !match.includes("*")) {
    return sql`EXISTS (SELECT 1 FROM search.user_parts q CROSS JOIN search.users_fts f ON f.rowid = q.id WHERE q.doc = ${doc}${inPart} AND f.users_fts MATCH ${match})`;
  }
  // `+`: by the user's rows, not by the matches (which would be read for every user).
  return sql`EXISTS (SELECT 1 FROM search.user_parts q WHERE q.doc = ${doc}${inPart} AND +q.id IN (SELECT rowid FROM search.users_fts WHERE users_fts MATCH ${match}))`;
}

/** The users in the list's order on SQLite. */
const usersInOrder = listQueries({
  last: (projectId, id) =>
    sql`max(coalesce((SELECT max(ts) FROM events WHERE project_id = ${projectId} AND user_id = ${id}), p.updated_at), coalesce(p.updated_at, 0))`,
  after: (before) => sql`(last < ${before.lastSeen} OR (last = ${before.lastSeen} AND id < ${before.userId}))`,
  id: sql`id`,
});
