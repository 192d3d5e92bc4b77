// Idempotency keys: the first answer to a keyed request, per token. A claim inserts the key before
// the work: a concurrent request with the same key (on any instance) waits on it, then reads the
// answer it left.
import { and, eq, lte, sql } from "drizzle-orm";
import type { IdempotencyRepository } from "../store.ts";
import type { Ctx } from "./context.ts";
import { idempotencyKeys } from "./schema.ts";

export const IDEMPOTENCY_TTL_MS = 86_400_000;

export function idempotencyStore({ db }: Ctx): IdempotencyRepository {
  return {
    async claim(tokenId, key, fingerprint, now) {
      const claimed = await db
        .insert(idempotencyKeys)
        .values({ tokenId, key, fingerprint, response: "", createdAt: now })
        .onConflictDoUpdate({
          target: [idempotencyKeys.tokenId, idempotencyKeys.key],
          set: { fingerprint, response: "", createdAt: now },
          // A key older than the TTL is free again: taken over as if new.
          setWhere: sql`${idempotencyKeys.createdAt} <= ${now - IDEMPOTENCY_TTL_MS}`,
        })
        .returning({ tokenId: idempotencyKeys.tokenId });
      if (claimed.length) return null;
      const [kept] = await db
        .select({ fingerprint: idempotencyKeys.fingerprint, response: idempotencyKeys.response })
        .from(idempotencyKeys)
        .where(and(eq(idempotencyKeys.tokenId, tokenId), eq(idempotencyKeys.key, key)))
        .limit(1);
      return kept ?? null;
    },

    async complete(tokenId, key, response) {
      await db
        .update(idempotencyKeys)
        .set({ response })
        .where(and(eq(idempotencyKeys.tokenId, tokenId), eq(idempotencyKeys.key, key)));
    },

    async prune(now) {
      return (
        await db
          .delete(idempotencyKeys)
          .where(lte(idempotencyKeys.createdAt, now - IDEMPOTENCY_TTL_MS))
          .returning({ tokenId: idempotencyKeys.tokenId })
      ).length;
    },
  };
}
