// Dashboard users, the projects a limited one may see, and their sessions.
import { and, asc, count, eq, gt, inArray, lt, ne } from "drizzle-orm";
import type { Role, User } from "../../model/user.ts";
import type { UserRepository } from "../store.ts";
import { batchOf, type Ctx } from "./context.ts";
import { projects, sessions, userProjects, users } from "./schema.ts";

const publicColumns = {
  id: users.id,
  username: users.username,
  role: users.role,
  limited: users.limited,
  createdAt: users.createdAt,
  updatedAt: users.updatedAt,
};

type Row = { id: number; limited: boolean };

export function userStore(ctx: Ctx): UserRepository {
  const { db } = ctx;

  /** The names of each limited user's projects, sorted. */
  async function namesOf(ids: number[]): Promise<Map<number, string[]>> {
    const out = new Map<number, string[]>(ids.map((id) => [id, []]));
    if (!ids.length) return out;
    const rows = await db
      .select({ userId: userProjects.userId, name: projects.name })
      .from(userProjects)
      .innerJoin(projects, eq(projects.id, userProjects.projectId))
      .where(inArray(userProjects.userId, ids))
      .orderBy(asc(projects.name));
    for (const r of rows) out.get(r.userId)!.push(r.name);
    return out;
  }

  async function withProjects<R extends Row>(
    rows: R[],
  ): Promise<(Omit<R, "limited"> & { projects: string[] | null })[]> {
    const names = await namesOf(rows.filter((r) => r.limited).map((r) => r.id));
    return rows.map(({ limited, ...row }) => ({ ...row, projects: limited ? names.get(row.id)! : null }));
  }

  async function limitTo(userId: number, projectIds: number[] | null): Promise<void> {
    await db.delete(userProjects).where(eq(userProjects.userId, userId));
    if (projectIds?.length)
      await db
        .insert(userProjects)
        .values(projectIds.map((projectId) => ({ userId, projectId })))
        .onConflictDoNothing();
  }

  return {
    async count() {
      return (await db.select({ n: count() }).from(users))[0]?.n ?? 0;
    },

    async create(u, now) {
      const { projectIds = null, ...fields } = u;
      const [row] = await db
        .insert(users)
        .values({ ...fields, limited: projectIds !== null, createdAt: now, updatedAt: now })
        .onConflictDoNothing()
        .returning(publicColumns);
      if (!row) return null;
      await limitTo(row.id, projectIds);
      return (await withProjects([row]))[0]!;
    },

    async findByUsername(username) {
      const rows = await db
        .select({ ...publicColumns, passwordHash: users.passwordHash })
        .from(users)
        .where(eq(users.username, username))
        .limit(1);
      return (await withProjects(rows))[0] ?? null;
    },

    async findById(id) {
      return (
        (await withProjects(await db.select(publicColumns).from(users).where(eq(users.id, id)).limit(1)))[0] ?? null
      );
    },

    async list() {
      return withProjects(await db.select(publicColumns).from(users).orderBy(asc(users.username)));
    },

    async setPassword(id, passwordHash, now) {
      await db.update(users).set({ passwordHash, updatedAt: now }).where(eq(users.id, id));
    },

    async setRole(id, role: Role, now) {
      batchOf(ctx).accessChanged(); // open pages are checked again
      await db.update(users).set({ role, updatedAt: now }).where(eq(users.id, id));
    },

    async setProjects(id, projectIds, now) {
      batchOf(ctx).accessChanged();
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
      batchOf(ctx).accessChanged(); // their sessions go with them
      await db.delete(users).where(eq(users.id, id));
    },

    async createSession(s) {
      await db.insert(sessions).values(s);
    },

    async sessionActive(sessionId, now) {
      return (
        (
          await db
            .select({ id: sessions.id })
            .from(sessions)
            .where(and(eq(sessions.id, sessionId), gt(sessions.expiresAt, now)))
            .limit(1)
        ).length > 0
      );
    },

    async findSession(tokenHash, now) {
      const [row] = await db
        .select({
          sessionId: sessions.id,
          csrfToken: sessions.csrfToken,
          expiresAt: sessions.expiresAt,
          ...publicColumns,
        })
        .from(sessions)
        .innerJoin(users, eq(users.id, sessions.userId))
        .where(and(eq(sessions.tokenHash, tokenHash), gt(sessions.expiresAt, now)))
        .limit(1);
      if (!row) return null;
      const { sessionId, csrfToken, expiresAt, ...rest } = row;
      const user: User = (await withProjects([rest]))[0]!;
      return { sessionId, csrfToken, expiresAt, user };
    },

    async deleteSession(tokenHash) {
      batchOf(ctx).accessChanged();
      await db.delete(sessions).where(eq(sessions.tokenHash, tokenHash));
    },

    async deleteSessionsOf(userId, except) {
      batchOf(ctx).accessChanged();
      await db
        .delete(sessions)
        .where(and(eq(sessions.userId, userId), except === undefined ? undefined : ne(sessions.id, except)));
    },

    async deleteExpiredSessions(now) {
      return (await db.delete(sessions).where(lt(sessions.expiresAt, now)).returning({ id: sessions.id })).length;
    },

    async activeSessions(userId, now) {
      return (
        (
          await db
            .select({ n: count() })
            .from(sessions)
            .where(and(eq(sessions.userId, userId), gt(sessions.expiresAt, now)))
        )[0]?.n ?? 0
      );
    },
  };
}
