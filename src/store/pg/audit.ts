// The audit trail, newest first.
import { desc, lt, lte } from "drizzle-orm";
import type { AuditAction } from "../../model/audit.ts";
import type { AuditRepository } from "../store.ts";
import type { Ctx } from "./context.ts";
import { auditLog } from "./schema.ts";

export function auditStore({ db }: Ctx): AuditRepository {
  return {
    async record(entry) {
      await db.insert(auditLog).values(entry);
    },

    async list({ before, limit }) {
      const query = db.select().from(auditLog).orderBy(desc(auditLog.id)).limit(limit);
      const rows = await (before === undefined ? query : query.where(lt(auditLog.id, before)));
      return rows.map((r) => ({ ...r, action: r.action as AuditAction }));
    },

    async prune(keep) {
      const [last] = await db
        .select({ id: auditLog.id })
        .from(auditLog)
        .orderBy(desc(auditLog.id))
        .limit(1)
        .offset(keep);
      if (!last) return 0;
      return (await db.delete(auditLog).where(lte(auditLog.id, last.id)).returning({ id: auditLog.id })).length;
    },
  };
}
