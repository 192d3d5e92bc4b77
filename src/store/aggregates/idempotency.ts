// Idempotency keys: the first answer to a keyed request, per token. A claim inserts the key before
// the work: a concurrent request with the same key (on another PostgreSQL instance) waits on it,
// then reads the answer it left.
import { and, eq, lte, sql } from "drizzle-orm";
import type { IdempotencyRepository } from "../store.ts";
import type { Sql } from "./sql.ts";

export const IDEMPOTENCY_TTL_MS = 86_400_000;

export function idempotencyStore({ db, t }: Sql): IdempotencyRepository {
  const keys = t.idempotencyKeys;
  return {
    async claim(tokenId, key, fingerprint, now) {
      const claimed = await db
        .insert(keys)
        .values({ tokenId, key, fingerprint, response: "", createdAt: now })
        .onConflictDoUpdate({
          target: [keys.tokenId, keys.key],
          set: { fingerprint, response: "", createdAt: now },
          // A key older than the TTL is free again: taken over as if new.
          setWhere: sql`${keys.createdAt} <= ${now - IDEMPOTENCY_TTL_MS}`,
        })
        .returning({ tokenId: keys.tokenId });
      if (claimed.length) return null;
      const [kept] = await db
        .select({ fingerprint: keys.fingerprint, response: keys.response })
        .from(keys)
        .where(and(eq(keys.tokenId, tokenId), eq(keys.key, key)))
        .limit(1);
      return kept ?? null;
    },

    async complete(tokenId, key, response) {
      await db
        .update(keys)
        .set({ response })
        .where(and(eq(keys.tokenId, tokenId), eq(keys.key, key)));
    },

    async prune(now) {
      const gone = await db
        .delete(keys)
        .where(lte(keys.createdAt, now - IDEMPOTENCY_TTL_MS))
        .returning({ tokenId: keys.tokenId });
      return gone.length;
    },
  };
}
