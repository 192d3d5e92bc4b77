// User profiles (identify) and groups. Properties merge as a JSON merge patch: a new value
// replaces the old one, null removes the key. The users search's index follows profiles by
// itself (triggers record what changed; users-index.ts).
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "./db.ts";
import { groupMembers, groups, profiles } from "./schema.ts";
import type { Profile, Properties, UserFilter, UserSummary } from "../../model/profile.ts";
import { listUsers, userSummary } from "../user-list.ts";
import { userListSource } from "./users-list.ts";

/** `searching` is the connection that can see the users index (see search.ts). */
export function profileStore(db: Db, searching: () => Db) {
  const users = userListSource(db, searching);
  return {
    listUsers(filter: UserFilter): Promise<UserSummary[]> {
      return listUsers(users, filter);
    },

    summary(projectId: number, userId: string): Promise<UserSummary | null> {
      return userSummary(users, projectId, userId);
    },

    identify(projectId: number, userId: string, properties: Properties, now: number): void {
      db.insert(profiles)
        .values({
          projectId,
          userId,
          properties: sql`json_patch('{}', ${JSON.stringify(properties)})`,
          createdAt: now,
          updatedAt: now,
        })
        .onConflictDoUpdate({
          target: [profiles.projectId, profiles.userId],
          // The patch as sent: `excluded` holds it with its nulls already applied to {}, that is, dropped.
          set: { properties: sql`json_patch(${profiles.properties}, ${JSON.stringify(properties)})`, updatedAt: now },
        })
        .run();
    },

    find(projectId: number, userId: string): Profile | null {
      const row = db
        .select()
        .from(profiles)
        .where(and(eq(profiles.projectId, projectId), eq(profiles.userId, userId)))
        .get();
      return row ? { ...row, properties: JSON.parse(row.properties) as Properties } : null;
    },

    group(projectId: number, groupId: string, properties: Properties, now: number): void {
      db.insert(groups)
        .values({
          projectId,
          groupId,
          properties: sql`json_patch('{}', ${JSON.stringify(properties)})`,
          createdAt: now,
          updatedAt: now,
        })
        .onConflictDoUpdate({
          target: [groups.projectId, groups.groupId],
          // The patch as sent: `excluded` holds it with its nulls already applied to {}, that is, dropped.
          set: { properties: sql`json_patch(${groups.properties}, ${JSON.stringify(properties)})`, updatedAt: now },
        })
        .run();
    },

    addMember(projectId: number, groupId: string, userId: string, now: number): void {
      db.insert(groupMembers).values({ projectId, groupId, userId, createdAt: now }).onConflictDoNothing().run();
    },

    groupsOf(projectId: number, userId: string): { groupId: string; properties: Properties }[] {
      return db
        .select({ groupId: groups.groupId, properties: groups.properties })
        .from(groupMembers)
        .innerJoin(groups, and(eq(groups.projectId, groupMembers.projectId), eq(groups.groupId, groupMembers.groupId)))
        .where(and(eq(groupMembers.projectId, projectId), eq(groupMembers.userId, userId)))
        .all()
        .map((g) => ({ groupId: g.groupId, properties: JSON.parse(g.properties) as Properties }));
    },
  };
}
