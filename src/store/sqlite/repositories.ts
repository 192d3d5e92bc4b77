// The SQLite repositories: each aggregate's queries as plain synchronous functions of a
// connection (the writer's, the reader's, or a reader process's), and the same as the seam's promises.
import type { Repositories } from "../store.ts";
import type { Db } from "./db.ts";
import type { SummaryKeeper } from "./summaries.ts";
import { alertStore } from "./alerts.ts";
import { analyticsStore } from "./analytics.ts";
import { auditStore } from "./audit.ts";
import { chartStore } from "./charts.ts";
import { digestStore } from "./digests.ts";
import { eventStore } from "./events.ts";
import { idempotencyStore } from "./idempotency.ts";
import { metaStore } from "./meta.ts";
import { metricStore } from "./metrics.ts";
import { notificationStore } from "./notifications.ts";
import { profileStore } from "./profiles.ts";
import { projectStore } from "./projects.ts";
import { tokenStore } from "./tokens.ts";
import { userStore } from "./users.ts";

export type SyncRepositories = ReturnType<typeof syncRepositories>;
export type AccessChanges = { count: number };

/** `summaries`: on the writer's connection, what keeps the summaries of its writes (summaries.ts). */
export function syncRepositories(db: Db, searching: () => Db, accessChanges: AccessChanges, summaries?: SummaryKeeper) {
  return {
    projects: projectStore(db, accessChanges, summaries),
    events: eventStore(db, searching, summaries),
    metrics: metricStore(db),
    profiles: profileStore(db, searching),
    tokens: tokenStore(db, accessChanges),
    users: userStore(db, accessChanges),
    notifications: notificationStore(db),
    digests: digestStore(db),
    idempotency: idempotencyStore(db),
    meta: metaStore(db),
    analytics: analyticsStore(db, searching),
    charts: chartStore(db),
    alerts: alertStore(db, searching),
    audit: auditStore(db),
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

export function repositories(sync: SyncRepositories): Repositories {
  return {
    projects: promised(sync.projects),
    events: promised(sync.events),
    metrics: promised(sync.metrics),
    profiles: promised(sync.profiles),
    tokens: promised(sync.tokens),
    users: promised(sync.users),
    notifications: promised(sync.notifications),
    digests: promised(sync.digests),
    idempotency: promised(sync.idempotency),
    meta: promised(sync.meta),
    analytics: promised(sync.analytics),
    charts: promised(sync.charts),
    alerts: promised(sync.alerts),
    audit: promised(sync.audit),
  };
}
