// Dashboard users and their sessions.
import { and, asc, count, eq, gt, lt } from "drizzle-orm";
import type { UserRepository } from "../store.ts";
import { batchOf, type Ctx } from "./context.ts";
import { sessions, users } from "./schema.ts";

const publicColumns = { id: users.id, username: users.username, role: users.role, createdAt: users.createdAt, updatedAt: users.updatedAt };

export function userStore(ctx: Ctx): UserRepository {
  const { db } = ctx;
  return {
    async count() {
      return (await db.select({ n: count() }).from(users))[0]?.n ?? 0;
    },

    async create(u, now) {
      return (await db.insert(users).values({ ...u, createdAt: now, updatedAt: now }).onConflictDoNothing().returning(publicColumns))[0] ?? null;
    },

    async findByUsername(username) {
      return (await db.select().from(users).where(eq(users.username, username)).limit(1))[0] ?? null;
    },

    async findById(id) {
      return (await db.select(publicColumns).from(users).where(eq(users.id, id)).limit(1))[0] ?? null;
    },

    async list() {
      return db.select(publicColumns).from(users).orderBy(asc(users.username));
    },

    async setPassword(id, passwordHash, now) {
      await db.update(users).set({ passwordHash, updatedAt: now }).where(eq(users.id, id));
    },

    async delete(id) {
      batchOf(ctx).accessChanged(); // their sessions go with them
      await db.delete(users).where(eq(users.id, id));
    },

    async createSession(s) {
      await db.insert(sessions).values(s);
    },

    async sessionActive(sessionId, now) {
      return (await db.select({ id: sessions.id }).from(sessions).where(and(eq(sessions.id, sessionId), gt(sessions.expiresAt, now))).limit(1)).length > 0;
    },

    async findSession(tokenHash, now) {
      const [row] = await db
        .select({ sessionId: sessions.id, csrfToken: sessions.csrfToken, expiresAt: sessions.expiresAt, ...publicColumns })
        .from(sessions)
        .innerJoin(users, eq(users.id, sessions.userId))
        .where(and(eq(sessions.tokenHash, tokenHash), gt(sessions.expiresAt, now)))
        .limit(1);
      if (!row) return null;
      const { sessionId, csrfToken, expiresAt, ...user } = row;
      return { sessionId, csrfToken, expiresAt, user };
    },

    async deleteSession(tokenHash) {
      batchOf(ctx).accessChanged();
      await db.delete(sessions).where(eq(sessions.tokenHash, tokenHash));
    },

    async deleteSessionsOf(userId) {
      batchOf(ctx).accessChanged();
      await db.delete(sessions).where(eq(sessions.userId, userId));
    },

    async deleteExpiredSessions(now) {
      return (await db.delete(sessions).where(lt(sessions.expiresAt, now)).returning({ id: sessions.id })).length;
    },

    async activeSessions(userId, now) {
      return (await db.select({ n: count() }).from(sessions).where(and(eq(sessions.userId, userId), gt(sessions.expiresAt, now))))[0]?.n ?? 0;
    },
  };
}
