// The repositories' contract, run against the store of the pass (SQLite, or PostgreSQL in npm
// test's second pass): what each plain aggregate (src/store/aggregates) promises, written once.
// Every write goes through the store's front (a transaction of its own), as services call it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { openPgStore } from "../../src/store/pg/index.ts";
import { openSqliteStore } from "../../src/store/sqlite/index.ts";
import { IDEMPOTENCY_TTL_MS } from "../../src/store/aggregates/idempotency.ts";
import { ACCESS, type Store } from "../../src/store/store.ts";
import { createDatabase, dropDatabase } from "../pg-cluster.ts";
import { POSTGRES, tempDir } from "../helpers.ts";

const NOW = Date.UTC(2026, 10, 1);

let store: Store;
let close: () => Promise<void>;
let names = 0;

beforeAll(async () => {
  if (POSTGRES) {
    const url = await createDatabase(POSTGRES);
    const pg = await openPgStore(url);
    store = pg;
    close = async () => {
      await pg.close();
      await dropDatabase(POSTGRES!, url);
    };
  } else {
    const sqlite = openSqliteStore(join(tempDir(), "signalboard.db"));
    store = sqlite;
    close = () => sqlite.close();
  }
});
afterAll(() => close());

/** A project of its own for each test. */
async function project(): Promise<number> {
  const made = await store.projects.create(`contract-${++names}`, NOW);
  return made!.id;
}

describe("the store's front", () => {
  test("has every method ACCESS declares, and no other", () => {
    for (const [aggregate, methods] of Object.entries(ACCESS)) {
      const front = (store as unknown as Record<string, Record<string, unknown>>)[aggregate]!;
      expect({ aggregate, methods: Object.keys(front).sort() }).toEqual({
        aggregate,
        methods: Object.keys(methods).sort(),
      });
    }
  });

  test("runs a write that throws as a transaction undone alone", async () => {
    const id = await project();
    await expect(
      store.tx(async (r) => {
        await r.charts.create({ projectId: id, kind: "series", name: "gone", definition: {}, createdAt: NOW }, NOW);
        throw new Error("changed my mind");
      }),
    ).rejects.toThrow("changed my mind");
    expect(await store.charts.list(id)).toEqual([]);
  });
});

describe("charts", () => {
  test("are created, found, listed in order, changed and deleted", async () => {
    const projectId = await project();
    const definition = { event: "Signed up", interval: "day", nested: { a: [1, "ü"] } };
    const a = await store.charts.create(
      { projectId, kind: "series", name: "Sign-ups", definition, createdAt: NOW },
      NOW,
    );
    const b = await store.charts.create(
      { projectId, kind: "funnel", name: "Checkout", definition: { steps: ["a", "b"] }, createdAt: NOW },
      NOW + 1,
    );
    expect(a).toEqual({
      id: a.id,
      projectId,
      kind: "series",
      name: "Sign-ups",
      definition,
      createdAt: NOW,
      updatedAt: NOW,
    });
    expect(await store.charts.find(a.id)).toEqual(a);
    expect((await store.charts.list(projectId)).map((c) => c.id)).toEqual([a.id, b.id]);

    const changed = await store.charts.update(a.id, { name: "Sign ups" }, NOW + 5);
    expect(changed).toEqual({ ...a, name: "Sign ups", updatedAt: NOW + 5 });
    expect(await store.charts.update(a.id, { definition: { event: "x" } }, NOW + 6)).toMatchObject({
      name: "Sign ups",
      definition: { event: "x" },
    });
    expect(await store.charts.update(999_999, { name: "none" }, NOW)).toBeNull();

    expect(await store.charts.delete(a.id)).toBe(true);
    expect(await store.charts.delete(a.id)).toBe(false);
    expect(await store.charts.find(a.id)).toBeNull();
  });

  test("keep a dashboard's layout, and a locked read of one never arranged finds none", async () => {
    const projectId = await project();
    expect(await store.charts.layout(projectId)).toBeNull();
    expect(await store.tx((r) => r.charts.layout(projectId, { lock: true }))).toBeNull();
    await store.charts.setLayout(projectId, ["activity", 3, 1], NOW);
    expect(await store.charts.layout(projectId)).toEqual(["activity", 3, 1]);
    await store.tx(async (r) => {
      const cards = await r.charts.layout(projectId, { lock: true });
      await r.charts.setLayout(projectId, [...(cards ?? []), 7], NOW + 1);
    });
    expect(await store.charts.layout(projectId)).toEqual(["activity", 3, 1, 7]);
  });
});

describe("meta", () => {
  test("keeps a value by key, replaced by the next, and a probe leaves nothing", async () => {
    expect(await store.meta.get("contract.none")).toBeNull();
    await store.meta.set("contract.key", "one");
    expect(await store.meta.get("contract.key")).toBe("one");
    await store.meta.set("contract.key", "two ü");
    expect(await store.meta.get("contract.key")).toBe("two ü");
    await store.meta.probe();
    await store.tx((r) => r.meta.probe());
    expect(await store.meta.get("readiness.probe")).toBeNull();
  });
});

describe("audit", () => {
  test("lists newest first, pages by id, and prunes all but the newest", async () => {
    const entry = (subject: string) => ({
      at: NOW,
      action: "token.created" as const,
      actor: "ann",
      actorUserId: null,
      ip: "192.0.2.1",
      subject,
      detail: null,
    });
    for (const subject of ["a", "b", "c"]) await store.audit.record(entry(subject));
    const [c, b] = await store.audit.list({ limit: 2 });
    expect([c?.subject, b?.subject]).toEqual(["c", "b"]);
    expect(c).toEqual({ id: c!.id, ...entry("c") });
    expect((await store.audit.list({ before: c!.id, limit: 10 })).map((e) => e.subject).slice(0, 2)).toEqual([
      "b",
      "a",
    ]);
    expect(await store.audit.prune(1)).toBeGreaterThanOrEqual(2);
    expect((await store.audit.list({ limit: 10 })).map((e) => e.subject)).toEqual(["c"]);
    expect(await store.audit.prune(1)).toBe(0);
  });
});

describe("idempotency", () => {
  test("a key is claimed once per token, keeps its answer, and is free again after a day", async () => {
    const [token, other] = [900_001, 900_002];
    expect(await store.idempotency.claim(token, "k", "fp1", NOW)).toBeNull();
    expect(await store.idempotency.claim(token, "k", "fp2", NOW + 1)).toEqual({ fingerprint: "fp1", response: "" });
    expect(await store.idempotency.claim(other, "k", "fp2", NOW + 1)).toBeNull();
    await store.idempotency.complete(token, "k", '{"ok":true}');
    expect(await store.idempotency.claim(token, "k", "fp2", NOW + 2)).toEqual({
      fingerprint: "fp1",
      response: '{"ok":true}',
    });
    expect(await store.idempotency.claim(token, "k", "fp3", NOW + IDEMPOTENCY_TTL_MS - 1)).not.toBeNull();
    expect(await store.idempotency.claim(token, "k", "fp3", NOW + IDEMPOTENCY_TTL_MS)).toBeNull();
    expect(await store.idempotency.claim(token, "k", "fp4", NOW + IDEMPOTENCY_TTL_MS)).toEqual({
      fingerprint: "fp3",
      response: "",
    });
  });

  test("prune forgets the keys older than a day", async () => {
    const token = 900_003;
    await store.idempotency.claim(token, "old", "fp", NOW - 10);
    await store.idempotency.claim(token, "new", "fp", NOW);
    expect(await store.idempotency.prune(NOW + IDEMPOTENCY_TTL_MS - 5)).toBeGreaterThanOrEqual(1);
    expect(await store.idempotency.claim(token, "new", "again", NOW + 1)).toEqual({ fingerprint: "fp", response: "" });
    expect(await store.idempotency.claim(token, "old", "again", NOW + 1)).toBeNull();
  });
});

describe("digests", () => {
  const digest = (projectId: number, name: string) => ({
    projectId,
    name,
    frequency: "weekly" as const,
    hour: 8,
    weekday: 1,
    timeZone: "Europe/Berlin",
    integrationIds: [3, 1],
    emails: ["ann@example.com"],
    lastPeriod: null,
  });

  test("are created, found, listed in order, changed and deleted", async () => {
    const projectId = await project();
    const a = await store.digests.create(digest(projectId, "Weekly"), NOW);
    const b = await store.digests.create({ ...digest(projectId, "Daily"), frequency: "daily", weekday: null }, NOW);
    expect(a).toEqual({
      id: a.id,
      ...digest(projectId, "Weekly"),
      enabled: true,
      createdAt: NOW,
      lastSentAt: null,
      lastSuccessAt: null,
      lastError: null,
      lastErrorAt: null,
    });
    expect(await store.digests.find(a.id)).toEqual(a);
    expect(await store.digests.find(999_999)).toBeNull();
    expect((await store.digests.list(projectId)).map((d) => d.id)).toEqual([a.id, b.id]);

    const changed = await store.digests.update(a.id, { name: "Mondays", emails: [], enabled: false });
    expect(changed).toEqual({ ...a, name: "Mondays", emails: [], enabled: false });
    expect(await store.digests.update(999_999, { name: "none" })).toBeNull();
    const enabled = (await store.digests.enabled()).map((d) => d.id);
    expect([enabled.includes(a.id), enabled.includes(b.id)]).toEqual([false, true]);

    await store.digests.delete(a.id);
    expect(await store.digests.find(a.id)).toBeNull();
    expect((await store.digests.list(projectId)).map((d) => d.id)).toEqual([b.id]);
  });

  test("claim a period once, only from the period they last sent, and record outcomes", async () => {
    const { id } = await store.digests.create(digest(await project(), "Weekly"), NOW);
    expect(await store.digests.claimPeriod(id, "2026-10-26", "2026-11-02", NOW)).toBe(false);
    expect(await store.digests.claimPeriod(id, null, "2026-11-02", NOW + 1)).toBe(true);
    expect(await store.digests.claimPeriod(id, null, "2026-11-02", NOW + 2)).toBe(false);
    expect(await store.digests.claimPeriod(id, "2026-11-02", "2026-11-09", NOW + 3)).toBe(true);
    await store.digests.recordOutcome(id, { ok: false, error: "refused" }, NOW + 4);
    await store.digests.recordOutcome(id, { ok: true, error: null }, NOW + 5);
    expect(await store.digests.find(id)).toMatchObject({
      lastPeriod: "2026-11-09",
      lastSentAt: NOW + 3,
      lastSuccessAt: NOW + 5,
      lastError: "refused",
      lastErrorAt: NOW + 4,
    });
  });
});

describe("notifications", () => {
  const device = (userId: number, endpoint: string) => ({
    userId,
    endpoint,
    p256dh: "key",
    auth: "secret",
    deviceName: "Phone",
  });

  async function user(): Promise<number> {
    const made = await store.users.create({ username: `contract-${++names}`, passwordHash: "x", role: "member" }, NOW);
    return made!.id;
  }

  test("devices are saved once per endpoint, refreshed by their owner, routed, and pruned", async () => {
    const [ann, bob] = [await user(), await user()];
    const endpoint = `https://push.example/${ann}`;
    const a = await store.notifications.saveSubscription(device(ann, endpoint), NOW);
    expect(a).toEqual({
      id: a.id,
      ...device(ann, endpoint),
      filters: null,
      tags: null,
      minPriority: 1,
      createdAt: NOW,
      refreshedAt: NOW,
      lastSuccessAt: null,
      lastError: null,
      lastErrorAt: null,
    });
    const again = await store.notifications.saveSubscription({ ...device(ann, endpoint), p256dh: "new" }, NOW + 5);
    expect(again).toEqual({ ...a, p256dh: "new", refreshedAt: NOW + 5 });
    const b = await store.notifications.saveSubscription(device(ann, `${endpoint}/b`), NOW + 1);

    expect(await store.notifications.refreshSubscription(bob, endpoint, NOW + 6)).toBe(false);
    expect(await store.notifications.refreshSubscription(ann, endpoint, NOW + 7)).toBe(true);
    expect((await store.notifications.subscriptionsOf(ann)).map((s) => s.id)).toEqual([a.id, b.id]);
    expect(await store.notifications.subscriptionsOf(bob)).toEqual([]);
    expect((await store.notifications.allSubscriptions()).map((s) => s.id)).toContain(b.id);
    expect(await store.notifications.subscriptionsWithOwner(b.id)).toEqual([
      { ...b, username: `contract-${names - 1}` },
    ]);

    await store.notifications.setFilters(a.id, '[{"project":"shop","channels":null}]');
    await store.notifications.setSubscriptionRoute(a.id, { tags: '{"plan":"pro"}', minPriority: 3 });
    await store.notifications.recordSubscriptionOutcome(a.id, { ok: false, error: "410" }, NOW + 8);
    expect(await store.notifications.subscription(a.id)).toEqual({
      ...again,
      refreshedAt: NOW + 7,
      filters: '[{"project":"shop","channels":null}]',
      tags: '{"plan":"pro"}',
      minPriority: 3,
      lastError: "410",
      lastErrorAt: NOW + 8,
    });
    expect(await store.notifications.subscription(999_999)).toBeNull();

    expect(await store.notifications.pruneSubscriptions(NOW + 2)).toBeGreaterThanOrEqual(1);
    expect((await store.notifications.subscriptionsOf(ann)).map((s) => s.id)).toEqual([a.id]);
    await store.notifications.deleteSubscription(a.id);
    expect(await store.notifications.subscription(a.id)).toBeNull();
  });

  test("integrations are created, listed in order, changed, counted by their maker and turned off", async () => {
    const [projectId, maker] = [await project(), await user()];
    const made = {
      projectId,
      kind: "webhook" as const,
      name: "Hook",
      config: { url: "https://hooks.example/a", method: "POST" },
      secrets: { secret: "s3cr3t" },
      filter: { channels: ["orders"], min_priority: 2 },
      template: { title: "{{event}}" },
      createdByUserId: maker,
    };
    const a = await store.notifications.createIntegration(made, NOW);
    const b = await store.notifications.createIntegration(
      { ...made, name: "Other", filter: null, template: null },
      NOW,
    );
    expect(a).toEqual({
      id: a.id,
      ...made,
      enabled: true,
      createdAt: NOW,
      lastSuccessAt: null,
      lastError: null,
      lastErrorAt: null,
    });
    expect(await store.notifications.integration(a.id)).toEqual(a);
    expect(await store.notifications.integration(999_999)).toBeNull();
    expect((await store.notifications.integrationsOf(projectId)).map((i) => i.id)).toEqual([a.id, b.id]);

    const changed = await store.notifications.updateIntegration(a.id, { name: "Hook 2", filter: null, secrets: {} });
    expect(changed).toEqual({ ...a, name: "Hook 2", filter: null, secrets: {} });
    expect(await store.notifications.updateIntegration(999_999, { name: "none" })).toBeNull();

    expect(await store.notifications.integrationsCreatedBy(maker)).toBe(2);
    await store.notifications.setIntegrationEnabled(b.id, false);
    expect(await store.notifications.integrationsCreatedBy(maker)).toBe(1);
    expect(await store.notifications.disableCreatedBy(maker)).toBe(1);
    expect(await store.notifications.disableCreatedBy(maker)).toBe(0);
    expect(await store.notifications.integration(a.id)).toMatchObject({ enabled: false });

    await store.notifications.recordIntegrationOutcome(a.id, { ok: true, error: null }, NOW + 3);
    expect(await store.notifications.integration(a.id)).toMatchObject({ lastSuccessAt: NOW + 3, lastError: null });
    await store.notifications.deleteIntegration(a.id);
    expect((await store.notifications.integrationsOf(projectId)).map((i) => i.id)).toEqual([b.id]);
  });

  test("the queue leases due deliveries once, one per target, and settles them only under the lease", async () => {
    const T = NOW + 1_000_000;
    const queued = (targetId: number, payload: string) => ({
      target: "integration" as const,
      targetId,
      eventId: null,
      payload,
    });
    expect(await store.notifications.enqueue([], T)).toBe(0);
    expect(await store.notifications.enqueue([queued(1, "a1"), queued(1, "a2"), queued(2, "b1")], T)).toBe(3);
    await store.notifications.enqueue([queued(3, "c1")], T + 1);
    const pending = await store.notifications.pendingCount();
    expect(pending).toBeGreaterThanOrEqual(4);

    const lease = (owner: string) => ({ owner, until: T + 100 });
    const except = [{ target: "integration" as const, targetId: 3 }];
    const [first, second] = await Promise.all([
      store.notifications.claim(T + 1, 10, lease("w1"), except),
      store.notifications.claim(T + 1, 10, lease("w2"), except),
    ]);
    // Each claim takes one per target (the oldest), none of `except`'s; two claims at once never
    // take the same delivery (on PostgreSQL the second may skip what the first holds).
    const ids = [...first!, ...second!].map((d) => d.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const claim of [first!, second!]) expect(new Set(claim.map((d) => d.targetId)).size).toBe(claim.length);
    const byPayload = new Map([...first!, ...second!].map((d) => [d.payload, d]));
    expect(byPayload.has("a1") && byPayload.has("b1") && !byPayload.has("c1")).toBe(true);
    for (const d of byPayload.values()) expect(d).toMatchObject({ status: "pending", leaseUntil: T + 100 });
    const a1 = byPayload.get("a1")!;
    expect(a1.leaseOwner).toBe(first!.includes(a1) ? "w1" : "w2");
    const b1 = byPayload.get("b1")!;

    // What is leased is not due again while the lease lasts.
    const rest = await store.notifications.claim(T + 2, 10, lease("w3"), []);
    expect([...byPayload.keys(), ...rest.map((d) => d.payload)].sort()).toEqual(["a1", "a2", "b1", "c1"]);
    expect(await store.notifications.claim(T + 3, 10, lease("w3"), [])).toEqual([]);

    expect(
      await store.notifications.settle(
        a1.id,
        "someone else",
        { ok: true, status: 200, error: null },
        { status: "sent" },
        T + 4,
      ),
    ).toBe(false);
    expect(await store.notifications.attemptsOf(a1.id)).toEqual([]);
    const attempt = { ok: false, status: 500, error: "HTTP 500" };
    expect(
      await store.notifications.settle(
        a1.id,
        a1.leaseOwner!,
        attempt,
        { status: "pending", nextAttemptAt: T + 500 },
        T + 5,
      ),
    ).toBe(true);
    expect(await store.notifications.delivery(a1.id)).toEqual({
      ...a1,
      attempts: 1,
      nextAttemptAt: T + 500,
      lastError: "HTTP 500",
      finishedAt: null,
      leaseOwner: null,
      leaseUntil: null,
    });
    const [kept] = await store.notifications.attemptsOf(a1.id);
    expect(kept).toEqual({ id: kept!.id, deliveryId: a1.id, at: T + 5, ...attempt });
    expect(await store.notifications.delivery(999_999_999)).toBeNull();

    // A lease that ran out (its worker died) is due again; released leases are free at once.
    expect((await store.notifications.claim(T + 101, 10, lease("w4"), [])).map((d) => d.id)).toContain(b1.id);
    expect(await store.notifications.releaseLeases("w4")).toBeGreaterThanOrEqual(1);
    expect(await store.notifications.releaseLeases("w4")).toBe(0);
    const again = await store.notifications.claim(T + 102, 10, lease("w5"), []);
    expect(again.map((d) => d.id)).toContain(b1.id);
    expect(
      await store.notifications.settle(
        b1.id,
        "w5",
        { ok: true, status: 204, error: null },
        { status: "sent" },
        T + 103,
      ),
    ).toBe(true);
    expect(await store.notifications.delivery(b1.id)).toMatchObject({
      status: "sent",
      attempts: 1,
      finishedAt: T + 103,
    });

    // A gone target's pending deliveries are dropped; finished ones are listed, then pruned with their attempts.
    await store.notifications.releaseLeases();
    await store.notifications.abandon("integration", 3, T + 104);
    expect(await store.notifications.delivery(again.find((d) => d.payload === "c1")?.id ?? -1)).toMatchObject({
      status: "gone",
    });
    expect((await store.notifications.deliveriesFor("integration", [1, 2, 3], 2)).map((d) => d.payload)).toEqual([
      "c1",
      "b1",
    ]);
    expect(await store.notifications.deliveriesFor("integration", [])).toEqual([]);
    expect(await store.notifications.pendingCount()).toBe(pending - 2);
    expect(await store.notifications.pruneDeliveries(T + 104)).toBe(1);
    expect(await store.notifications.delivery(b1.id)).toBeNull();
    expect(await store.notifications.attemptsOf(b1.id)).toEqual([]);
    expect(await store.notifications.pruneDeliveries(T + 105)).toBe(1);
  });
});
