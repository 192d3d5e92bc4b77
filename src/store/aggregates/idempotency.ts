// Idempotency keys: the first answer to a keyed request, per token. A claim inserts the key before
// the work: a concurrent request with the same key (on another PostgreSQL instance) waits on it,
// then reads the answer it left. Each key is kept for as long as its claim asked (a day for an
// Idempotency-Key header, days for a webhook's delivery): it expires at expires_at.
import { and, eq, isNull, lte, or, type SQL } from "drizzle-orm";
import type { IdempotencyRepository } from "../store.ts";
import type { Sql } from "./sql.ts";

/** How long a key is kept unless its claim asks for longer: a day. */
export const IDEMPOTENCY_TTL_MS = 86_400_000;

export function idempotencyStore({ db, t }: Sql): IdempotencyRepository {
  const keys = t.idempotencyKeys;
  // Keys written before expires_at existed (by an older instance, during a rolling upgrade) have
  // none: they expire a day after they were made, as they did.
  const expired = (now: number): SQL =>
    or(lte(keys.expiresAt, now), and(isNull(keys.expiresAt), lte(keys.createdAt, now - IDEMPOTENCY_TTL_MS))) as SQL;
  return {
    async claim(tokenId, key, fingerprint, now, keepMs = IDEMPOTENCY_TTL_MS) {
      const expiresAt = now + keepMs;
      const claimed = await db
        .insert(keys)
        .values({ tokenId, key, fingerprint, response: "", createdAt: now, expiresAt })
        .onConflictDoUpdate({
          target: [keys.tokenId, keys.key],
          set: { fingerprint, response: "", createdAt: now, expiresAt },
          // An expired key is free again: taken over as if new.
          setWhere: expired(now),
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
      const gone = await db.delete(keys).where(expired(now)).returning({ tokenId: keys.tokenId });
      return gone.length;
    },
  };
}
