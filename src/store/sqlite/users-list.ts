// The users page's queries on SQLite (the walk and the search around them: store/user-list.ts).
// A search reads the users index in search.db (users-index.ts), on the connection that has it
// attached; it sees an identify a moment after it was stored, as the event search sees events.
import { and, type SQL, sql } from "drizzle-orm";
import type { UserFilter } from "../../model/profile.ts";
import type { Seen, UserFacts, UserListSource } from "../user-list.ts";
import { type UserAtom, userAtoms } from "../user-search.ts";
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
      return db.all<{ id: string }>(everyoneQuery(filter)).map((r) => r.id);
    },
    async matches({ projectId, terms }) {
      return searching().all<{ id: string }>(matchedQuery(projectId, userAtoms(terms))).map((r) => r.id);
    },
    async ordered(filter, userIds) {
      return db.all<{ id: string }>(orderedQuery(filter, sql`SELECT value FROM json_each(${JSON.stringify(userIds)})`)).map((r) => r.id);
    },
  };
}

/** For each condition of the search, the users (their documents' ids) that have a row meeting it. */
function docsMatching(atoms: UserAtom[]): SQL[] {
  return usersMatch(atoms).map(({ part, match }) => {
    const inPart = part === null ? sql`` : sql` AND p.part = ${part}`;
    if (match === null) return sql`SELECT DISTINCT p.doc FROM search.user_parts p WHERE p.part = ${part}`;
    return sql`SELECT DISTINCT p.doc FROM search.users_fts JOIN search.user_parts p ON p.id = users_fts.rowid WHERE users_fts MATCH ${match}${inPart}`;
  });
}

/**
 * The ids of the project's users the search matches (search.db's index, see users-index.ts). CROSS
 * JOIN: from the matches to their users by key; SQLite would rather read every user of the project.
 */
function matchedQuery(projectId: number, atoms: UserAtom[]): SQL {
  return sql`SELECT d.user_id AS id FROM (${sql.join(docsMatching(atoms), sql` INTERSECT `)}) m CROSS JOIN search.user_docs d ON d.id = m.doc WHERE d.project_id = ${projectId}`;
}

/**
 * `matched` in the list's order, after the cursor, at most `limit`. A document outlives its user's
 * last event (retention deletes events, not documents): one with no activity left is not a user.
 */
function orderedQuery({ projectId, before, limit }: UserFilter, matched: SQL): SQL {
  const after = before ? sql` AND (last < ${before.lastSeen} OR (last = ${before.lastSeen} AND id < ${before.userId}))` : sql``;
  return sql`WITH matched(id) AS (${matched}),
    scored AS (
      SELECT m.id, max(coalesce((SELECT max(ts) FROM events WHERE project_id = ${projectId} AND user_id = m.id), p.updated_at), coalesce(p.updated_at, 0)) AS last
      FROM matched m LEFT JOIN profiles p ON p.project_id = ${projectId} AND p.user_id = m.id)
    SELECT id FROM scored WHERE last IS NOT NULL${after} ORDER BY last DESC, id DESC LIMIT ${limit}`;
}

/** Everyone, in the list's order (a walk that read too much): the users of the events, one seek each, and the identified. */
function everyoneQuery({ projectId, before, limit }: UserFilter): SQL {
  const after = before ? sql`WHERE last < ${before.lastSeen} OR (last = ${before.lastSeen} AND id < ${before.userId})` : sql``;
  return sql`WITH RECURSIVE
    seen(id) AS (
      SELECT (SELECT min(user_id) FROM events WHERE project_id = ${projectId} AND user_id IS NOT NULL)
      UNION ALL
      SELECT (SELECT min(user_id) FROM events WHERE project_id = ${projectId} AND user_id > seen.id) FROM seen WHERE seen.id IS NOT NULL),
    everyone(id) AS (SELECT id FROM seen WHERE id IS NOT NULL UNION SELECT user_id FROM profiles WHERE project_id = ${projectId}),
    scored AS (
      SELECT e.id, max(coalesce((SELECT max(ts) FROM events WHERE project_id = ${projectId} AND user_id = e.id), p.updated_at), coalesce(p.updated_at, 0)) AS last
      FROM everyone e LEFT JOIN profiles p ON p.project_id = ${projectId} AND p.user_id = e.id)
    SELECT id FROM scored ${after} ORDER BY last DESC, id DESC LIMIT ${limit}`;
}
