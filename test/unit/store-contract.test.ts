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
