// Push subscriptions, integrations and the delivery queue. On PostgreSQL every instance shares the
// queue: a claim leases due deliveries with FOR UPDATE SKIP LOCKED (the `skipLocked` hook), so two
// workers never take the same one.
import {
  and,
  asc,
  count,
  desc,
  eq,
  getTableColumns,
  inArray,
  isNotNull,
  isNull,
  lt,
  lte,
  not,
  or,
  sql,
} from "drizzle-orm";
import type { NotificationRepository } from "../store.ts";
import { integrationChanges, integrationColumns, toIntegration } from "../notification-rows.ts";
import type { Sql } from "./sql.ts";

/** How many due deliveries a claim looks at per free slot, to find one each of different targets. */
const CANDIDATES = 4;

/** The first delivery of each target, in the order given, at most `limit`. */
function firstPerTarget(list: { id: number; target: string; targetId: number }[], limit: number): number[] {
  const seen = new Set<string>();
  const ids: number[] = [];
  for (const d of list) {
    const key = `${d.target}:${d.targetId}`;
    if (seen.has(key)) continue;
    seen.add(key);
    ids.push(d.id);
    if (ids.length === limit) break;
  }
  return ids;
}

export function notificationStore({ db, t, skipLocked }: Sql): NotificationRepository {
  const { deliveries, deliveryAttempts, integrations, pushSubscriptions: devices } = t;
  return {
    // --- subscriptions -------------------------------------------------------------------------

    async saveSubscription(s, now) {
      const [row] = await db
        .insert(devices)
        .values({ ...s, createdAt: now, refreshedAt: now })
        .onConflictDoUpdate({
          target: devices.endpoint,
          set: { userId: s.userId, p256dh: s.p256dh, auth: s.auth, deviceName: s.deviceName, refreshedAt: now },
        })
        .returning();
      return row!;
    },

    async refreshSubscription(userId, endpoint, now) {
      const refreshed = await db
        .update(devices)
        .set({ refreshedAt: now })
        .where(and(eq(devices.userId, userId), eq(devices.endpoint, endpoint)))
        .returning({ id: devices.id });
      return refreshed.length > 0;
    },

    async subscriptionsOf(userId) {
      return db.select().from(devices).where(eq(devices.userId, userId)).orderBy(asc(devices.createdAt));
    },

    async allSubscriptions() {
      return db.select().from(devices);
    },

    async subscriptionsWithOwner(id) {
      return db
        .select({ ...getTableColumns(devices), username: t.users.username })
        .from(devices)
        .innerJoin(t.users, eq(t.users.id, devices.userId))
        .where(id === undefined ? undefined : eq(devices.id, id))
        .orderBy(asc(devices.id));
    },

    async subscription(id) {
      const [row] = await db.select().from(devices).where(eq(devices.id, id)).limit(1);
      return row ?? null;
    },

    async setFilters(id, filters) {
      await db.update(devices).set({ filters }).where(eq(devices.id, id));
    },

    async setSubscriptionRoute(id, route) {
      await db.update(devices).set(route).where(eq(devices.id, id));
    },

    async deleteSubscription(id) {
      await db.delete(devices).where(eq(devices.id, id));
    },

    async pruneSubscriptions(notRefreshedSince) {
      const gone = await db
        .delete(devices)
        .where(lt(devices.refreshedAt, notRefreshedSince))
        .returning({ id: devices.id });
      return gone.length;
    },

    async recordSubscriptionOutcome(id, outcome, now) {
      const set = outcome.ok ? { lastSuccessAt: now } : { lastError: outcome.error, lastErrorAt: now };
      await db.update(devices).set(set).where(eq(devices.id, id));
    },

    // --- integrations --------------------------------------------------------------------------

    async createIntegration(i, now) {
      const [row] = await db
        .insert(integrations)
        .values({ ...integrationColumns(i), createdAt: now })
        .returning();
      return toIntegration(row!);
    },

    async updateIntegration(id, changes) {
      const [row] = await db
        .update(integrations)
        .set(integrationChanges(changes))
        .where(eq(integrations.id, id))
        .returning();
      return row ? toIntegration(row) : null;
    },

    async integrationsOf(projectId) {
      const rows = await db
        .select()
        .from(integrations)
        .where(eq(integrations.projectId, projectId))
        .orderBy(asc(integrations.createdAt), asc(integrations.id));
      return rows.map(toIntegration);
    },

    async integration(id) {
      const [row] = await db.select().from(integrations).where(eq(integrations.id, id)).limit(1);
      return row ? toIntegration(row) : null;
    },

    async integrationsCreatedBy(userId) {
      const [row] = await db
        .select({ n: count() })
        .from(integrations)
        .where(and(eq(integrations.createdByUserId, userId), eq(integrations.enabled, true)));
      return row?.n ?? 0;
    },

    /** Turns off the integrations a member added; returns how many were on. */
    async disableCreatedBy(userId) {
      const disabled = await db
        .update(integrations)
        .set({ enabled: false })
        .where(and(eq(integrations.createdByUserId, userId), eq(integrations.enabled, true)))
        .returning({ id: integrations.id });
      return disabled.length;
    },

    async setIntegrationEnabled(id, enabled) {
      await db.update(integrations).set({ enabled }).where(eq(integrations.id, id));
    },

    async deleteIntegration(id) {
      await db.delete(integrations).where(eq(integrations.id, id));
    },

    async recordIntegrationOutcome(id, outcome, now) {
      const set = outcome.ok ? { lastSuccessAt: now } : { lastError: outcome.error, lastErrorAt: now };
      await db.update(integrations).set(set).where(eq(integrations.id, id));
    },

    // --- the queue -----------------------------------------------------------------------------

    async enqueue(rows, now) {
      if (!rows.length) return 0;
      await db.insert(deliveries).values(rows.map((r) => ({ ...r, nextAttemptAt: now, createdAt: now })));
      return rows.length;
    },

    // Oldest first, at most one per device or integration, none of `except`'s. The candidates are
    // locked as they are read on PostgreSQL (skipping those another worker holds); on SQLite the
    // writer runs one transaction at a time, so nobody claims in between.
    async claim(now, limit, lease, except) {
      const targets = except.map((x) => and(eq(deliveries.target, x.target), eq(deliveries.targetId, x.targetId)));
      const candidates = await skipLocked(
        db
          .select({ id: deliveries.id, target: deliveries.target, targetId: deliveries.targetId })
          .from(deliveries)
          .where(
            and(
              eq(deliveries.status, "pending"),
              lte(deliveries.nextAttemptAt, now),
              or(isNull(deliveries.leaseUntil), lte(deliveries.leaseUntil, now)),
              targets.length ? not(or(...targets)!) : undefined,
            ),
          )
          .orderBy(asc(deliveries.nextAttemptAt), asc(deliveries.id))
          .limit(limit * CANDIDATES),
      );
      const due = firstPerTarget(candidates, limit);
      if (!due.length) return [];
      const claimed = await db
        .update(deliveries)
        .set({ leaseOwner: lease.owner, leaseUntil: lease.until })
        .where(inArray(deliveries.id, due))
        .returning();
      return claimed.sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || a.id - b.id);
    },

    async releaseLeases(owner) {
      const released = await db
        .update(deliveries)
        .set({ leaseOwner: null, leaseUntil: null })
        .where(
          and(isNotNull(deliveries.leaseOwner), owner === undefined ? undefined : eq(deliveries.leaseOwner, owner)),
        )
        .returning({ id: deliveries.id });
      return released.length;
    },

    async pendingCount() {
      const [row] = await db.select({ n: count() }).from(deliveries).where(eq(deliveries.status, "pending"));
      return row?.n ?? 0;
    },

    async settle(id, owner, attempt, next, now) {
      const settled = await db
        .update(deliveries)
        .set({
          status: next.status,
          attempts: sql`${deliveries.attempts} + 1`,
          nextAttemptAt: next.nextAttemptAt ?? now,
          lastError: attempt.error,
          finishedAt: next.status === "pending" ? null : now,
          leaseOwner: null,
          leaseUntil: null,
        })
        .where(and(eq(deliveries.id, id), eq(deliveries.leaseOwner, owner)))
        .returning({ id: deliveries.id });
      if (!settled.length) return false;
      await db
        .insert(deliveryAttempts)
        .values({ deliveryId: id, at: now, ok: attempt.ok, status: attempt.status, error: attempt.error });
      return true;
    },

    async abandon(target, targetId, now) {
      await db
        .update(deliveries)
        .set({ status: "gone", finishedAt: now })
        .where(and(eq(deliveries.target, target), eq(deliveries.targetId, targetId), eq(deliveries.status, "pending")));
    },

    async delivery(id) {
      const [row] = await db.select().from(deliveries).where(eq(deliveries.id, id)).limit(1);
      return row ?? null;
    },

    async deliveriesFor(target, targetIds, limit = 20) {
      if (!targetIds.length) return [];
      return db
        .select()
        .from(deliveries)
        .where(and(eq(deliveries.target, target), inArray(deliveries.targetId, targetIds)))
        .orderBy(desc(deliveries.id))
        .limit(limit);
    },

    async attemptsOf(deliveryId) {
      return db
        .select()
        .from(deliveryAttempts)
        .where(eq(deliveryAttempts.deliveryId, deliveryId))
        .orderBy(asc(deliveryAttempts.id));
    },

    async pruneDeliveries(before) {
      const gone = await db
        .delete(deliveries)
        .where(and(inArray(deliveries.status, ["sent", "failed", "gone"]), lt(deliveries.finishedAt, before)))
        .returning({ id: deliveries.id });
      return gone.length;
    },
  };
}
