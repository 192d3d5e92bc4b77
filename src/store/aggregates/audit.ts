// The audit trail, newest first.
import { desc, lt, lte } from "drizzle-orm";
import type { AuditAction } from "../../model/audit.ts";
import type { AuditRepository } from "../store.ts";
import type { Sql } from "./sql.ts";

export function auditStore({ db, t }: Sql): AuditRepository {
  return {
    async record(entry) {
      await db.insert(t.auditLog).values(entry);
    },

    async list({ before, limit }) {
      const query = db.select().from(t.auditLog).orderBy(desc(t.auditLog.id)).limit(limit);
      const rows = await (before === undefined ? query : query.where(lt(t.auditLog.id, before)));
      return rows.map((r) => ({ ...r, action: r.action as AuditAction }));
    },

    async prune(keep) {
      const [last] = await db
        .select({ id: t.auditLog.id })
        .from(t.auditLog)
        .orderBy(desc(t.auditLog.id))
        .limit(1)
        .offset(keep);
      if (!last) return 0;
      return (await db.delete(t.auditLog).where(lte(t.auditLog.id, last.id)).returning({ id: t.auditLog.id })).length;
    },
  };
}
