// The SQLite repositories over one connection (the writer's, the reader's, or a reader process's):
// the plain aggregates' one implementation (store/aggregates), and the tuned ones' synchronous
// queries as the seam's promises.
import { alertRules } from "../aggregates/alerts.ts";
import { plainRepositories } from "../aggregates/index.ts";
import { metricStore } from "../aggregates/metrics.ts";
import { profileReads, profileStore } from "../aggregates/profiles.ts";
import { projectStore } from "../aggregates/projects.ts";
import type { Sql, Tables } from "../aggregates/sql.ts";
import type { PgDb } from "../pg/db.ts";
import type { Repositories } from "../store.ts";
import { eq, sql as sqlText } from "drizzle-orm";
import type { Db } from "./db.ts";
import { eventTags } from "./manual-tables.ts";
import * as schema from "./schema.ts";
import type { SummaryKeeper } from "./summaries.ts";
import { alertReads } from "./alerts.ts";
import { analyticsStore } from "./analytics.ts";
import { eventStore } from "./events.ts";
import { tunedMetrics } from "./metrics.ts";
import { userListSource } from "./users-list.ts";
import { projectLookups } from "./projects.ts";
import { checkLookups } from "./checks.ts";

export type AccessChanges = { count: number };

/** `summaries`: on the writer's connection, what keeps the summaries of its writes (summaries.ts). */
export function repositories(
  db: Db,
  searching: () => Db,
  accessChanges: AccessChanges,
  summaries?: SummaryKeeper,
): Repositories {
  const sql: Sql = {
    // Typed as PostgreSQL's (aggregates/sql.ts): the same tables, and every query awaited.
    db: db as unknown as PgDb,
    t: { ...schema, eventTags } as unknown as Tables,
    dialect: "sqlite",
    // The writer runs one write at a time, holding the database: nothing to lock.
    forUpdate: (query) => query,
    skipLocked: (query) => query,
    accessChanged: () => void accessChanges.count++,
    lockName: async () => {},
    namesChanged: () => {},
    async projectGone(projectId) {
      db.delete(eventTags).where(eq(eventTags.projectId, projectId)).run();
      summaries?.forget(projectId);
    },
    mergeJson: (old, patch) => sqlText`json_patch(${old ?? sqlText`'{}'`}, ${patch})`,
    idIn: (column, ids) => sqlText`${column} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`,
  };
  const plain = plainRepositories(sql);
  return {
    ...plain,
    checks: { ...plain.checks, ...checkLookups(db) },
    projects: { ...projectStore(sql), ...promised(projectLookups(db)) },
    events: promised(eventStore(db, searching, summaries)),
    metrics: { ...metricStore(sql), ...promised(tunedMetrics(db)) },
    profiles: { ...profileStore(sql), ...profileReads(userListSource(db, searching)) },
    analytics: promised(analyticsStore(db, searching)),
    alerts: { ...alertRules(sql), ...promised(alertReads(db, searching)) },
  };
}

/** An aggregate's synchronous queries as the seam's promises (already settled: SQLite answered). */
function promised<T extends object>(
  sync: T,
): { [K in keyof T]: T[K] extends (...a: infer A) => infer R ? (...a: A) => Promise<Awaited<R>> : never } {
  const out: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(sync) as [string, (...a: unknown[]) => unknown][]) {
    out[name] = (...args: unknown[]) => {
      try {
        return Promise.resolve(fn(...args));
      } catch (error) {
        return Promise.reject(error);
      }
    };
  }
  return out as never;
}
