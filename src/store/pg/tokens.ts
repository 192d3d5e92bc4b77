// API tokens: only a hash of each token is stored. A full-access token may be limited to some
// projects (token_projects).
import { and, asc, desc, eq, inArray, isNull, notInArray, sql } from "drizzle-orm";
import type { TokenRecord } from "../../model/token.ts";
import type { TokenRepository } from "../store.ts";
import { batchOf, type Ctx } from "./context.ts";
import { apiTokens, projects, tokenProjects } from "./schema.ts";

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

type Row = Omit<TokenRecord, "projects"> & { limited: boolean };

export function tokenStore(ctx: Ctx): TokenRepository {
  const { db } = ctx;
  const select = () => db.select(columns).from(apiTokens).leftJoin(projects, eq(projects.id, apiTokens.projectId));

  /** Each limited token's projects, by name. */
  async function records(rows: Row[]): Promise<TokenRecord[]> {
    const ids = rows.filter((r) => r.limited).map((r) => r.id);
    const names = new Map<number, string[]>(ids.map((id) => [id, []]));
    if (ids.length) {
      const found = await db
        .select({ tokenId: tokenProjects.tokenId, name: projects.name })
        .from(tokenProjects)
        .innerJoin(projects, eq(projects.id, tokenProjects.projectId))
        .where(inArray(tokenProjects.tokenId, ids))
        .orderBy(asc(projects.name));
      for (const r of found) names.get(r.tokenId)!.push(r.name);
    }
    return rows.map(({ limited, ...row }) => ({ ...row, projects: limited ? names.get(row.id)! : null }));
  }
  const one = async (where: ReturnType<typeof eq>) => (await records(await select().where(where).limit(1)))[0] ?? null;

  return {
    async insert({ projectIds, ...token }) {
      const [{ id }] = (await db
        .insert(apiTokens)
        .values({ ...token, limited: projectIds !== null })
        .returning({ id: apiTokens.id })) as [{ id: number }];
      if (projectIds?.length)
        await db.insert(tokenProjects).values(projectIds.map((projectId) => ({ tokenId: id, projectId })));
      return (await one(eq(apiTokens.id, id)))!;
    },

    findByPrefix: (prefix) => one(eq(apiTokens.prefix, prefix)),

    findById: (id) => one(eq(apiTokens.id, id)),

    async list(includeRevoked = false) {
      const query = select().orderBy(desc(apiTokens.createdAt), desc(apiTokens.id));
      return records(await (includeRevoked ? query : query.where(isNull(apiTokens.revokedAt))));
    },

    async activeNamed(name) {
      // In a write, instances creating a token of the same name at once take turns: the second sees the first's.
      if (ctx.batch) await db.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${`token name:${name}`}))`);
      return (
        (
          await db
            .select({ id: apiTokens.id })
            .from(apiTokens)
            .where(and(eq(apiTokens.name, name), isNull(apiTokens.revokedAt)))
            .limit(1)
        ).length > 0
      );
    },

    async revoke(id, now) {
      batchOf(ctx).accessChanged();
      const changed = await db
        .update(apiTokens)
        .set({ revokedAt: now })
        .where(and(eq(apiTokens.id, id), isNull(apiTokens.revokedAt)))
        .returning({ id: apiTokens.id });
      return changed.length > 0;
    },

    async revokeCreatedBy(userId, now) {
      batchOf(ctx).accessChanged();
      return (
        await db
          .update(apiTokens)
          .set({ revokedAt: now })
          .where(and(eq(apiTokens.createdByUserId, userId), isNull(apiTokens.revokedAt)))
          .returning({ id: apiTokens.id })
      ).length;
    },

    async narrowCreatedBy(userId, projectIds, now) {
      batchOf(ctx).accessChanged();
      const live = and(eq(apiTokens.createdByUserId, userId), isNull(apiTokens.revokedAt));
      const revoked = (
        await db
          .update(apiTokens)
          .set({ revokedAt: now })
          .where(and(live, eq(apiTokens.kind, "public"), notInArray(apiTokens.projectId, projectIds)))
          .returning({ id: apiTokens.id })
      ).length;
      const full = await db
        .select({ id: apiTokens.id, limited: apiTokens.limited })
        .from(apiTokens)
        .where(and(live, eq(apiTokens.kind, "full")));
      for (const t of full) {
        if (t.limited) {
          await db
            .delete(tokenProjects)
            .where(and(eq(tokenProjects.tokenId, t.id), notInArray(tokenProjects.projectId, projectIds)));
          continue;
        }
        await db.update(apiTokens).set({ limited: true }).where(eq(apiTokens.id, t.id));
        if (projectIds.length)
          await db.insert(tokenProjects).values(projectIds.map((projectId) => ({ tokenId: t.id, projectId })));
      }
      return revoked;
    },

    async setMayNotify(id, mayNotify) {
      batchOf(ctx).accessChanged(); // cached scopes carry the flag
      await db.update(apiTokens).set({ mayNotify }).where(eq(apiTokens.id, id));
    },

    async touch(id, at) {
      await db.update(apiTokens).set({ lastUsedAt: at }).where(eq(apiTokens.id, id));
    },
  };
}
