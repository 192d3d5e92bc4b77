// The group-commit writer: one transaction per tick, settled after COMMIT, failures isolated.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { NotFound } from "../../src/errors.ts";
import { closeStore, openStore, type Store } from "../../src/store/index.ts";
import { tempDir } from "../helpers.ts";

let dir: string;
let store: Store;
beforeEach(() => {
  dir = tempDir();
  store = openStore(join(dir, "t.db"));
  store.sqlite.exec("CREATE TABLE t (v INTEGER)");
});
afterEach(() => {
  closeStore(store);
  rmSync(dir, { recursive: true, force: true });
});

const insert = (v: number) => () => store.sqlite.query("INSERT INTO t (v) VALUES (?)").run(v);

describe("writer", () => {
  test("writes submitted in one tick share one transaction", async () => {
    const before = store.writer.stats.batches;
    await Promise.all([1, 2, 3, 4, 5].map((v) => store.writer.submit(insert(v))));
    expect(store.writer.stats.batches - before).toBe(1);
    expect(store.writer.stats.lastBatchSize).toBe(5);
  });

  test("a write is visible to another connection once its promise resolves", async () => {
    await store.writer.submit(insert(42));
    const other = openStore(join(dir, "t.db"));
    expect(other.sqlite.query("SELECT v FROM t").all()).toEqual([{ v: 42 }]);
    closeStore(other);
  });

  test("a failing write is undone alone; the rest of the batch commits", async () => {
    const results = await Promise.allSettled([
      store.writer.submit(insert(1)),
      store.writer.submit(() => {
        insert(2)();
        throw new NotFound("nope");
      }),
      store.writer.submit(insert(3)),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(NotFound);
    expect(store.sqlite.query("SELECT v FROM t ORDER BY v").all()).toEqual([{ v: 1 }, { v: 3 }]);
  });

  test("a full disk fails the batch as storage unavailable (503, retry later) and the writer recovers when space returns", async () => {
    const pages = (store.sqlite.query("PRAGMA page_count").get() as { page_count: number }).page_count;
    store.sqlite.exec(`PRAGMA max_page_count = ${pages}`);
    const big = () => store.sqlite.query("INSERT INTO t (v) VALUES (zeroblob(100000))").run();
    const failed = await store.writer.submit(big).catch((e) => e);
    expect(failed).toMatchObject({ kind: "unavailable", code: "storage_unavailable" });
    expect(failed.details.retryAfter).toBeGreaterThan(0);
    store.sqlite.exec("PRAGMA max_page_count = 1073741823");
    await store.writer.submit(insert(7));
    expect(store.sqlite.query("SELECT count(*) AS n FROM t WHERE v = 7").get()).toEqual({ n: 1 });
  });
});
