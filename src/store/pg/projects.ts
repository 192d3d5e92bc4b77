// What the ingest path asks of projects for every event (the rest is store/aggregates/projects.ts):
// ids by name from this instance's name cache (names.ts), the database only on a miss.
import { and, eq } from "drizzle-orm";
import { hasNul } from "../aggregates/sql.ts";
import type { ProjectLookups } from "../aggregates/projects.ts";
import type { Ctx } from "./context.ts";
import type { Found } from "./names.ts";
import { channels, projects } from "./schema.ts";

export function projectLookups(ctx: Ctx): ProjectLookups {
  const { db, names } = ctx;
  /** Keeps what a read outside a batch saw (committed); inside a batch, once it commits. */
  const found = (f: Found, stamp: string) => (ctx.batch ? ctx.batch.found(f) : names.remember([f], stamp));
  const channelId = async (projectId: number, name: string) =>
    (
      await db
        .select({ id: channels.id })
        .from(channels)
        .where(and(eq(channels.projectId, projectId), eq(channels.name, name)))
        .limit(1)
    )[0]?.id;

  return {
    async findByName(name) {
      if (hasNul(name)) return null;
      const known = names.project(name);
      if (known) return known;
      const stamp = names.stamp;
      const [project] = await db.select().from(projects).where(eq(projects.name, name)).limit(1);
      if (project) found({ project }, stamp);
      return project ?? null;
    },

    async ensureChannel(projectId, name, now) {
      const known = names.channel(projectId, name);
      if (known !== undefined) return { id: known, created: false };
      const stamp = names.stamp;
      const existing = await channelId(projectId, name);
      const [inserted] =
        existing === undefined
          ? await db
              .insert(channels)
              .values({ projectId, name, createdAt: now })
              .onConflictDoNothing()
              .returning({ id: channels.id })
          : [];
      const id = existing ?? inserted?.id ?? (await channelId(projectId, name))!;
      found({ channel: { projectId, name, id } }, stamp);
      return { id, created: inserted !== undefined };
    },
  };
}
