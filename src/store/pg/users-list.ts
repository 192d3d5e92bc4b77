// The users page's queries on PostgreSQL (the walk and the search around them: store/user-list.ts);
// a search reads the users index (users-search.ts).
// User ids compare as "C" (code points) where the list's order depends on them, as in SQLite and
// in the walk's own sort, whatever the database's collation.
import { sql } from "drizzle-orm";
import { listQueries, type Seen, type UserFacts, type UserListSource } from "../user-list.ts";
import { userAtoms } from "../user-search.ts";
import { type PgDb, rowsOn } from "./db.ts";
import { type Condition, conditions, countOf, holds, rowsOf } from "./users-search.ts";

export function userListSource(db: PgDb): UserListSource {
  const rows = rowsOn(db);

  /** Those of `userIds` who meet every condition: each user's rows, by the primary key. */
  async function among(projectId: number, list: Condition[], userIds: string[]): Promise<string[]> {
    const found = await rows<{ id: string }>(sql`
      select u.id from jsonb_array_elements_text(${JSON.stringify(userIds)}::text::jsonb) as u(id)
       where ${sql.join(
         list.map((c) => holds(projectId, c, sql`u.id`)),
         sql` and `,
       )}`);
    return found.map((r) => r.id);
  }

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
        .map((r) => ({
          userId: r.userId!,
          firstEvent: n(r.firstEvent),
          lastEvent: n(r.lastEvent),
          events: Number(r.events),
          properties: r.properties,
          createdAt: n(r.createdAt),
          updatedAt: n(r.updatedAt),
        }))
        .filter((f) => f.lastEvent !== null || f.updatedAt !== null);
    },

    async everyone(filter) {
      return (await rows<{ id: string }>(usersInOrder.everyone(filter))).map((r) => r.id);
    },

    async matching(filter, cap = Number.POSITIVE_INFINITY) {
      const { projectId } = filter;
      const list = conditions(userAtoms(filter.terms));
      // The narrowest condition finds the candidates (the GIN index); the others are checked per
      // candidate. In steps, each with its candidates as a parameter: in one query the planner
      // multiplies its guesses of them into a cost it compiles a plan for (JIT, a hundred
      // milliseconds), for a few milliseconds of work.
      let order = list;
      if (Number.isFinite(cap)) {
        const [counts] = await rows<Record<string, string | null>>(
          sql`select ${sql.join(
            list.map((c, i) => sql`(${countOf(projectId, c, cap + 1)}) as ${sql.identifier(`n${i}`)}`),
            sql`, `,
          )}`,
        );
        const counted = list
          .map((c, i) => ({ c, n: counts![`n${i}`] == null ? Number.POSITIVE_INFINITY : Number(counts![`n${i}`]) }))
          .sort((a, b) => a.n - b.n);
        if (counted[0]!.n > cap) return null;
        order = counted.map((x) => x.c);
      }
      const [driver, ...others] = order;
      let ids = (
        await rows<{ id: string }>(
          sql`select distinct s.user_id as id from user_search s where ${rowsOf(projectId, driver!)}`,
        )
      ).map((r) => r.id);
      if (others.length && ids.length) ids = await among(projectId, others, ids);
      return (
        await rows<{ id: string }>(
          usersInOrder.ordered(filter, sql`select jsonb_array_elements_text(${JSON.stringify(ids)}::text::jsonb)`),
        )
      ).map((r) => r.id);
    },

    matcher({ projectId, terms }) {
      const list = conditions(userAtoms(terms));
      return (userIds) => among(projectId, list, userIds);
    },
  };
}

/** The users in the list's order on PostgreSQL. */
const usersInOrder = listQueries({
  last: (projectId, id) =>
    sql`greatest((select max(ts) from events where project_id = ${projectId} and user_id = ${id}), p.updated_at)`,
  after: (before) => sql`(last, id collate "C") < (${before.lastSeen}, ${before.userId} collate "C")`,
  id: sql`id collate "C"`,
});
