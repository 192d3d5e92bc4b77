// Second factors: a person's TOTP authenticator and its recovery codes, their passkeys and the
// WebAuthn challenges handed out (each taken once), and the sign-ins that
// passed the password and wait for the second step (sign_in_challenges: not sessions, they open
// nothing else).
import { and, asc, count, eq, gt, inArray, isNotNull, isNull, lt, or } from "drizzle-orm";
import type { FactorRepository, Passkey } from "../store.ts";
import type { Sql } from "./sql.ts";

export function factorStore(sql: Sql): FactorRepository {
  const { db, t } = sql;
  const { totpFactors, recoveryCodes, signInChallenges, passkeys, passkeyChallenges } = t;
  /** A sign-in challenge as it is given back: all but its key. */
  const challengeColumns = {
    userId: signInChallenges.userId,
    purpose: signInChallenges.purpose,
    secret: signInChallenges.secret,
    next: signInChallenges.next,
    createdAt: signInChallenges.createdAt,
    expiresAt: signInChallenges.expiresAt,
  };
  const passkeyColumns = {
    id: passkeys.id,
    userId: passkeys.userId,
    credentialId: passkeys.credentialId,
    publicKey: passkeys.publicKey,
    counter: passkeys.counter,
    transports: passkeys.transports,
    name: passkeys.name,
    createdAt: passkeys.createdAt,
    lastUsedAt: passkeys.lastUsedAt,
  };
  const passkeyOf = (row: typeof passkeys.$inferSelect): Passkey => ({
    ...row,
    counter: Number(row.counter),
    transports: row.transports ? row.transports.split(",") : [],
  });
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
      const withPasskey = await db
        .selectDistinct({ userId: passkeys.userId })
        .from(passkeys)
        .where(inArray(passkeys.userId, userIds));
      return [...new Set([...rows, ...withPasskey].map((r) => r.userId))];
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
        .select(challengeColumns)
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
        .returning(challengeColumns);
      return row ?? null;
    },

    async deleteExpiredChallenges(now) {
      const rows = await db
        .delete(signInChallenges)
        .where(lt(signInChallenges.expiresAt, now))
        .returning({ tokenHash: signInChallenges.tokenHash });
      const offered = await db
        .delete(passkeyChallenges)
        .where(lt(passkeyChallenges.expiresAt, now))
        .returning({ challenge: passkeyChallenges.challenge });
      return rows.length + offered.length;
    },

    async passkeys(userId) {
      const rows = await db
        .select(passkeyColumns)
        .from(passkeys)
        .where(eq(passkeys.userId, userId))
        .orderBy(asc(passkeys.createdAt), asc(passkeys.id));
      return rows.map(passkeyOf);
    },

    async passkeyByCredential(credentialId) {
      const [row] = await db
        .select(passkeyColumns)
        .from(passkeys)
        .where(eq(passkeys.credentialId, credentialId))
        .limit(1);
      return row ? passkeyOf(row) : null;
    },

    async addPasskey(p) {
      const rows = await db
        .insert(passkeys)
        .values({ ...p, transports: p.transports.join(",") || null })
        .onConflictDoNothing({ target: passkeys.credentialId })
        .returning(passkeyColumns);
      return rows[0] ? passkeyOf(rows[0]) : null;
    },

    async removePasskey(userId, id) {
      const rows = await db
        .delete(passkeys)
        .where(and(eq(passkeys.userId, userId), eq(passkeys.id, id)))
        .returning(passkeyColumns);
      return rows[0] ? passkeyOf(rows[0]) : null;
    },

    async removePasskeys(userId) {
      const rows = await db.delete(passkeys).where(eq(passkeys.userId, userId)).returning({ id: passkeys.id });
      return rows.length;
    },

    async usePasskey(id, counter, now) {
      const rows = await db
        .update(passkeys)
        .set({ counter, lastUsedAt: now })
        .where(and(eq(passkeys.id, id), counter === 0 ? eq(passkeys.counter, 0) : lt(passkeys.counter, counter)))
        .returning({ id: passkeys.id });
      return rows.length > 0;
    },

    async createPasskeyChallenge(c) {
      await db.insert(passkeyChallenges).values(c);
    },

    async takePasskeyChallenge(challenge, now) {
      const [row] = await db.delete(passkeyChallenges).where(eq(passkeyChallenges.challenge, challenge)).returning({
        challenge: passkeyChallenges.challenge,
        purpose: passkeyChallenges.purpose,
        userId: passkeyChallenges.userId,
        createdAt: passkeyChallenges.createdAt,
        expiresAt: passkeyChallenges.expiresAt,
      });
      return row && row.expiresAt > now ? row : null;
    },
  };
}
