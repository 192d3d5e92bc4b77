// API tokens: only a hash of each token is stored. A full-access token may be limited to some
// projects (token_projects).
import { and, desc, eq, isNull, notInArray, type SQL } from "drizzle-orm";
import type { TokenRecord } from "../../model/token.ts";
import type { TokenRepository } from "../store.ts";
import { withProjects } from "./reach.ts";
import type { Sql } from "./sql.ts";

export function tokenStore(sql: Sql): TokenRepository {
  const { db, t, accessChanged, lockName } = sql;
  const { apiTokens, projects, tokenProjects } = t;
  const select = () =>
    db
      .select({
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
      })
      .from(apiTokens)
      .leftJoin(projects, eq(projects.id, apiTokens.projectId));
  type Row = Awaited<ReturnType<typeof select>>[number];

  const records = (rows: Row[]): Promise<TokenRecord[]> =>
    withProjects(sql, { owner: tokenProjects.tokenId, project: tokenProjects.projectId }, rows);
  const one = async (where: SQL) => (await records(await select().where(where).limit(1)))[0] ?? null;
  /** Revokes the live tokens `where` picks; returns how many. Cached scopes must forget them. */
  async function revokeWhere(where: SQL | undefined, now: number): Promise<number> {
    accessChanged();
    const revoked = await db
      .update(apiTokens)
      .set({ revokedAt: now })
      .where(and(where, isNull(apiTokens.revokedAt)))
      .returning({ id: apiTokens.id });
    return revoked.length;
  }

  return {
    async insert({ projectIds, ...token }) {
      const [made] = await db
        .insert(apiTokens)
        .values({ ...token, limited: projectIds !== null })
        .returning({ id: apiTokens.id });
      if (projectIds?.length)
        await db.insert(tokenProjects).values(projectIds.map((projectId) => ({ tokenId: made!.id, projectId })));
      return (await one(eq(apiTokens.id, made!.id)))!;
    },

    findByPrefix: (prefix) => one(eq(apiTokens.prefix, prefix)),

    findById: (id) => one(eq(apiTokens.id, id)),

    async list(includeRevoked = false) {
      const query = select().orderBy(desc(apiTokens.createdAt), desc(apiTokens.id));
      return records(await (includeRevoked ? query : query.where(isNull(apiTokens.revokedAt))));
    },

    async activeNamed(name) {
      // In a write, two instances creating a token of the same name at once take turns: the second sees the first's.
      await lockName(`token name:${name}`);
      const [row] = await db
        .select({ id: apiTokens.id })
        .from(apiTokens)
        .where(and(eq(apiTokens.name, name), isNull(apiTokens.revokedAt)))
        .limit(1);
      return row !== undefined;
    },

    async revoke(id, now) {
      return (await revokeWhere(eq(apiTokens.id, id), now)) > 0;
    },

    revokeCreatedBy: (userId, now) => revokeWhere(eq(apiTokens.createdByUserId, userId), now),

    async narrowCreatedBy(userId, projectIds, now) {
      const mine = eq(apiTokens.createdByUserId, userId);
      const revoked = await revokeWhere(
        and(mine, eq(apiTokens.kind, "public"), notInArray(apiTokens.projectId, projectIds)),
        now,
      );
      const full = await db
        .select({ id: apiTokens.id, limited: apiTokens.limited })
        .from(apiTokens)
        .where(and(mine, isNull(apiTokens.revokedAt), eq(apiTokens.kind, "full")));
      for (const token of full) {
        if (token.limited) {
          await db
            .delete(tokenProjects)
            .where(and(eq(tokenProjects.tokenId, token.id), notInArray(tokenProjects.projectId, projectIds)));
          continue;
        }
        await db.update(apiTokens).set({ limited: true }).where(eq(apiTokens.id, token.id));
        if (projectIds.length)
          await db.insert(tokenProjects).values(projectIds.map((projectId) => ({ tokenId: token.id, projectId })));
      }
      return revoked;
    },

    async setMayNotify(id, mayNotify) {
      accessChanged(); // cached scopes carry the flag
      await db.update(apiTokens).set({ mayNotify }).where(eq(apiTokens.id, id));
    },

    async touch(id, at) {
      await db.update(apiTokens).set({ lastUsedAt: at }).where(eq(apiTokens.id, id));
    },
  };
}
