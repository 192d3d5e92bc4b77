// Digests: each project's daily or weekly summaries, and the period each one sent last. Claiming a
// period is one conditional UPDATE: of two instances that try at once, one wins.
import { and, asc, eq, isNull } from "drizzle-orm";
import type { DigestRepository } from "../store.ts";
import { type DigestRow, digestChanges, digestColumns, toDigest } from "../notification-rows.ts";
import type { Ctx } from "./context.ts";
import { digests } from "./schema.ts";

export function digestStore({ db }: Ctx): DigestRepository {
  return {
    async create(d, now) {
      const [row] = await db
        .insert(digests)
        .values({ ...digestColumns(d), createdAt: now })
        .returning();
      return toDigest(row as DigestRow);
    },

    async find(id) {
      const [row] = await db.select().from(digests).where(eq(digests.id, id)).limit(1);
      return row ? toDigest(row as DigestRow) : null;
    },

    async list(projectId) {
      return (
        (await db
          .select()
          .from(digests)
          .where(eq(digests.projectId, projectId))
          .orderBy(asc(digests.id))) as DigestRow[]
      ).map(toDigest);
    },

    async enabled() {
      return (
        (await db.select().from(digests).where(eq(digests.enabled, true)).orderBy(asc(digests.id))) as DigestRow[]
      ).map(toDigest);
    },

    async update(id, changes) {
      const [row] = await db.update(digests).set(digestChanges(changes)).where(eq(digests.id, id)).returning();
      return row ? toDigest(row as DigestRow) : null;
    },

    async delete(id) {
      await db.delete(digests).where(eq(digests.id, id));
    },

    async claimPeriod(id, last, period, now) {
      const same = last === null ? isNull(digests.lastPeriod) : eq(digests.lastPeriod, last);
      return (
        (
          await db
            .update(digests)
            .set({ lastPeriod: period, lastSentAt: now })
            .where(and(eq(digests.id, id), same))
            .returning({ id: digests.id })
        ).length > 0
      );
    },

    async recordOutcome(id, outcome, now) {
      const set = outcome.ok ? { lastSuccessAt: now } : { lastError: outcome.error, lastErrorAt: now };
      await db.update(digests).set(set).where(eq(digests.id, id));
    },
  };
}
