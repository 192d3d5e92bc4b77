// API tokens: only a hash of each token is stored.
import { and, desc, eq, isNull } from "drizzle-orm";
import type { Db } from "./db.ts";
import { apiTokens, projects } from "./schema.ts";
import type { NewToken, TokenRecord } from "../../model/token.ts";


export function tokenStore(db: Db, accessChanges: { count: number }) {
  const columns = {
    id: apiTokens.id,
    name: apiTokens.name,
    kind: apiTokens.kind,
    projectId: apiTokens.projectId,
    project: projects.name,
    channel: apiTokens.channel,
    prefix: apiTokens.prefix,
    hash: apiTokens.hash,
    mayNotify: apiTokens.mayNotify,
    createdBy: apiTokens.createdBy,
    createdByUserId: apiTokens.createdByUserId,
    createdAt: apiTokens.createdAt,
    lastUsedAt: apiTokens.lastUsedAt,
    revokedAt: apiTokens.revokedAt,
  };
  const select = () => db.select(columns).from(apiTokens).leftJoin(projects, eq(projects.id, apiTokens.projectId));
  // Every API request reads its token: plain prepared statements, and no join (a join costs bun:sqlite
  // several times a primary-key lookup, even when no row matches).
  const byPrefix = db.$client.prepare<Omit<TokenRecord, "project">, [string]>(
    `SELECT id, name, kind, project_id AS projectId, channel, prefix, hash, may_notify AS mayNotify, created_by AS createdBy,
            created_by_user_id AS createdByUserId, created_at AS createdAt, last_used_at AS lastUsedAt, revoked_at AS revokedAt
       FROM api_tokens WHERE prefix = ?`,
  );
  const projectName = db.$client.prepare<{ name: string }, [number]>("SELECT name FROM projects WHERE id = ?");

  return {
    insert(token: NewToken): TokenRecord {
      const { id } = db.insert(apiTokens).values(token).returning({ id: apiTokens.id }).get();
      return select().where(eq(apiTokens.id, id)).get()!;
    },

    findByPrefix(prefix: string): TokenRecord | null {
      const row = byPrefix.get(prefix);
      if (!row) return null;
      return { ...row, mayNotify: Boolean(row.mayNotify), project: row.projectId === null ? null : (projectName.get(row.projectId)?.name ?? null) };
    },

    findById(id: number): TokenRecord | null {
      return select().where(eq(apiTokens.id, id)).get() ?? null;
    },

    list(includeRevoked = false): TokenRecord[] {
      const query = select().orderBy(desc(apiTokens.createdAt), desc(apiTokens.id));
      return (includeRevoked ? query : query.where(isNull(apiTokens.revokedAt))).all();
    },

    revoke(id: number, now: number): boolean {
      accessChanges.count++;
      const changed = db.update(apiTokens).set({ revokedAt: now }).where(and(eq(apiTokens.id, id), isNull(apiTokens.revokedAt))).returning({ id: apiTokens.id }).all();
      return changed.length > 0;
    },

    /** Revokes the live tokens a member created; returns how many. */
    revokeCreatedBy(userId: number, now: number): number {
      accessChanges.count++;
      return db.update(apiTokens).set({ revokedAt: now }).where(and(eq(apiTokens.createdByUserId, userId), isNull(apiTokens.revokedAt))).returning({ id: apiTokens.id }).all().length;
    },

    setMayNotify(id: number, mayNotify: boolean): void {
      accessChanges.count++; // cached scopes carry the flag
      db.update(apiTokens).set({ mayNotify }).where(eq(apiTokens.id, id)).run();
    },

    touch(id: number, at: number): void {
      db.update(apiTokens).set({ lastUsedAt: at }).where(eq(apiTokens.id, id)).run();
    },
  };
}

export type TokenStore = ReturnType<typeof tokenStore>;
