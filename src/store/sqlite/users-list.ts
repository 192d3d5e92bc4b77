// The users page's queries on SQLite (the walk and the search around them: store/user-list.ts).
import { and, type SQL, sql } from "drizzle-orm";
import type { UserFilter } from "../../model/profile.ts";
import type { Seen, UserFacts, UserListSource } from "../user-list.ts";
import type { Db } from "./db.ts";

/** A property's value as text (json_each gives booleans as 1 and 0). */
const VALUE = sql.raw(`lower(CASE j.type WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' ELSE j.value END)`);

export function userListSource(db: Db): UserListSource {
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
    async matching(filter) {
      const rows = db.all<{ id: string }>(matchingQuery(filter));
      return rows.map((r) => r.id);
    },
  };
}

/** As SQLite's lower() folds: ASCII letters only (it knows no other case), so text typed as stored always matches. */
const asciiLower = (text: string) => text.replace(/[A-Z]+/g, (s) => s.toLowerCase());

function matchingQuery({ projectId, words = [], properties = [], before, limit }: UserFilter): SQL {
  const lowered = words.map(asciiLower);
  const inId = (w: string) => sql`instr(lower(id), ${w}) > 0`;
  const inProfile = [
    ...lowered.map((w) => sql`(instr(lower(p.user_id), ${w}) > 0 OR EXISTS (SELECT 1 FROM json_each(p.properties) j WHERE instr(${VALUE}, ${w}) > 0))`),
    ...properties.map(([key, value]) => sql`EXISTS (SELECT 1 FROM json_each(p.properties) j WHERE j.key = ${key} AND instr(${VALUE}, ${asciiLower(value)}) > 0)`),
  ];
  // Users of the project's events, one seek each (a skip scan of the user index), matched on their
  // id alone; and the identified, on their id and properties. A property term can match only
  // someone identified.
  const profiled = sql`SELECT p.user_id FROM profiles p WHERE p.project_id = ${projectId}${inProfile.length ? sql` AND ${and(...inProfile)}` : sql``}`;
  const everyone = properties.length ? profiled : sql`SELECT id FROM seen WHERE id IS NOT NULL${lowered.length ? sql` AND ${and(...lowered.map(inId))}` : sql``} UNION ${profiled}`;
  const after = before ? sql`WHERE last < ${before.lastSeen} OR (last = ${before.lastSeen} AND id < ${before.userId})` : sql``;
  return sql`WITH RECURSIVE
    seen(id) AS (
      SELECT (SELECT min(user_id) FROM events WHERE project_id = ${projectId} AND user_id IS NOT NULL)
      UNION ALL
      SELECT (SELECT min(user_id) FROM events WHERE project_id = ${projectId} AND user_id > seen.id) FROM seen WHERE seen.id IS NOT NULL),
    everyone(id) AS (${everyone}),
    scored AS (
      SELECT e.id, max(coalesce((SELECT max(ts) FROM events WHERE project_id = ${projectId} AND user_id = e.id), p.updated_at), coalesce(p.updated_at, 0)) AS last
      FROM everyone e LEFT JOIN profiles p ON p.project_id = ${projectId} AND p.user_id = e.id)
    SELECT id FROM scored ${after} ORDER BY last DESC, id DESC LIMIT ${limit}`;
}
