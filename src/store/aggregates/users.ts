// Dashboard users, the projects a limited one may see, and their sessions.
import { and, asc, count, eq, gt, lt, ne, type SQL } from "drizzle-orm";
import type { User } from "../../model/user.ts";
import type { UserRepository } from "../store.ts";
import { withProjects } from "./reach.ts";
import type { Sql } from "./sql.ts";

export function userStore(sql: Sql): UserRepository {
  const { db, t, accessChanged } = sql;
  const { sessions, userProjects, users } = t;
  const columns = {
    id: users.id,
    username: users.username,
    role: users.role,
    limited: users.limited,
    createdAt: users.createdAt,
    updatedAt: users.updatedAt,
  };
  /** Rows as users: the names of a limited user's projects (every request of theirs asks: one indexed read). */
  const withTheirs = <R extends { id: number; limited: boolean }>(rows: R[]) =>
    withProjects(sql, { owner: userProjects.userId, project: userProjects.projectId }, rows);
  const one = async (where: SQL) =>
    (await withTheirs(await db.select(columns).from(users).where(where).limit(1)))[0] ?? null;

  async function limitTo(userId: number, projectIds: number[] | null): Promise<void> {
    await db.delete(userProjects).where(eq(userProjects.userId, userId));
    if (projectIds?.length)
      await db
        .insert(userProjects)
        .values(projectIds.map((projectId) => ({ userId, projectId })))
        .onConflictDoNothing();
  }

  /** What a `count()` query answered. */
  const counted = async (rows: Promise<{ n: number }[]>) => (await rows)[0]?.n ?? 0;

  return {
    count: () => counted(db.select({ n: count() }).from(users)),

    async create(u, now) {
      const { projectIds = null, ...fields } = u;
      const [row] = await db
        .insert(users)
        .values({ ...fields, limited: projectIds !== null, createdAt: now, updatedAt: now })
        .onConflictDoNothing()
        .returning(columns);
      if (!row) return null;
      await limitTo(row.id, projectIds);
      return (await withTheirs([row]))[0]!;
    },

    async findByUsername(username) {
      const rows = await db
        .select({ ...columns, passwordHash: users.passwordHash })
        .from(users)
        .where(eq(users.username, username))
        .limit(1);
      return (await withTheirs(rows))[0] ?? null;
    },

    findById: (id) => one(eq(users.id, id)),

    findBySubject: (subject) => one(eq(users.oidcSubject, subject)),

    async subjectOf(id) {
      const [row] = await db.select({ subject: users.oidcSubject }).from(users).where(eq(users.id, id)).limit(1);
      return row?.subject ?? null;
    },

    async linkSubject(id, subject, now) {
      const [taken] = await db
        .select({ id: users.id })
        .from(users)
        .where(and(eq(users.oidcSubject, subject), ne(users.id, id)))
        .limit(1);
      if (taken) return false;
      await db.update(users).set({ oidcSubject: subject, updatedAt: now }).where(eq(users.id, id));
      return true;
    },

    async list() {
      return withTheirs(await db.select(columns).from(users).orderBy(asc(users.username)));
    },

    async setPassword(id, passwordHash, now) {
      await db.update(users).set({ passwordHash, updatedAt: now }).where(eq(users.id, id));
    },

    async setRole(id, role, now) {
      accessChanged(); // open pages are checked again
      await db.update(users).set({ role, updatedAt: now }).where(eq(users.id, id));
    },

    async setProjects(id, projectIds, now) {
      accessChanged();
      await db
        .update(users)
        .set({ limited: projectIds !== null, updatedAt: now })
        .where(eq(users.id, id));
      await limitTo(id, projectIds);
    },

    async addProject(id, projectId) {
      const [row] = await db.select({ limited: users.limited }).from(users).where(eq(users.id, id)).limit(1);
      if (row?.limited) await db.insert(userProjects).values({ userId: id, projectId }).onConflictDoNothing();
    },

    async limitedReach() {
      const rows = await db
        .select({ userId: users.id, projectId: userProjects.projectId })
        .from(users)
        .leftJoin(userProjects, eq(userProjects.userId, users.id))
        .where(eq(users.limited, true));
      const reach = new Map<number, number[]>();
      for (const r of rows) {
        const list = reach.get(r.userId) ?? reach.set(r.userId, []).get(r.userId)!;
        if (r.projectId !== null) list.push(r.projectId);
      }
      return [...reach].map(([userId, projectIds]) => ({ userId, projectIds }));
    },

    async delete(id) {
      accessChanged(); // their sessions go with them
      await db.delete(users).where(eq(users.id, id));
    },

    async createSession(s) {
      await db.insert(sessions).values(s);
    },

    async sessionActive(sessionId, now) {
      const [row] = await db
        .select({ id: sessions.id })
        .from(sessions)
        .where(and(eq(sessions.id, sessionId), gt(sessions.expiresAt, now)))
        .limit(1);
      return row !== undefined;
    },

    async findSession(tokenHash, now) {
      const [row] = await db
        .select({ sessionId: sessions.id, csrfToken: sessions.csrfToken, expiresAt: sessions.expiresAt, ...columns })
        .from(sessions)
        .innerJoin(users, eq(users.id, sessions.userId))
        .where(and(eq(sessions.tokenHash, tokenHash), gt(sessions.expiresAt, now)))
        .limit(1);
      if (!row) return null;
      const { sessionId, csrfToken, expiresAt, ...rest } = row;
      const user: User = (await withTheirs([rest]))[0]!;
      return { sessionId, csrfToken, expiresAt, user };
    },

    async deleteSession(tokenHash) {
      accessChanged();
      await db.delete(sessions).where(eq(sessions.tokenHash, tokenHash));
    },

    async deleteSessionsOf(userId, except) {
      accessChanged();
      await db
        .delete(sessions)
        .where(and(eq(sessions.userId, userId), except === undefined ? undefined : ne(sessions.id, except)));
    },

    async deleteExpiredSessions(now) {
      return (await db.delete(sessions).where(lt(sessions.expiresAt, now)).returning({ id: sessions.id })).length;
    },

    activeSessions: (userId, now) =>
      counted(
        db
          .select({ n: count() })
          .from(sessions)
          .where(and(eq(sessions.userId, userId), gt(sessions.expiresAt, now))),
      ),
  };
}
