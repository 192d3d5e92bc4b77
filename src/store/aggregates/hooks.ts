// Inbound webhooks of a project (domain/hooks.ts): found by their unguessable id on each delivery.
import { asc, eq } from "drizzle-orm";
import type { Hook, HookConfig } from "../../model/hook.ts";
import type { HookRepository } from "../store.ts";
import type { Sql } from "./sql.ts";

export function hookStore({ db, t }: Sql): HookRepository {
  const toHook = (row: typeof t.hooks.$inferSelect): Hook => ({
    ...row,
    config: JSON.parse(row.config) as HookConfig,
  });
  return {
    async create(hook) {
      const [row] = await db
        .insert(t.hooks)
        .values({ ...hook, config: JSON.stringify(hook.config) })
        .returning();
      return toHook(row!);
    },

    async find(id) {
      const [row] = await db.select().from(t.hooks).where(eq(t.hooks.id, id)).limit(1);
      return row ? toHook(row) : null;
    },

    async list(projectId) {
      const rows = await db
        .select()
        .from(t.hooks)
        .where(eq(t.hooks.projectId, projectId))
        .orderBy(asc(t.hooks.createdAt), asc(t.hooks.id));
      return rows.map(toHook);
    },

    async update(id, changes) {
      const { config, ...rest } = changes;
      const set = { ...rest, ...(config === undefined ? {} : { config: JSON.stringify(config) }) };
      if (!Object.keys(set).length) return this.find(id);
      const [row] = await db.update(t.hooks).set(set).where(eq(t.hooks.id, id)).returning();
      return row ? toHook(row) : null;
    },

    async delete(id) {
      return (await db.delete(t.hooks).where(eq(t.hooks.id, id)).returning({ id: t.hooks.id })).length > 0;
    },
  };
}
