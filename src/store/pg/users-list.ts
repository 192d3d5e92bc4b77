// The users page's queries on PostgreSQL (the walk and the search around them: store/user-list.ts).
// User ids compare as "C" (code points) where the list's order depends on them, as in SQLite and
// in the walk's own sort, whatever the database's collation.
import { and, type SQL, sql } from "drizzle-orm";
import type { UserFilter } from "../../model/profile.ts";
import type { Seen, UserFacts, UserListSource } from "../user-list.ts";
import type { PgDb } from "./db.ts";

export function userListSource(db: PgDb): UserListSource {
  const rows = async <T>(query: SQL): Promise<T[]> => [...((await db.execute(query)) as unknown as T[])];

  return {
    async events(projectId, from, limit) {
      const list = await rows<{ userId: string; ts: string; id: string }>(sql`
        select user_id as "userId", ts, id from events
         where project_id = ${projectId} and (ts, id) < (${from.ts}, ${from.id}) and user_id is not null
         order by ts desc, id desc limit ${limit}`);
      return list.map((r) => ({ userId: r.userId, ts: Number(r.ts), id: Number(r.id) }));
    },

    async profiles(projectId, from, limit) {
      const list = await rows<{ userId: string; at: string }>(sql`
        select user_id as "userId", updated_at as at from profiles
         where project_id = ${projectId} and (updated_at, user_id) < (${from.at}, ${from.userId})
         order by updated_at desc, user_id desc limit ${limit}`);
      return list.map((r): Seen => ({ userId: r.userId, at: Number(r.at) }));
    },

    async facts(projectId, userIds) {
      // The ids go as JSON text (a parameter the driver saw as an array or jsonb would be sent otherwise).
      const list = await rows<Record<keyof UserFacts, string | null>>(sql`
        select u.id as "userId",
          (select min(ts) from events where project_id = ${projectId} and user_id = u.id) as "firstEvent",
          (select max(ts) from events where project_id = ${projectId} and user_id = u.id) as "lastEvent",
          (select count(*) from events where project_id = ${projectId} and user_id = u.id) as events,
          p.properties, p.created_at as "createdAt", p.updated_at as "updatedAt"
        from jsonb_array_elements_text(${JSON.stringify(userIds)}::text::jsonb) as u(id)
        left join profiles p on p.project_id = ${projectId} and p.user_id = u.id`);
      const n = (v: string | null) => (v === null ? null : Number(v));
      return list
        .map((r) => ({ userId: r.userId!, firstEvent: n(r.firstEvent), lastEvent: n(r.lastEvent), events: Number(r.events), properties: r.properties, createdAt: n(r.createdAt), updatedAt: n(r.updatedAt) }))
        .filter((f) => f.lastEvent !== null || f.updatedAt !== null);
    },

    async matching(filter) {
      return (await rows<{ id: string }>(matchingQuery(filter))).map((r) => r.id);
    },
  };
}

function matchingQuery({ projectId, words = [], properties = [], before, limit }: UserFilter): SQL {
  const terms: SQL[] = [
    // Both sides folded by the database (its lower() and JavaScript's differ on Σ, İ), so text typed as stored matches.
    ...words.map((w) => sql`(strpos(lower(e.id), lower(${w})) > 0 or exists (select 1 from jsonb_each_text(p.properties::jsonb) j where strpos(lower(j.value), lower(${w})) > 0))`),
    ...properties.map(([key, value]) => sql`exists (select 1 from jsonb_each_text(p.properties::jsonb) j where j.key = ${key} and strpos(lower(j.value), lower(${value})) > 0)`),
  ];
  // Every user id of the project's events, one seek each (a loose index scan of the user index);
  // a property term can match only someone identified, so then the profiles alone.
  const everyone = properties.length
    ? sql`select user_id as id from profiles where project_id = ${projectId}`
    : sql`select id from seen where id is not null union select user_id from profiles where project_id = ${projectId}`;
  const after = before ? sql`where (last, id collate "C") < (${before.lastSeen}, ${before.userId} collate "C")` : sql``;
  return sql`with recursive
    seen(id) as (
      select (select min(user_id) from events where project_id = ${projectId} and user_id is not null)
      union all
      select (select min(user_id) from events where project_id = ${projectId} and user_id > seen.id) from seen where seen.id is not null),
    everyone(id) as (${everyone}),
    scored as (
      select e.id, greatest((select max(ts) from events where project_id = ${projectId} and user_id = e.id), p.updated_at) as last
      from everyone e left join profiles p on p.project_id = ${projectId} and p.user_id = e.id
      ${terms.length ? sql`where ${and(...terms)}` : sql``})
    select id from scored ${after} order by last desc, id collate "C" desc limit ${limit}`;
}
