// Idempotency keys: the first answer to a keyed request, per token.
import type { Db } from "./db.ts";

export type KeptAnswer = { fingerprint: string; response: string };

export const IDEMPOTENCY_TTL_MS = 86_400_000;

export function idempotencyStore(db: Db) {
  // A key older than the TTL is free again: taken over as if new.
  const claim = db.$client.prepare<{ claimed: number }, [number, string, string, number, number]>(
    `INSERT INTO idempotency_keys (token_id, key, fingerprint, response, created_at) VALUES (?1, ?2, ?3, '', ?4)
     ON CONFLICT (token_id, key) DO UPDATE SET fingerprint = excluded.fingerprint, response = '', created_at = excluded.created_at WHERE idempotency_keys.created_at <= ?5
     RETURNING 1 AS claimed`,
  );
  const find = db.$client.prepare<KeptAnswer, [number, string]>(
    "SELECT fingerprint, response FROM idempotency_keys WHERE token_id = ? AND key = ?",
  );
  const complete = db.$client.prepare<never, [string, number, string]>(
    "UPDATE idempotency_keys SET response = ? WHERE token_id = ? AND key = ?",
  );
  const prune = db.$client.prepare<never, [number]>("DELETE FROM idempotency_keys WHERE created_at <= ?");

  return {
    claim(tokenId: number, key: string, fingerprint: string, now: number): KeptAnswer | null {
      if (claim.get(tokenId, key, fingerprint, now, now - IDEMPOTENCY_TTL_MS)) return null;
      return find.get(tokenId, key);
    },
    complete(tokenId: number, key: string, response: string): void {
      complete.run(response, tokenId, key);
    },
    prune(now: number): number {
      return prune.run(now - IDEMPOTENCY_TTL_MS).changes;
    },
  };
}
