// Dashboard users, the projects a limited one may see, and their sessions.
import { and, asc, count, eq, gt, lt, ne } from "drizzle-orm";
import type { Db } from "./db.ts";
import { sessions, userProjects, users } from "./schema.ts";
import type { Role, User, UserRecord } from "../../model/user.ts";

const publicColumns = {
  id: users.id,
  username: users.username,
  role: users.role,
  limited: users.limited,
  createdAt: users.createdAt,
  updatedAt: users.updatedAt,
};

type Row = {
  id: number;
  username: string;
  role: Role;
  limited: boolean | number;
  createdAt: number;
  updatedAt: number;
};

export function userStore(db: Db, accessChanges: { count: number }) {
  const bySession = db.$client.prepare<
    Row & { sessionId: number; csrfToken: string; expiresAt: number },
    [string, number]
  >(
    `SELECT s.id AS sessionId, s.csrf_token AS csrfToken, s.expires_at AS expiresAt, u.id, u.username, u.role, u.limited, u.created_at AS createdAt, u.updated_at AS updatedAt
       FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = ? AND s.expires_at > ?`,
  );
  const projectsOf = db.$client.prepare<{ name: string }, [number]>(
    "SELECT p.name FROM user_projects up JOIN projects p ON p.id = up.project_id WHERE up.user_id = ? ORDER BY p.name",
  );

  /** A row as a User: the names of a limited user's projects (every request of theirs asks: one indexed read). */
  function user<R extends Row>({ limited, ...row }: R): Omit<R, "limited"> & { projects: string[] | null } {
    return { ...row, projects: limited ? projectsOf.all(row.id).map((p) => p.name) : null };
  }

  function limitTo(userId: number, projectIds: number[] | null): void {
    db.delete(userProjects).where(eq(userProjects.userId, userId)).run();
    if (projectIds?.length)
      db.insert(userProjects)
        .values(projectIds.map((projectId) => ({ userId, projectId })))
        .onConflictDoNothing()
        .run();
  }

  return {
    count(): number {
      return db.select({ n: count() }).from(users).get()?.n ?? 0;
    },

    /** Returns null when the username is taken. */
    create(
      u: { username: string; passwordHash: string; role: Role; projectIds?: number[] | null },
      now: number,
    ): User | null {
      const { projectIds = null, ...fields } = u;
      const row = db
        .insert(users)
        .values({ ...fields, limited: projectIds !== null, createdAt: now, updatedAt: now })
        .onConflictDoNothing()
        .returning(publicColumns)
        .get();
      if (!row) return null;
      limitTo(row.id, projectIds);
      return user(row);
    },

    findByUsername(username: string): UserRecord | null {
      const row = db
        .select({ ...publicColumns, passwordHash: users.passwordHash })
        .from(users)
        .where(eq(users.username, username))
        .get();
      return row ? user(row) : null;
    },

    findById(id: number): User | null {
      const row = db.select(publicColumns).from(users).where(eq(users.id, id)).get();
      return row ? user(row) : null;
    },

    list(): User[] {
      return db.select(publicColumns).from(users).orderBy(asc(users.username)).all().map(user);
    },

    setPassword(id: number, passwordHash: string, now: number): void {
      db.update(users).set({ passwordHash, updatedAt: now }).where(eq(users.id, id)).run();
    },

    setRole(id: number, role: Role, now: number): void {
      accessChanges.count++; // open pages are checked again
      db.update(users).set({ role, updatedAt: now }).where(eq(users.id, id)).run();
    },

    setProjects(id: number, projectIds: number[] | null, now: number): void {
      accessChanges.count++;
      db.update(users)
        .set({ limited: projectIds !== null, updatedAt: now })
        .where(eq(users.id, id))
        .run();
      limitTo(id, projectIds);
    },

    addProject(id: number, projectId: number): void {
      const limited = db.select({ limited: users.limited }).from(users).where(eq(users.id, id)).get()?.limited;
      if (limited) db.insert(userProjects).values({ userId: id, projectId }).onConflictDoNothing().run();
    },

    limitedReach(): { userId: number; projectIds: number[] }[] {
      const rows = db
        .select({ userId: users.id, projectId: userProjects.projectId })
        .from(users)
        .leftJoin(userProjects, eq(userProjects.userId, users.id))
        .where(eq(users.limited, true))
        .all();
      const reach = new Map<number, number[]>();
      for (const r of rows) {
        const list = reach.get(r.userId) ?? reach.set(r.userId, []).get(r.userId)!;
        if (r.projectId !== null) list.push(r.projectId);
      }
      return [...reach].map(([userId, projectIds]) => ({ userId, projectIds }));
    },

    delete(id: number): void {
      accessChanges.count++; // their sessions go with them
      db.delete(users).where(eq(users.id, id)).run();
    },

    createSession(s: {
      tokenHash: string;
      userId: number;
      csrfToken: string;
      createdAt: number;
      expiresAt: number;
    }): void {
      db.insert(sessions).values(s).run();
    },

    /** Whether the session is still there and not expired. */
    sessionActive(sessionId: number, now: number): boolean {
      return (
        db
          .select({ id: sessions.id })
          .from(sessions)
          .where(and(eq(sessions.id, sessionId), gt(sessions.expiresAt, now)))
          .get() !== undefined
      );
    },

    /** The live session with that token hash and its user, or null (unknown or expired). */
    findSession(
      tokenHash: string,
      now: number,
    ): { sessionId: number; csrfToken: string; expiresAt: number; user: User } | null {
      const row = bySession.get(tokenHash, now);
      if (!row) return null;
      const { sessionId, csrfToken, expiresAt, ...rest } = row;
      return { sessionId, csrfToken, expiresAt, user: user(rest) };
    },

    deleteSession(tokenHash: string): void {
      accessChanges.count++;
      db.delete(sessions).where(eq(sessions.tokenHash, tokenHash)).run();
    },

    deleteSessionsOf(userId: number, except?: number): void {
      accessChanges.count++;
      db.delete(sessions)
        .where(and(eq(sessions.userId, userId), except === undefined ? undefined : ne(sessions.id, except)))
        .run();
    },

    deleteExpiredSessions(now: number): number {
      return db.delete(sessions).where(lt(sessions.expiresAt, now)).returning({ id: sessions.id }).all().length;
    },

    activeSessions(userId: number, now: number): number {
      return (
        db
          .select({ n: count() })
          .from(sessions)
          .where(and(eq(sessions.userId, userId), gt(sessions.expiresAt, now)))
          .get()?.n ?? 0
      );
    },
  };
}
