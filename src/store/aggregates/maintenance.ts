// Maintenance windows of each project: a few rows per project, read by project (its index) when a
// round decides whether a change notifies (domain/quiet.ts).
import { asc, eq } from "drizzle-orm";
import { type Maintenance, maintenanceOfRow, maintenanceRow } from "../../model/maintenance.ts";
import type { MaintenanceRepository } from "../store.ts";
import type { Sql } from "./sql.ts";

export function maintenanceStore({ db, t }: Sql): MaintenanceRepository {
  const windows = t.maintenanceWindows;
  const toWindow = (row: typeof windows.$inferSelect): Maintenance => maintenanceOfRow(row);
  return {
    async create(window, now) {
      const [row] = await db
        .insert(windows)
        .values({ ...maintenanceRow(window), createdAt: now })
        .returning();
      return toWindow(row!);
    },

    async find(id) {
      const [row] = await db.select().from(windows).where(eq(windows.id, id)).limit(1);
      return row ? toWindow(row) : null;
    },

    async list(projectId) {
      const rows = await db.select().from(windows).where(eq(windows.projectId, projectId)).orderBy(asc(windows.id));
      return rows.map(toWindow);
    },

    async delete(id) {
      return (await db.delete(windows).where(eq(windows.id, id)).returning({ id: windows.id })).length > 0;
    },
  };
}
