// Projects and their channels.
import { hasNul } from "./db.ts";
import { and, asc, count, eq } from "drizzle-orm";
import type { Channel } from "../../model/project.ts";
import type { ProjectRepository } from "../store.ts";
import { batchOf, type Ctx } from "./context.ts";
import type { Found } from "./names.ts";
import { channels, events, eventTags, projects } from "./schema.ts";

export function projectStore(ctx: Ctx): ProjectRepository {
  const { db, names } = ctx;
  /** Keeps what a read outside a batch saw (committed); inside a batch, once it commits. */
  const found = (f: Found, stamp: string) => (ctx.batch ? ctx.batch.found(f) : names.remember([f], stamp));
  /** Forgotten by every instance: ids by name change. */
  const renamed = () => batchOf(ctx).accessChanged();

  return {
    async findByName(name) {
      if (hasNul(name)) return null; // PostgreSQL refuses to compare with it; nothing stored has it
      const known = names.project(name);
      if (known) return known;
      const stamp = names.stamp;
      const project = (await db.select().from(projects).where(eq(projects.name, name)).limit(1))[0] ?? null;
      if (project) found({ project }, stamp);
      return project;
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
      renamed(); // remembered projects carry it
    },

    async delete(id) {
      await db.delete(eventTags).where(eq(eventTags.projectId, id));
      await db.delete(projects).where(eq(projects.id, id));
      renamed(); // and its public tokens went with it: access changed too
    },

    async findChannel(projectId, name) {
      if (hasNul(name)) return null;
      return (
        (
          await db
            .select()
            .from(channels)
            .where(and(eq(channels.projectId, projectId), eq(channels.name, name)))
            .limit(1)
        )[0] ?? null
      );
    },

    async ensureChannel(projectId, name, now) {
      const known = names.channel(projectId, name);
      if (known !== undefined) return { id: known, created: false };
      const stamp = names.stamp;
      const existing = await db
        .select({ id: channels.id })
        .from(channels)
        .where(and(eq(channels.projectId, projectId), eq(channels.name, name)))
        .limit(1);
      const inserted = existing[0]
        ? []
        : await db
            .insert(channels)
            .values({ projectId, name, createdAt: now })
            .onConflictDoNothing()
            .returning({ id: channels.id });
      const id =
        existing[0]?.id ??
        inserted[0]?.id ??
        (
          await db
            .select({ id: channels.id })
            .from(channels)
            .where(and(eq(channels.projectId, projectId), eq(channels.name, name)))
            .limit(1)
        )[0]!.id;
      found({ channel: { projectId, name, id } }, stamp);
      return { id, created: inserted.length > 0 };
    },

    async createChannel(projectId, name, now = Date.now()) {
      return (
        (await db.insert(channels).values({ projectId, name, createdAt: now }).onConflictDoNothing().returning())[0] ??
        null
      );
    },

    async listChannels(projectId) {
      return db.select().from(channels).where(eq(channels.projectId, projectId)).orderBy(asc(channels.name));
    },

    async deleteChannel(channel: Channel) {
      await db.delete(channels).where(eq(channels.id, channel.id));
      renamed();
    },

    async countEvents(where) {
      const condition =
        "channelId" in where ? eq(events.channelId, where.channelId) : eq(events.projectId, where.projectId);
      return (await db.select({ n: count() }).from(events).where(condition))[0]?.n ?? 0;
    },
  };
}
