// The audit trail, newest first.
import { desc, lt, lte } from "drizzle-orm";
import type { Db } from "./db.ts";
import { auditLog } from "./schema.ts";
import type { AuditAction, AuditEntry, NewAuditEntry } from "../../model/audit.ts";

export function auditStore(db: Db) {
  return {
    record(entry: NewAuditEntry): void {
      db.insert(auditLog).values(entry).run();
    },

    list({ before, limit }: { before?: number; limit: number }): AuditEntry[] {
      const query = db.select().from(auditLog).orderBy(desc(auditLog.id)).limit(limit);
      return (before === undefined ? query : query.where(lt(auditLog.id, before)))
        .all()
        .map((r) => ({ ...r, action: r.action as AuditAction }));
    },

    prune(keep: number): number {
      const last = db.select({ id: auditLog.id }).from(auditLog).orderBy(desc(auditLog.id)).limit(1).offset(keep).get();
      if (!last) return 0;
      return db.delete(auditLog).where(lte(auditLog.id, last.id)).returning({ id: auditLog.id }).all().length;
    },
  };
}
