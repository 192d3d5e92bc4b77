// Dashboard users and their sessions.
import { and, asc, count, eq, gt, lt } from "drizzle-orm";
import type { Db } from "./db.ts";
import { sessions, users } from "./schema.ts";
import type { User, UserRecord } from "../../model/user.ts";

export type SessionRow = typeof sessions.$inferSelect;

const publicColumns = { id: users.id, username: users.username, role: users.role, createdAt: users.createdAt, updatedAt: users.updatedAt };

export function userStore(db: Db, accessChanges: { count: number }) {
  const bySession = db.$client.prepare<{ sessionId: number; csrfToken: string; expiresAt: number; id: number; username: string; role: "owner" | "member"; createdAt: number; updatedAt: number }, [string, number]>(
    `SELECT s.id AS sessionId, s.csrf_token AS csrfToken, s.expires_at AS expiresAt, u.id, u.username, u.role, u.created_at AS createdAt, u.updated_at AS updatedAt
       FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = ? AND s.expires_at > ?`,
  );

  return {
    count(): number {
      return db.select({ n: count() }).from(users).get()?.n ?? 0;
    },

    /** Returns null when the username is taken. */
    create(u: { username: string; passwordHash: string; role: "owner" | "member" }, now: number): User | null {
      return db.insert(users).values({ ...u, createdAt: now, updatedAt: now }).onConflictDoNothing().returning(publicColumns).get() ?? null;
    },

    findByUsername(username: string): UserRecord | null {
      return db.select().from(users).where(eq(users.username, username)).get() ?? null;
    },

    findById(id: number): User | null {
      return db.select(publicColumns).from(users).where(eq(users.id, id)).get() ?? null;
    },

    list(): User[] {
      return db.select(publicColumns).from(users).orderBy(asc(users.username)).all();
    },

    setPassword(id: number, passwordHash: string, now: number): void {
      db.update(users).set({ passwordHash, updatedAt: now }).where(eq(users.id, id)).run();
    },

    delete(id: number): void {
      accessChanges.count++; // their sessions go with them
      db.delete(users).where(eq(users.id, id)).run();
    },

    createSession(s: { tokenHash: string; userId: number; csrfToken: string; createdAt: number; expiresAt: number }): void {
      db.insert(sessions).values(s).run();
    },

    /** Whether the session is still there and not expired. */
    sessionActive(sessionId: number, now: number): boolean {
      return db.select({ id: sessions.id }).from(sessions).where(and(eq(sessions.id, sessionId), gt(sessions.expiresAt, now))).get() !== undefined;
    },

    /** The live session with that token hash and its user, or null (unknown or expired). */
    findSession(tokenHash: string, now: number): { sessionId: number; csrfToken: string; expiresAt: number; user: User } | null {
      const row = bySession.get(tokenHash, now);
      if (!row) return null;
      const { sessionId, csrfToken, expiresAt, ...user } = row;
      return { sessionId, csrfToken, expiresAt, user };
    },

    deleteSession(tokenHash: string): void {
      accessChanges.count++;
      db.delete(sessions).where(eq(sessions.tokenHash, tokenHash)).run();
    },

    deleteSessionsOf(userId: number): void {
      accessChanges.count++;
      db.delete(sessions).where(eq(sessions.userId, userId)).run();
    },

    deleteExpiredSessions(now: number): number {
      return db.delete(sessions).where(lt(sessions.expiresAt, now)).returning({ id: sessions.id }).all().length;
    },

    activeSessions(userId: number, now: number): number {
      return db.select({ n: count() }).from(sessions).where(and(eq(sessions.userId, userId), gt(sessions.expiresAt, now))).get()?.n ?? 0;
    },
  };
}

export type UserStore = ReturnType<typeof userStore>;
