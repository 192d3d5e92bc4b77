// Projects and their channels. Finding a project by name and a channel's id (creating it) run for
// every event: each store keeps those tuned (store/sqlite/projects.ts, store/pg/projects.ts).
import { and, asc, count, eq } from "drizzle-orm";
import type { ProjectRepository } from "../store.ts";
import { hasNul, type Sql } from "./sql.ts";

/** What the ingest path asks of projects, per event: tuned by each store. */
export type ProjectLookups = Pick<ProjectRepository, "findByName" | "ensureChannel">;

export function projectStore({
  db,
  t,
  accessChanged,
  namesChanged,
  projectGone,
}: Sql): Omit<ProjectRepository, keyof ProjectLookups> {
  const { channels, events, projects } = t;
  return {
    async findById(id) {
      const [row] = await db.select().from(projects).where(eq(projects.id, id)).limit(1);
      return row ?? null;
    },

    async create(name, now = Date.now()) {
      const [row] = await db.insert(projects).values({ name, createdAt: now }).onConflictDoNothing().returning();
      return row ?? null;
    },

    async list() {
      return db.select().from(projects).orderBy(asc(projects.name));
    },

    async setRetention(id, days) {
      await db.update(projects).set({ retentionDays: days }).where(eq(projects.id, id));
      namesChanged(); // remembered projects carry it
    },

    async delete(id) {
      await projectGone(id);
      await db.delete(projects).where(eq(projects.id, id));
      accessChanged(); // its public tokens went with it
    },

    async findChannel(projectId, name) {
      if (hasNul(name)) return null;
      const [row] = await db
        .select()
        .from(channels)
        .where(and(eq(channels.projectId, projectId), eq(channels.name, name)))
        .limit(1);
      return row ?? null;
    },

    async createChannel(projectId, name, now = Date.now()) {
      const [row] = await db
        .insert(channels)
        .values({ projectId, name, createdAt: now })
        .onConflictDoNothing()
        .returning();
      return row ?? null;
    },

    async listChannels(projectId) {
      return db.select().from(channels).where(eq(channels.projectId, projectId)).orderBy(asc(channels.name));
    },

    async deleteChannel(channel) {
      await db.delete(channels).where(eq(channels.id, channel.id));
      namesChanged();
    },

    async countEvents(where) {
      const condition =
        "channelId" in where ? eq(events.channelId, where.channelId) : eq(events.projectId, where.projectId);
      const [row] = await db.select({ n: count() }).from(events).where(condition);
      return row?.n ?? 0;
    },
  };
}
