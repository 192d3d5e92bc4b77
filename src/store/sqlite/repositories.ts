// The SQLite repositories over one connection (the writer's, the reader's, or a reader process's):
// the plain aggregates' one implementation (store/aggregates), and the tuned ones' synchronous
// queries as the seam's promises.
import { plainRepositories } from "../aggregates/index.ts";
import type { Sql, Tables } from "../aggregates/sql.ts";
import type { PgDb } from "../pg/db.ts";
import type { Repositories } from "../store.ts";
import type { Db } from "./db.ts";
import * as schema from "./schema.ts";
import type { SummaryKeeper } from "./summaries.ts";
import { alertStore } from "./alerts.ts";
import { analyticsStore } from "./analytics.ts";
import { eventStore } from "./events.ts";
import { metricStore } from "./metrics.ts";
import { profileStore } from "./profiles.ts";
import { projectStore } from "./projects.ts";
import { tokenStore } from "./tokens.ts";
import { userStore } from "./users.ts";

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
    t: schema as unknown as Tables,
    dialect: "sqlite",
    // The writer runs one write at a time, holding the database: nothing to lock.
    forUpdate: (query) => query,
    skipLocked: (query) => query,
    accessChanged: () => void accessChanges.count++,
  };
  return {
    ...plainRepositories(sql),
    projects: promised(projectStore(db, accessChanges, summaries)),
    events: promised(eventStore(db, searching, summaries)),
    metrics: promised(metricStore(db)),
    profiles: promised(profileStore(db, searching)),
    tokens: promised(tokenStore(db, accessChanges)),
    users: promised(userStore(db, accessChanges)),
    analytics: promised(analyticsStore(db, searching)),
    alerts: promised(alertStore(db, searching)),
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
