// Push subscriptions, integrations and the delivery queue.
import { and, asc, desc, eq, getTableColumns, inArray, isNotNull, isNull, lt, lte, not, or, sql } from "drizzle-orm";
import type { Db } from "./db.ts";
import { CANDIDATES, firstPerTarget } from "../queue.ts";
import { type IntegrationRow, integrationChanges, integrationColumns, toIntegration } from "../notification-rows.ts";
import { deliveries, deliveryAttempts, integrations, pushSubscriptions, users } from "./schema.ts";
import type {
  Delivery,
  DeliveryAttempt,
  Integration,
  IntegrationChanges,
  NewDelivery,
  NewIntegration,
  Outcome,
  QueueTarget,
  Subscription,
} from "../../model/notification.ts";

export function notificationStore(db: Db) {
  return {
    // --- subscriptions -------------------------------------------------------------------------

    /** Creates or refreshes the device with this endpoint (a browser keeps one per origin). */
    saveSubscription(
      s: { userId: number; endpoint: string; p256dh: string; auth: string; deviceName: string },
      now: number,
    ): Subscription {
      return db
        .insert(pushSubscriptions)
        .values({ ...s, createdAt: now, refreshedAt: now })
        .onConflictDoUpdate({
          target: pushSubscriptions.endpoint,
          set: { userId: s.userId, p256dh: s.p256dh, auth: s.auth, deviceName: s.deviceName, refreshedAt: now },
        })
        .returning()
        .get();
    },

    refreshSubscription(userId: number, endpoint: string, now: number): boolean {
      const rows = db
        .update(pushSubscriptions)
        .set({ refreshedAt: now })
        .where(and(eq(pushSubscriptions.userId, userId), eq(pushSubscriptions.endpoint, endpoint)))
        .returning({ id: pushSubscriptions.id })
        .all();
      return rows.length > 0;
    },

    subscriptionsOf(userId: number): Subscription[] {
      return db
        .select()
        .from(pushSubscriptions)
        .where(eq(pushSubscriptions.userId, userId))
        .orderBy(asc(pushSubscriptions.createdAt))
        .all();
    },

    allSubscriptions(): Subscription[] {
      return db.select().from(pushSubscriptions).all();
    },

    /** Every device with its user's name, oldest first; `id` narrows it to one. */
    subscriptionsWithOwner(id?: number): (Subscription & { username: string })[] {
      return db
        .select({ ...getTableColumns(pushSubscriptions), username: users.username })
        .from(pushSubscriptions)
        .innerJoin(users, eq(users.id, pushSubscriptions.userId))
        .where(id === undefined ? undefined : eq(pushSubscriptions.id, id))
        .orderBy(asc(pushSubscriptions.id))
        .all();
    },

    subscription(id: number): Subscription | null {
      return db.select().from(pushSubscriptions).where(eq(pushSubscriptions.id, id)).get() ?? null;
    },

    setFilters(id: number, filters: string | null): void {
      db.update(pushSubscriptions).set({ filters }).where(eq(pushSubscriptions.id, id)).run();
    },

    setSubscriptionRoute(id: number, route: { tags: string | null; minPriority: number }): void {
      db.update(pushSubscriptions).set(route).where(eq(pushSubscriptions.id, id)).run();
    },

    deleteSubscription(id: number): void {
      db.delete(pushSubscriptions).where(eq(pushSubscriptions.id, id)).run();
    },

    pruneSubscriptions(notRefreshedSince: number): number {
      return db
        .delete(pushSubscriptions)
        .where(lt(pushSubscriptions.refreshedAt, notRefreshedSince))
        .returning({ id: pushSubscriptions.id })
        .all().length;
    },

    recordSubscriptionOutcome(id: number, outcome: Outcome, now: number): void {
      const set = outcome.ok ? { lastSuccessAt: now } : { lastError: outcome.error, lastErrorAt: now };
      db.update(pushSubscriptions).set(set).where(eq(pushSubscriptions.id, id)).run();
    },

    // --- integrations --------------------------------------------------------------------------

    createIntegration(i: NewIntegration, now: number): Integration {
      return toIntegration(
        db
          .insert(integrations)
          .values({ ...integrationColumns(i), createdAt: now })
          .returning()
          .get() as IntegrationRow,
      );
    },

    updateIntegration(id: number, changes: IntegrationChanges): Integration | null {
      const row = db
        .update(integrations)
        .set(integrationChanges(changes))
        .where(eq(integrations.id, id))
        .returning()
        .get();
      return row ? toIntegration(row as IntegrationRow) : null;
    },

    integrationsOf(projectId: number): Integration[] {
      return (
        db
          .select()
          .from(integrations)
          .where(eq(integrations.projectId, projectId))
          .orderBy(asc(integrations.createdAt), asc(integrations.id))
          .all() as IntegrationRow[]
      ).map(toIntegration);
    },

    integration(id: number): Integration | null {
      const row = db.select().from(integrations).where(eq(integrations.id, id)).get();
      return row ? toIntegration(row as IntegrationRow) : null;
    },

    integrationsCreatedBy(userId: number): number {
      return (
        db
          .select({ n: sql<number>`count(*)` })
          .from(integrations)
          .where(and(eq(integrations.createdByUserId, userId), eq(integrations.enabled, true)))
          .get()?.n ?? 0
      );
    },

    /** Turns off the integrations a member added; returns how many were on. */
    disableCreatedBy(userId: number): number {
      return db
        .update(integrations)
        .set({ enabled: false })
        .where(and(eq(integrations.createdByUserId, userId), eq(integrations.enabled, true)))
        .returning({ id: integrations.id })
        .all().length;
    },

    setIntegrationEnabled(id: number, enabled: boolean): void {
      db.update(integrations).set({ enabled }).where(eq(integrations.id, id)).run();
    },

    deleteIntegration(id: number): void {
      db.delete(integrations).where(eq(integrations.id, id)).run();
    },

    recordIntegrationOutcome(id: number, outcome: Outcome, now: number): void {
      const set = outcome.ok ? { lastSuccessAt: now } : { lastError: outcome.error, lastErrorAt: now };
      db.update(integrations).set(set).where(eq(integrations.id, id)).run();
    },

    // --- the queue -----------------------------------------------------------------------------

    enqueue(rows: NewDelivery[], now: number): number {
      if (!rows.length) return 0;
      db.insert(deliveries)
        .values(rows.map((r) => ({ ...r, nextAttemptAt: now, createdAt: now })))
        .run();
      return rows.length;
    },

    /**
     * Leases due deliveries, oldest first, at most one per device or integration and none of
     * `except`'s (the writer runs one transaction at a time: nobody claims in between).
     */
    claim(now: number, limit: number, lease: { owner: string; until: number }, except: QueueTarget[]): Delivery[] {
      const targets = except.map((t) => and(eq(deliveries.target, t.target), eq(deliveries.targetId, t.targetId)));
      const candidates = db
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
        .all();
      const due = firstPerTarget(candidates, limit);
      if (!due.length) return [];
      return db
        .update(deliveries)
        .set({ leaseOwner: lease.owner, leaseUntil: lease.until })
        .where(inArray(deliveries.id, due))
        .returning()
        .all()
        .sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || a.id - b.id);
    },

    releaseLeases(owner?: string): number {
      return db
        .update(deliveries)
        .set({ leaseOwner: null, leaseUntil: null })
        .where(
          and(isNotNull(deliveries.leaseOwner), owner === undefined ? undefined : eq(deliveries.leaseOwner, owner)),
        )
        .returning({ id: deliveries.id })
        .all().length;
    },

    pendingCount(): number {
      return (
        db.select({ n: sql<number>`count(*)` }).from(deliveries).where(eq(deliveries.status, "pending")).get()?.n ?? 0
      );
    },

    /** Records one attempt, and the delivery's new state. */
    settle(
      id: number,
      owner: string,
      attempt: { ok: boolean; status: number | null; error: string | null },
      next: { status: Delivery["status"]; nextAttemptAt?: number },
      now: number,
    ): boolean {
      const settled = db
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
        .returning({ id: deliveries.id })
        .get();
      if (!settled) return false;
      db.insert(deliveryAttempts)
        .values({ deliveryId: id, at: now, ok: attempt.ok, status: attempt.status, error: attempt.error })
        .run();
      return true;
    },

    /** A target is gone (a subscription the push service no longer knows): drop what was queued for it. */
    abandon(target: Delivery["target"], targetId: number, now: number): void {
      db.update(deliveries)
        .set({ status: "gone", finishedAt: now })
        .where(and(eq(deliveries.target, target), eq(deliveries.targetId, targetId), eq(deliveries.status, "pending")))
        .run();
    },

    delivery(id: number): Delivery | null {
      return db.select().from(deliveries).where(eq(deliveries.id, id)).get() ?? null;
    },

    deliveriesFor(target: Delivery["target"], targetIds: number[], limit = 20): Delivery[] {
      if (!targetIds.length) return [];
      return db
        .select()
        .from(deliveries)
        .where(and(eq(deliveries.target, target), inArray(deliveries.targetId, targetIds)))
        .orderBy(desc(deliveries.id))
        .limit(limit)
        .all();
    },

    attemptsOf(deliveryId: number): DeliveryAttempt[] {
      return db
        .select()
        .from(deliveryAttempts)
        .where(eq(deliveryAttempts.deliveryId, deliveryId))
        .orderBy(asc(deliveryAttempts.id))
        .all();
    },

    /** Forgets finished deliveries (and their attempts) older than `before`. */
    pruneDeliveries(before: number): number {
      return db
        .delete(deliveries)
        .where(and(inArray(deliveries.status, ["sent", "failed", "gone"]), lt(deliveries.finishedAt, before)))
        .returning({ id: deliveries.id })
        .all().length;
    },
  };
}
