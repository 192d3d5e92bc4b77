// Digests: each project's daily or weekly summaries, and the period each one sent last. Claiming a
// period is one conditional UPDATE: of two runs that try at once (two PostgreSQL instances), one wins.
import { and, asc, eq, isNull } from "drizzle-orm";
import type { DigestRepository } from "../store.ts";
import { digestChanges, digestColumns, toDigest } from "../notification-rows.ts";
import type { Sql } from "./sql.ts";

export function digestStore({ db, t }: Sql): DigestRepository {
  const { digests } = t;
  return {
    async create(d, now) {
      const [row] = await db
        .insert(digests)
        .values({ ...digestColumns(d), createdAt: now })
        .returning();
      return toDigest(row!);
    },

    async find(id) {
      const [row] = await db.select().from(digests).where(eq(digests.id, id)).limit(1);
      return row ? toDigest(row) : null;
    },

    async list(projectId) {
      const rows = await db.select().from(digests).where(eq(digests.projectId, projectId)).orderBy(asc(digests.id));
      return rows.map(toDigest);
    },

    async enabled() {
      const rows = await db.select().from(digests).where(eq(digests.enabled, true)).orderBy(asc(digests.id));
      return rows.map(toDigest);
    },

    async update(id, changes) {
      const [row] = await db.update(digests).set(digestChanges(changes)).where(eq(digests.id, id)).returning();
      return row ? toDigest(row) : null;
    },

    async delete(id) {
      await db.delete(digests).where(eq(digests.id, id));
    },

    async claimPeriod(id, last, period, now) {
      const same = last === null ? isNull(digests.lastPeriod) : eq(digests.lastPeriod, last);
      const claimed = await db
        .update(digests)
        .set({ lastPeriod: period, lastSentAt: now })
        .where(and(eq(digests.id, id), same))
        .returning({ id: digests.id });
      return claimed.length > 0;
    },

    async recordOutcome(id, outcome, now) {
      const set = outcome.ok ? { lastSuccessAt: now } : { lastError: outcome.error, lastErrorAt: now };
      await db.update(digests).set(set).where(eq(digests.id, id));
    },
  };
}
