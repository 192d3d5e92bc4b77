// API tokens: only a hash of each token is stored. A full-access token may be limited to some
// projects (token_projects).
import { and, desc, eq, isNull, notInArray } from "drizzle-orm";
import type { Db } from "./db.ts";
import { apiTokens, projects, tokenProjects } from "./schema.ts";
import type { NewToken, TokenRecord } from "../../model/token.ts";

type Row = Omit<TokenRecord, "projects"> & { limited: boolean | number };

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
    limited: apiTokens.limited,
  };
  const select = () => db.select(columns).from(apiTokens).leftJoin(projects, eq(projects.id, apiTokens.projectId));
  // Every API request reads its token: plain prepared statements, and no join (a join costs bun:sqlite
  // several times a primary-key lookup, even when no row matches).
  const byPrefix = db.$client.prepare<Omit<Row, "project">, [string]>(
    `SELECT id, name, kind, project_id AS projectId, channel, prefix, hash, may_notify AS mayNotify, created_by AS createdBy,
            created_by_user_id AS createdByUserId, created_at AS createdAt, last_used_at AS lastUsedAt, revoked_at AS revokedAt, limited
       FROM api_tokens WHERE prefix = ?`,
  );
  const projectName = db.$client.prepare<{ name: string }, [number]>("SELECT name FROM projects WHERE id = ?");
  const projectsOf = db.$client.prepare<{ name: string }, [number]>(
    "SELECT p.name FROM token_projects tp JOIN projects p ON p.id = tp.project_id WHERE tp.token_id = ? ORDER BY p.name",
  );
  const activeNamed = db.$client.prepare<{ id: number }, [string]>(
    "SELECT id FROM api_tokens WHERE name = ? AND revoked_at IS NULL LIMIT 1",
  );

  function record({ limited, ...row }: Row): TokenRecord {
    return {
      ...row,
      mayNotify: Boolean(row.mayNotify),
      projects: limited ? projectsOf.all(row.id).map((p) => p.name) : null,
    };
  }

  return {
    insert({ projectIds, ...token }: NewToken): TokenRecord {
      const { id } = db
        .insert(apiTokens)
        .values({ ...token, limited: projectIds !== null })
        .returning({ id: apiTokens.id })
        .get();
      if (projectIds?.length)
        db.insert(tokenProjects)
          .values(projectIds.map((projectId) => ({ tokenId: id, projectId })))
          .run();
      return record(select().where(eq(apiTokens.id, id)).get()!);
    },

    findByPrefix(prefix: string): TokenRecord | null {
      const row = byPrefix.get(prefix);
      if (!row) return null;
      return record({
        ...row,
        project: row.projectId === null ? null : (projectName.get(row.projectId)?.name ?? null),
      });
    },

    findById(id: number): TokenRecord | null {
      const row = select().where(eq(apiTokens.id, id)).get();
      return row ? record(row) : null;
    },

    list(includeRevoked = false): TokenRecord[] {
      const query = select().orderBy(desc(apiTokens.createdAt), desc(apiTokens.id));
      return (includeRevoked ? query : query.where(isNull(apiTokens.revokedAt))).all().map(record);
    },

    activeNamed(name: string): boolean {
      return activeNamed.get(name) !== null;
    },

    revoke(id: number, now: number): boolean {
      accessChanges.count++;
      const changed = db
        .update(apiTokens)
        .set({ revokedAt: now })
        .where(and(eq(apiTokens.id, id), isNull(apiTokens.revokedAt)))
        .returning({ id: apiTokens.id })
        .all();
      return changed.length > 0;
    },

    /** Revokes the live tokens a member created; returns how many. */
    revokeCreatedBy(userId: number, now: number): number {
      accessChanges.count++;
      return db
        .update(apiTokens)
        .set({ revokedAt: now })
        .where(and(eq(apiTokens.createdByUserId, userId), isNull(apiTokens.revokedAt)))
        .returning({ id: apiTokens.id })
        .all().length;
    },

    narrowCreatedBy(userId: number, projectIds: number[], now: number): number {
      accessChanges.count++;
      const live = and(eq(apiTokens.createdByUserId, userId), isNull(apiTokens.revokedAt));
      const revoked = db
        .update(apiTokens)
        .set({ revokedAt: now })
        .where(and(live, eq(apiTokens.kind, "public"), notInArray(apiTokens.projectId, projectIds)))
        .returning({ id: apiTokens.id })
        .all().length;
      const full = db
        .select({ id: apiTokens.id, limited: apiTokens.limited })
        .from(apiTokens)
        .where(and(live, eq(apiTokens.kind, "full")))
        .all();
      for (const t of full) {
        if (t.limited) {
          db.delete(tokenProjects)
            .where(and(eq(tokenProjects.tokenId, t.id), notInArray(tokenProjects.projectId, projectIds)))
            .run();
          continue;
        }
        db.update(apiTokens).set({ limited: true }).where(eq(apiTokens.id, t.id)).run();
        if (projectIds.length)
          db.insert(tokenProjects)
            .values(projectIds.map((projectId) => ({ tokenId: t.id, projectId })))
            .run();
      }
      return revoked;
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
