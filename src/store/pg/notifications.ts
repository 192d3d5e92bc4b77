// Push subscriptions, integrations and the delivery queue, shared by every instance: a claim leases
// due deliveries with FOR UPDATE SKIP LOCKED, so two workers never take the same one.
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
import { CANDIDATES, firstPerTarget } from "../queue.ts";
import type { Ctx } from "./context.ts";
import { type IntegrationRow, integrationChanges, integrationColumns, toIntegration } from "../notification-rows.ts";
import { deliveries, deliveryAttempts, integrations, pushSubscriptions, users } from "./schema.ts";

export function notificationStore({ db }: Ctx): NotificationRepository {
  return {
    // --- subscriptions -------------------------------------------------------------------------

    async saveSubscription(s, now) {
      const [row] = await db
        .insert(pushSubscriptions)
        .values({ ...s, createdAt: now, refreshedAt: now })
        .onConflictDoUpdate({
          target: pushSubscriptions.endpoint,
          set: { userId: s.userId, p256dh: s.p256dh, auth: s.auth, deviceName: s.deviceName, refreshedAt: now },
        })
        .returning();
      return row!;
    },

    async refreshSubscription(userId, endpoint, now) {
      return (
        (
          await db
            .update(pushSubscriptions)
            .set({ refreshedAt: now })
            .where(and(eq(pushSubscriptions.userId, userId), eq(pushSubscriptions.endpoint, endpoint)))
            .returning({ id: pushSubscriptions.id })
        ).length > 0
      );
    },

    async subscriptionsOf(userId) {
      return db
        .select()
        .from(pushSubscriptions)
        .where(eq(pushSubscriptions.userId, userId))
        .orderBy(asc(pushSubscriptions.createdAt));
    },

    async allSubscriptions() {
      return db.select().from(pushSubscriptions);
    },

    async subscriptionsWithOwner(id) {
      return db
        .select({ ...getTableColumns(pushSubscriptions), username: users.username })
        .from(pushSubscriptions)
        .innerJoin(users, eq(users.id, pushSubscriptions.userId))
        .where(id === undefined ? undefined : eq(pushSubscriptions.id, id))
        .orderBy(asc(pushSubscriptions.id));
    },

    async subscription(id) {
      return (await db.select().from(pushSubscriptions).where(eq(pushSubscriptions.id, id)).limit(1))[0] ?? null;
    },

    async setFilters(id, filters) {
      await db.update(pushSubscriptions).set({ filters }).where(eq(pushSubscriptions.id, id));
    },

    async setSubscriptionRoute(id, route) {
      await db.update(pushSubscriptions).set(route).where(eq(pushSubscriptions.id, id));
    },

    async deleteSubscription(id) {
      await db.delete(pushSubscriptions).where(eq(pushSubscriptions.id, id));
    },

    async pruneSubscriptions(notRefreshedSince) {
      return (
        await db
          .delete(pushSubscriptions)
          .where(lt(pushSubscriptions.refreshedAt, notRefreshedSince))
          .returning({ id: pushSubscriptions.id })
      ).length;
    },

    async recordSubscriptionOutcome(id, outcome, now) {
      const set = outcome.ok ? { lastSuccessAt: now } : { lastError: outcome.error, lastErrorAt: now };
      await db.update(pushSubscriptions).set(set).where(eq(pushSubscriptions.id, id));
    },

    // --- integrations --------------------------------------------------------------------------

    async createIntegration(i, now) {
      return toIntegration(
        (
          await db
            .insert(integrations)
            .values({ ...integrationColumns(i), createdAt: now })
            .returning()
        )[0] as IntegrationRow,
      );
    },

    async updateIntegration(id, changes) {
      const [row] = await db
        .update(integrations)
        .set(integrationChanges(changes))
        .where(eq(integrations.id, id))
        .returning();
      return row ? toIntegration(row as IntegrationRow) : null;
    },

    async integrationsOf(projectId) {
      return (
        (await db
          .select()
          .from(integrations)
          .where(eq(integrations.projectId, projectId))
          .orderBy(asc(integrations.createdAt), asc(integrations.id))) as IntegrationRow[]
      ).map(toIntegration);
    },

    async integration(id) {
      const [row] = await db.select().from(integrations).where(eq(integrations.id, id)).limit(1);
      return row ? toIntegration(row as IntegrationRow) : null;
    },

    async integrationsCreatedBy(userId) {
      return (
        (
          await db
            .select({ n: count() })
            .from(integrations)
            .where(and(eq(integrations.createdByUserId, userId), eq(integrations.enabled, true)))
        )[0]?.n ?? 0
      );
    },

    async disableCreatedBy(userId) {
      return (
        await db
          .update(integrations)
          .set({ enabled: false })
          .where(and(eq(integrations.createdByUserId, userId), eq(integrations.enabled, true)))
          .returning({ id: integrations.id })
      ).length;
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

    async claim(now, limit, lease, except) {
      const targets = except.map((t) => and(eq(deliveries.target, t.target), eq(deliveries.targetId, t.targetId)));
      const candidates = await db
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
        .limit(limit * CANDIDATES)
        .for("update", { skipLocked: true });
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
      return (
        await db
          .update(deliveries)
          .set({ leaseOwner: null, leaseUntil: null })
          .where(
            and(isNotNull(deliveries.leaseOwner), owner === undefined ? undefined : eq(deliveries.leaseOwner, owner)),
          )
          .returning({ id: deliveries.id })
      ).length;
    },

    async pendingCount() {
      return (await db.select({ n: count() }).from(deliveries).where(eq(deliveries.status, "pending")))[0]?.n ?? 0;
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
      return (await db.select().from(deliveries).where(eq(deliveries.id, id)).limit(1))[0] ?? null;
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
      return (
        await db
          .delete(deliveries)
          .where(and(inArray(deliveries.status, ["sent", "failed", "gone"]), lt(deliveries.finishedAt, before)))
          .returning({ id: deliveries.id })
      ).length;
    },
  };
}
