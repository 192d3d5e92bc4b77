// The plain aggregates: one implementation each for both stores (sql.ts says how). The tuned ones
// (events, metrics, profiles, analytics, and the reads of alerts) stay in store/sqlite and store/pg.
import type { Repositories } from "../store.ts";
import { chartStore } from "./charts.ts";
import { metaStore } from "./meta.ts";
import { auditStore } from "./audit.ts";
import { idempotencyStore } from "./idempotency.ts";
import { digestStore } from "./digests.ts";
import { notificationStore } from "./notifications.ts";
import type { Sql } from "./sql.ts";

export type PlainAggregate = "charts" | "meta" | "audit" | "idempotency" | "digests" | "notifications";

export function plainRepositories(sql: Sql): Pick<Repositories, PlainAggregate> {
  return {
    charts: chartStore(sql),
    meta: metaStore(sql),
    audit: auditStore(sql),
    idempotency: idempotencyStore(sql),
    digests: digestStore(sql),
    notifications: notificationStore(sql),
  };
}
