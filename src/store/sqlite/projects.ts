// Projects and their channels.
import { and, asc, count, eq } from "drizzle-orm";
import type { Db } from "./db.ts";
import type { SummaryKeeper } from "./summaries.ts";
import { eventTags } from "./manual-tables.ts";
import { channels, events, projects } from "./schema.ts";
import type { Channel, Project } from "../../model/project.ts";

/** `summaries`: the writer's, whose project's summaries go with it. */
export function projectStore(db: Db, accessChanges: { count: number }, summaries?: SummaryKeeper) {
  // The ingest path runs these for every event: plain prepared statements, no query builder.
  const byName = db.$client.prepare<Project, [string]>(
    "SELECT id, name, retention_days AS retentionDays, created_at AS createdAt FROM projects WHERE name = ?",
  );
  const channelByName = db.$client.prepare<{ id: number }, [number, string]>(
    "SELECT id FROM channels WHERE project_id = ? AND name = ?",
  );
  const insertChannel = db.$client.prepare<{ id: number }, [number, string, number]>(
    "INSERT INTO channels (project_id, name, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING RETURNING id",
  );

  return {
    findByName(name: string): Project | null {
      return byName.get(name);
    },

    findById(id: number): Project | null {
      return db.select().from(projects).where(eq(projects.id, id)).get() ?? null;
    },

    /** Returns null when a project of that name already exists. */
    create(name: string, now = Date.now()): Project | null {
      return db.insert(projects).values({ name, createdAt: now }).onConflictDoNothing().returning().get() ?? null;
    },

    list(): Project[] {
      return db.select().from(projects).orderBy(asc(projects.name)).all();
    },

    setRetention(id: number, days: number | null): void {
      db.update(projects).set({ retentionDays: days }).where(eq(projects.id, id)).run();
    },

    /** Deletes the project with its channels, metrics and tokens; delete its events first (events.deleteBatch). */
    delete(id: number): void {
      db.delete(eventTags).where(eq(eventTags.projectId, id)).run();
      summaries?.forget(id);
      db.delete(projects).where(eq(projects.id, id)).run();
      accessChanges.count++; // its public tokens went with it
    },

    findChannel(projectId: number, name: string): Channel | null {
      return (
        db
          .select()
          .from(channels)
          .where(and(eq(channels.projectId, projectId), eq(channels.name, name)))
          .get() ?? null
      );
    },

    /** The channel's id, creating the channel on first use. Runs on the ingest path: prepared. */
    ensureChannel(projectId: number, name: string, now: number): { id: number; created: boolean } {
      const found = channelByName.get(projectId, name);
      if (found) return { id: found.id, created: false };
      const inserted = insertChannel.get(projectId, name, now);
      if (inserted) return { id: inserted.id, created: true };
      return { id: channelByName.get(projectId, name)!.id, created: false };
    },

    /** Returns null when the channel already exists. */
    createChannel(projectId: number, name: string, now = Date.now()): Channel | null {
      return (
        db.insert(channels).values({ projectId, name, createdAt: now }).onConflictDoNothing().returning().get() ?? null
      );
    },

    listChannels(projectId: number): Channel[] {
      return db.select().from(channels).where(eq(channels.projectId, projectId)).orderBy(asc(channels.name)).all();
    },

    /** Deletes an empty channel; delete its events first (events.deleteBatch). */
    deleteChannel(channel: Channel): void {
      db.delete(channels).where(eq(channels.id, channel.id)).run();
    },

    countEvents(where: { projectId: number } | { channelId: number }): number {
      const condition =
        "channelId" in where ? eq(events.channelId, where.channelId) : eq(events.projectId, where.projectId);
      return db.select({ n: count() }).from(events).where(condition).get()?.n ?? 0;
    },
  };
}
