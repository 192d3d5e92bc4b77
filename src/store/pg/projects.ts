// Projects and their channels.
import { and, asc, count, eq } from "drizzle-orm";
import type { Channel } from "../../model/project.ts";
import type { ProjectRepository } from "../store.ts";
import { batchOf, type Ctx } from "./context.ts";
import { channels, events, eventTags, projects } from "./schema.ts";

export function projectStore(ctx: Ctx): ProjectRepository {
  const { db } = ctx;
  return {
    async findByName(name) {
      return (await db.select().from(projects).where(eq(projects.name, name)).limit(1))[0] ?? null;
    },

    async findById(id) {
      return (await db.select().from(projects).where(eq(projects.id, id)).limit(1))[0] ?? null;
    },

    async create(name, now = Date.now()) {
      return (await db.insert(projects).values({ name, createdAt: now }).onConflictDoNothing().returning())[0] ?? null;
    },

    async list() {
      return db.select().from(projects).orderBy(asc(projects.name));
    },

    async setRetention(id, days) {
      await db.update(projects).set({ retentionDays: days }).where(eq(projects.id, id));
    },

    async delete(id) {
      await db.delete(eventTags).where(eq(eventTags.projectId, id));
      await db.delete(projects).where(eq(projects.id, id));
      batchOf(ctx).accessChanged(); // its public tokens went with it
    },

    async findChannel(projectId, name) {
      return (await db.select().from(channels).where(and(eq(channels.projectId, projectId), eq(channels.name, name))).limit(1))[0] ?? null;
    },

    async ensureChannel(projectId, name, now) {
      const found = await db.select({ id: channels.id }).from(channels).where(and(eq(channels.projectId, projectId), eq(channels.name, name))).limit(1);
      if (found[0]) return { id: found[0].id, created: false };
      const inserted = await db.insert(channels).values({ projectId, name, createdAt: now }).onConflictDoNothing().returning({ id: channels.id });
      if (inserted[0]) return { id: inserted[0].id, created: true };
      const again = await db.select({ id: channels.id }).from(channels).where(and(eq(channels.projectId, projectId), eq(channels.name, name))).limit(1);
      return { id: again[0]!.id, created: false };
    },

    async createChannel(projectId, name, now = Date.now()) {
      return (await db.insert(channels).values({ projectId, name, createdAt: now }).onConflictDoNothing().returning())[0] ?? null;
    },

    async listChannels(projectId) {
      return db.select().from(channels).where(eq(channels.projectId, projectId)).orderBy(asc(channels.name));
    },

    async deleteChannel(channel: Channel) {
      await db.delete(channels).where(eq(channels.id, channel.id));
    },

    async countEvents(where) {
      const condition = "channelId" in where ? eq(events.channelId, where.channelId) : eq(events.projectId, where.projectId);
      return (await db.select({ n: count() }).from(events).where(condition))[0]?.n ?? 0;
    },
  };
}
