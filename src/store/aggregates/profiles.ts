// User profiles (identify) and groups. Properties merge: a new value replaces the old one, null
// removes the key (the JSON is kept as text; each store merges it with its own JSON functions,
// Sql.mergeJson). The users list and a user's summary are tuned per store (user-list.ts), and so
// is PostgreSQL's identify, which keeps its users search in the same statement (pg/profiles.ts)
// and replaces this one.
import { and, eq, type SQLWrapper } from "drizzle-orm";
import type { Properties } from "../../model/profile.ts";
import type { ProfileRepository } from "../store.ts";
import { listUsers, type UserListSource, userSummary } from "../user-list.ts";
import { hasNul, type Sql } from "./sql.ts";

/** The users list and a user's summary: one walk (user-list.ts) over each store's tuned queries. */
export type ProfileReads = Pick<ProfileRepository, "listUsers" | "summary">;

export function profileReads(source: UserListSource): ProfileReads {
  return {
    listUsers: (filter) => listUsers(source, filter),
    summary: (projectId, userId) => userSummary(source, projectId, userId),
  };
}

export function profileStore({ db, t, mergeJson }: Sql): Omit<ProfileRepository, keyof ProfileReads> {
  const { groupMembers, groups, profiles } = t;
  const parsed = <R extends { properties: string }>(row: R) => ({
    ...row,
    properties: JSON.parse(row.properties) as Properties,
  });
  /** A new row's properties and times, and what merges `properties` into a row already there. */
  const merging = (column: SQLWrapper, properties: Properties, now: number) => {
    const patch = JSON.stringify(properties);
    return {
      values: { properties: mergeJson(null, patch), createdAt: now, updatedAt: now },
      set: { properties: mergeJson(column, patch), updatedAt: now },
    };
  };
  return {
    async identify(projectId, userId, properties, now) {
      const { values, set } = merging(profiles.properties, properties, now);
      await db
        .insert(profiles)
        .values({ projectId, userId, ...values })
        .onConflictDoUpdate({ target: [profiles.projectId, profiles.userId], set });
    },

    async find(projectId, userId) {
      if (hasNul(userId)) return null;
      const [row] = await db
        .select()
        .from(profiles)
        .where(and(eq(profiles.projectId, projectId), eq(profiles.userId, userId)))
        .limit(1);
      return row ? parsed(row) : null;
    },

    async group(projectId, groupId, properties, now) {
      const { values, set } = merging(groups.properties, properties, now);
      await db
        .insert(groups)
        .values({ projectId, groupId, ...values })
        .onConflictDoUpdate({ target: [groups.projectId, groups.groupId], set });
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
      return rows.map(parsed);
    },
  };
}
