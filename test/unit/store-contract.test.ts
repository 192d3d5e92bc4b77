// The repositories' contract, run against the store of the pass (SQLite, or PostgreSQL in npm
// test's second pass): what each plain aggregate (src/store/aggregates) promises, written once.
// Every write goes through the store's front (a transaction of its own), as services call it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { openPgStore } from "../../src/store/pg/index.ts";
import { openSqliteStore } from "../../src/store/sqlite/index.ts";
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
