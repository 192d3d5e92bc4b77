// User profiles (identify) and groups. Properties merge: a new value replaces the old one, null
// removes the key (the JSON is kept as text, as sent; jsonb only does the merge). identify keeps
// the users search's rows of the properties it sends in the same statement (users-search.ts).
import { hasNul } from "../aggregates/sql.ts";
import { and, eq, sql } from "drizzle-orm";
import type { Properties } from "../../model/profile.ts";
import { listUsers, userSummary } from "../user-list.ts";
import type { ProfileRepository } from "../store.ts";
import { batchOf, type Ctx } from "./context.ts";
import { groupMembers, groups, profiles } from "./schema.ts";
import { userListSource } from "./users-list.ts";
import { patchParts } from "./users-search.ts";

/** `old` with `patch` merged in, nulls removing keys. */
// The patch goes as text, then to jsonb: a parameter the driver saw as jsonb would be sent as a JSON string.
const merged = (old: unknown, patch: string) =>
  sql`jsonb_strip_nulls(coalesce(${old}, '{}')::jsonb || ${patch}::text::jsonb)::text`;

export function profileStore(ctx: Ctx): ProfileRepository {
  const { db } = ctx;
  const users = userListSource(db);
  return {
    listUsers(filter) {
      return listUsers(users, filter);
    },

    summary(projectId, userId) {
      return userSummary(users, projectId, userId);
    },

    async identify(projectId, userId, properties, now) {
      const patch = JSON.stringify(properties);
      const { parts, gone } = patchParts(userId, properties);
      // One round trip. A property sent as it was writes no search row (and no index entry).
      await db.execute(sql`
        with profile as (
          insert into profiles (project_id, user_id, properties, created_at, updated_at)
          values (${projectId}, ${userId}, ${merged(null, patch)}, ${now}, ${now})
          on conflict (project_id, user_id) do update set properties = ${merged(sql`profiles.properties`, patch)}, updated_at = ${now}),
        gone as (
          delete from user_search
           where project_id = ${projectId} and user_id = ${userId} and part in (select jsonb_array_elements_text(${JSON.stringify(gone)}::text::jsonb))),
        parts as (
          insert into user_search (project_id, user_id, part, words)
          select ${projectId}, ${userId}, t.part, t.words from jsonb_to_recordset(${JSON.stringify(parts)}::text::jsonb) as t(part text, words text)
          on conflict (project_id, user_id, part) do update set words = excluded.words where user_search.words is distinct from excluded.words)
        select 1`);
      batchOf(ctx).found({ user: { projectId, userId } });
    },

    async find(projectId, userId) {
      if (hasNul(userId)) return null;
      const [row] = await db
        .select()
        .from(profiles)
        .where(and(eq(profiles.projectId, projectId), eq(profiles.userId, userId)))
        .limit(1);
      return row ? { ...row, properties: JSON.parse(row.properties) as Properties } : null;
    },

    async group(projectId, groupId, properties, now) {
      const patch = JSON.stringify(properties);
      await db
        .insert(groups)
        .values({ projectId, groupId, properties: merged(null, patch), createdAt: now, updatedAt: now })
        .onConflictDoUpdate({
          target: [groups.projectId, groups.groupId],
          set: { properties: merged(groups.properties, patch), updatedAt: now },
        });
    },

    async addMember(projectId, groupId, userId, now) {
      await db.insert(groupMembers).values({ projectId, groupId, userId, createdAt: now }).onConflictDoNothing();
    },

    async groupsOf(projectId, userId) {
      const rows = await db
        .select({ groupId: groups.groupId, properties: groups.properties })
        .from(groupMembers)
        .innerJoin(groups, and(eq(groups.projectId, groupMembers.projectId), eq(groups.groupId, groupMembers.groupId)))
        .where(and(eq(groupMembers.projectId, projectId), eq(groupMembers.userId, userId)));
      return rows.map((g) => ({ groupId: g.groupId, properties: JSON.parse(g.properties) as Properties }));
    },
  };
}
