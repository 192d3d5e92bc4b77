// Second factors: a person's TOTP authenticator and its recovery codes, and the sign-ins that
// passed the password and wait for the second step (sign_in_challenges: not sessions, they open
// nothing else).
import { and, count, eq, gt, inArray, isNotNull, isNull, lt, or } from "drizzle-orm";
import type { FactorRepository } from "../store.ts";
import type { Sql } from "./sql.ts";

export function factorStore(sql: Sql): FactorRepository {
  const { db, t } = sql;
  const { totpFactors, recoveryCodes, signInChallenges } = t;
  return {
    async totp(userId) {
      const [row] = await db
        .select({
          secret: totpFactors.secret,
          confirmedAt: totpFactors.confirmedAt,
          lastStep: totpFactors.lastStep,
          createdAt: totpFactors.createdAt,
        })
        .from(totpFactors)
        .where(eq(totpFactors.userId, userId))
        .limit(1);
      return row ?? null;
    },

    async withFactor(userIds) {
      if (!userIds.length) return [];
      const rows = await db
        .select({ userId: totpFactors.userId })
        .from(totpFactors)
        .where(and(inArray(totpFactors.userId, userIds), isNotNull(totpFactors.confirmedAt)));
      return rows.map((r) => r.userId);
    },

    async enableTotp(userId, secret, step, codeHashes, now) {
      const [had] = await db
        .select({ confirmedAt: totpFactors.confirmedAt })
        .from(totpFactors)
        .where(eq(totpFactors.userId, userId))
        .limit(1);
      if (had?.confirmedAt != null) return false;
      await db
        .insert(totpFactors)
        .values({ userId, secret, confirmedAt: now, lastStep: step, createdAt: now })
        .onConflictDoUpdate({
          target: totpFactors.userId,
          set: { secret, confirmedAt: now, lastStep: step, createdAt: now },
        });
      await db.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId));
      if (codeHashes.length)
        await db.insert(recoveryCodes).values(codeHashes.map((codeHash) => ({ userId, codeHash })));
      return true;
    },

    async takeStep(userId, step) {
      const rows = await db
        .update(totpFactors)
        .set({ lastStep: step })
        .where(
          and(
            eq(totpFactors.userId, userId),
            isNotNull(totpFactors.confirmedAt),
            or(isNull(totpFactors.lastStep), lt(totpFactors.lastStep, step)),
          ),
        )
        .returning({ userId: totpFactors.userId });
      return rows.length > 0;
    },

    async useRecoveryCode(userId, codeHash, now) {
      const rows = await db
        .update(recoveryCodes)
        .set({ usedAt: now })
        .where(
          and(eq(recoveryCodes.userId, userId), eq(recoveryCodes.codeHash, codeHash), isNull(recoveryCodes.usedAt)),
        )
        .returning({ userId: recoveryCodes.userId });
      return rows.length > 0;
    },

    async recoveryCodesLeft(userId) {
      const [row] = await db
        .select({ n: count() })
        .from(recoveryCodes)
        .where(and(eq(recoveryCodes.userId, userId), isNull(recoveryCodes.usedAt)));
      return row?.n ?? 0;
    },

    async removeTotp(userId) {
      await db.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId));
      const rows = await db
        .delete(totpFactors)
        .where(eq(totpFactors.userId, userId))
        .returning({ userId: totpFactors.userId });
      return rows.length > 0;
    },

    async createChallenge(tokenHash, c) {
      await db.insert(signInChallenges).values({ tokenHash, ...c });
    },

    async findChallenge(tokenHash, now) {
      const [row] = await db
        .select({
          userId: signInChallenges.userId,
          purpose: signInChallenges.purpose,
          secret: signInChallenges.secret,
          next: signInChallenges.next,
          createdAt: signInChallenges.createdAt,
          expiresAt: signInChallenges.expiresAt,
        })
        .from(signInChallenges)
        .where(and(eq(signInChallenges.tokenHash, tokenHash), gt(signInChallenges.expiresAt, now)))
        .limit(1);
      return row ?? null;
    },

    async deleteChallenge(tokenHash) {
      await db.delete(signInChallenges).where(eq(signInChallenges.tokenHash, tokenHash));
    },

    async takeChallenge(tokenHash, purpose, now) {
      const [row] = await db
        .delete(signInChallenges)
        .where(
          and(
            eq(signInChallenges.tokenHash, tokenHash),
            eq(signInChallenges.purpose, purpose),
            gt(signInChallenges.expiresAt, now),
          ),
        )
        .returning({
          userId: signInChallenges.userId,
          purpose: signInChallenges.purpose,
          secret: signInChallenges.secret,
          next: signInChallenges.next,
          createdAt: signInChallenges.createdAt,
          expiresAt: signInChallenges.expiresAt,
        });
      return row ?? null;
    },

    async deleteExpiredChallenges(now) {
      const rows = await db
        .delete(signInChallenges)
        .where(lt(signInChallenges.expiresAt, now))
        .returning({ tokenHash: signInChallenges.tokenHash });
      return rows.length;
    },
  };
}
