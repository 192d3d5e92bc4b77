// Shared pages of each project (model/share.ts): a few rows per project, found by their key (a
// unique index) on every request to a shared page, listed by project (its index).
import { and, asc, eq, isNull } from "drizzle-orm";
import { type Share, shareOfRow, shareRow } from "../../model/share.ts";
import type { ShareRepository } from "../store.ts";
import { hasNul, type Sql } from "./sql.ts";

export function shareStore({ db, t, accessChanged }: Sql): ShareRepository {
  const shares = t.shares;
  const toShare = (row: typeof shares.$inferSelect): Share => shareOfRow(row);
  return {
    async create(share, now) {
      const [row] = await db
        .insert(shares)
        .values({ ...shareRow(share), createdAt: now })
        .returning();
      return toShare(row!);
    },

    async find(id) {
      const [row] = await db.select().from(shares).where(eq(shares.id, id)).limit(1);
      return row ? toShare(row) : null;
    },

    async findByKey(key) {
      if (hasNul(key)) return null;
      const [row] = await db
        .select()
        .from(shares)
        .where(and(eq(shares.key, key), isNull(shares.revokedAt)))
        .limit(1);
      return row ? toShare(row) : null;
    },

    async list(projectId) {
      const rows = await db
        .select()
        .from(shares)
        .where(and(eq(shares.projectId, projectId), isNull(shares.revokedAt)))
        .orderBy(asc(shares.id));
      return rows.map(toShare);
    },

    async revoke(id, now) {
      const gone = await db
        .update(shares)
        .set({ revokedAt: now })
        .where(and(eq(shares.id, id), isNull(shares.revokedAt)))
        .returning({ id: shares.id });
      if (gone.length) accessChanged(); // open streams of it are checked again, and end
      return gone.length > 0;
    },
  };
}
