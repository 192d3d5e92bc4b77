// The plain aggregates: one implementation each for both stores (sql.ts says how). Those with a tuned
// part (projects, metrics, profiles, alerts) are their one implementation here with each store's
// tuned methods over it, put together in the stores' wiring; events and analytics stay per store.
import type { Repositories } from "../store.ts";
import { chartStore } from "./charts.ts";
import { checkStore } from "./checks.ts";
import { hookStore } from "./hooks.ts";
import { metaStore } from "./meta.ts";
import { auditStore } from "./audit.ts";
import { idempotencyStore } from "./idempotency.ts";
import { maintenanceStore } from "./maintenance.ts";
import { factorStore } from "./factors.ts";
import { shareStore } from "./shares.ts";
import { digestStore } from "./digests.ts";
import { notificationStore } from "./notifications.ts";
import type { Sql } from "./sql.ts";
import { tokenStore } from "./tokens.ts";
import { userStore } from "./users.ts";

export type PlainAggregate =
  | "charts"
  | "checks"
  | "hooks"
  | "meta"
  | "audit"
  | "idempotency"
  | "maintenance"
  | "shares"
  | "digests"
  | "notifications"
  | "tokens"
  | "users"
  | "factors";

export function plainRepositories(sql: Sql): Pick<Repositories, PlainAggregate> {
  return {
    charts: chartStore(sql),
    checks: checkStore(sql),
    hooks: hookStore(sql),
    meta: metaStore(sql),
    audit: auditStore(sql),
    idempotency: idempotencyStore(sql),
    maintenance: maintenanceStore(sql),
    shares: shareStore(sql),
    digests: digestStore(sql),
    notifications: notificationStore(sql),
    tokens: tokenStore(sql),
    users: userStore(sql),
    factors: factorStore(sql),
  };
}
