// What the ingest path asks of projects for every event (and a ping, for its check's) (the rest is store/aggregates/projects.ts):
// plain prepared statements, no query builder.
import type { Project } from "../../model/project.ts";
import type { ProjectLookups } from "../aggregates/projects.ts";
import type { Db } from "./db.ts";

export function projectLookups(db: Db) {
  const columns = "id, name, retention_days AS retentionDays, created_at AS createdAt";
  const byName = db.$client.prepare<Project, [string]>(`SELECT ${columns} FROM projects WHERE name = ?`);
  const byId = db.$client.prepare<Project, [number]>(`SELECT ${columns} FROM projects WHERE id = ?`);
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

    /** A ping's project, by its check's. */
    findById(id: number): Project | null {
      return byId.get(id);
    },

    ensureChannel(projectId: number, name: string, now: number): Awaited<ReturnType<ProjectLookups["ensureChannel"]>> {
      const found = channelByName.get(projectId, name);
      if (found) return { id: found.id, created: false };
      const inserted = insertChannel.get(projectId, name, now);
      if (inserted) return { id: inserted.id, created: true };
      return { id: channelByName.get(projectId, name)!.id, created: false };
    },
  };
}
