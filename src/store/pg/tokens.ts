// API tokens: only a hash of each token is stored.
import { and, desc, eq, isNull } from "drizzle-orm";
import type { TokenRepository } from "../store.ts";
import { batchOf, type Ctx } from "./context.ts";
import { apiTokens, projects } from "./schema.ts";

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

export function tokenStore(ctx: Ctx): TokenRepository {
  const { db } = ctx;
  const select = () => db.select(columns).from(apiTokens).leftJoin(projects, eq(projects.id, apiTokens.projectId));
  const one = async (where: ReturnType<typeof eq>) => (await select().where(where).limit(1))[0] ?? null;

  return {
    async insert(token) {
      const [{ id }] = (await db.insert(apiTokens).values(token).returning({ id: apiTokens.id })) as [{ id: number }];
      return (await one(eq(apiTokens.id, id)))!;
    },

    findByPrefix: (prefix) => one(eq(apiTokens.prefix, prefix)),

    findById: (id) => one(eq(apiTokens.id, id)),

    async list(includeRevoked = false) {
      const query = select().orderBy(desc(apiTokens.createdAt), desc(apiTokens.id));
      return includeRevoked ? query : query.where(isNull(apiTokens.revokedAt));
    },

    async revoke(id, now) {
      batchOf(ctx).accessChanged();
      const changed = await db.update(apiTokens).set({ revokedAt: now }).where(and(eq(apiTokens.id, id), isNull(apiTokens.revokedAt))).returning({ id: apiTokens.id });
      return changed.length > 0;
    },

    async revokeCreatedBy(userId, now) {
      batchOf(ctx).accessChanged();
      return (await db.update(apiTokens).set({ revokedAt: now }).where(and(eq(apiTokens.createdByUserId, userId), isNull(apiTokens.revokedAt))).returning({ id: apiTokens.id })).length;
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
