// Idempotency keys: the first answer to a keyed request, per token.
import type { Db } from "./db.ts";

export type KeptAnswer = { fingerprint: string; response: string };

export const IDEMPOTENCY_TTL_MS = 86_400_000;

export function idempotencyStore(db: Db) {
  const find = db.$client.prepare<KeptAnswer, [number, string, number]>("SELECT fingerprint, response FROM idempotency_keys WHERE token_id = ? AND key = ? AND created_at > ?");
  const save = db.$client.prepare<never, [number, string, string, string, number]>("INSERT INTO idempotency_keys (token_id, key, fingerprint, response, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET fingerprint = excluded.fingerprint, response = excluded.response, created_at = excluded.created_at");
  const prune = db.$client.prepare<never, [number]>("DELETE FROM idempotency_keys WHERE created_at <= ?");

  return {
    find(tokenId: number, key: string, now: number): KeptAnswer | null {
      return find.get(tokenId, key, now - IDEMPOTENCY_TTL_MS);
    },
    save(tokenId: number, key: string, fingerprint: string, response: string, now: number): void {
      save.run(tokenId, key, fingerprint, response, now);
    },
    prune(now: number): number {
      return prune.run(now - IDEMPOTENCY_TTL_MS).changes;
    },
  };
}

export type IdempotencyStore = ReturnType<typeof idempotencyStore>;
