// Digests: each project's daily or weekly summaries, and the period each one sent last.
import { and, asc, eq, isNull } from "drizzle-orm";
import type { Digest, DigestChanges, NewDigest, Outcome } from "../../model/notification.ts";
import { type DigestRow, digestChanges, digestColumns, toDigest } from "../notification-rows.ts";
import type { Db } from "./db.ts";
import { digests } from "./schema.ts";

export function digestStore(db: Db) {
  return {
    create(d: NewDigest, now: number): Digest {
      return toDigest(
        db
          .insert(digests)
          .values({ ...digestColumns(d), createdAt: now })
          .returning()
          .get() as DigestRow,
      );
    },

    find(id: number): Digest | null {
      const row = db.select().from(digests).where(eq(digests.id, id)).get();
      return row ? toDigest(row as DigestRow) : null;
    },

    list(projectId: number): Digest[] {
      return (
        db.select().from(digests).where(eq(digests.projectId, projectId)).orderBy(asc(digests.id)).all() as DigestRow[]
      ).map(toDigest);
    },

    enabled(): Digest[] {
      return (
        db.select().from(digests).where(eq(digests.enabled, true)).orderBy(asc(digests.id)).all() as DigestRow[]
      ).map(toDigest);
    },

    update(id: number, changes: DigestChanges): Digest | null {
      const row = db.update(digests).set(digestChanges(changes)).where(eq(digests.id, id)).returning().get();
      return row ? toDigest(row as DigestRow) : null;
    },

    delete(id: number): void {
      db.delete(digests).where(eq(digests.id, id)).run();
    },

    claimPeriod(id: number, last: string | null, period: string, now: number): boolean {
      const same = last === null ? isNull(digests.lastPeriod) : eq(digests.lastPeriod, last);
      return (
        db
          .update(digests)
          .set({ lastPeriod: period, lastSentAt: now })
          .where(and(eq(digests.id, id), same))
          .returning({ id: digests.id })
          .all().length > 0
      );
    },

    recordOutcome(id: number, outcome: Outcome, now: number): void {
      const set = outcome.ok ? { lastSuccessAt: now } : { lastError: outcome.error, lastErrorAt: now };
      db.update(digests).set(set).where(eq(digests.id, id)).run();
    },
  };
}
