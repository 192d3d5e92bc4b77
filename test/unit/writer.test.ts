// The group-commit writer: one transaction per tick, settled after COMMIT, failures isolated, and
// another process's write lock waited for without holding the event loop.
import { Database } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { NotFound } from "../../src/errors.ts";
import { GroupCommit, type Outcome, type Pending } from "../../src/store/group-commit.ts";
import { Writer } from "../../src/store/sqlite/writer.ts";
import { tempDir } from "../helpers.ts";

let dir: string;
let sqlite: Database;
let writer: Writer<Database>;
beforeEach(() => {
  dir = tempDir();
  sqlite = new Database(join(dir, "t.db"), { strict: true });
  sqlite.exec("PRAGMA journal_mode = WAL");
  sqlite.exec("PRAGMA busy_timeout = 5000"); // as the store opens its connections (store/sqlite/db.ts)
  sqlite.exec("CREATE TABLE t (v INTEGER)");
  writer = new Writer(sqlite, sqlite);
});
afterEach(async () => {
  await writer.flush();
  sqlite.close();
  rmSync(dir, { recursive: true, force: true });
});

const insert = (v: number) => async (db: Database) => void db.query("INSERT INTO t (v) VALUES (?)").run(v);

describe("writer", () => {
  test("writes submitted in one tick share one transaction", async () => {
    const before = writer.stats.batches;
    await Promise.all([1, 2, 3, 4, 5].map((v) => writer.submit(insert(v))));
    expect(writer.stats.batches - before).toBe(1);
    expect(writer.stats.lastBatchSize).toBe(5);
  });

  test("a batch stops taking writes once it used its CPU budget: the rest commit in the next ones, in order, each once", async () => {
    /** A write that takes 2 ms of CPU. */
    const busy = (v: number) => async (db: Database) => {
      const start = process.cpuUsage();
      for (;;) {
        const used = process.cpuUsage(start);
        if (used.user + used.system >= 2000) break;
      }
      await insert(v)(db);
    };
    const before = writer.stats.batches;
    const values = Array.from({ length: 40 }, (_, i) => i);
    await Promise.all(values.map((v) => writer.submit(busy(v))));
    expect(writer.stats.batches - before).toBeGreaterThanOrEqual(4); // 80 ms of writes, 20 ms a batch at most
    const rows = sqlite.query<{ v: number }, []>("SELECT v FROM t ORDER BY rowid").all();
    expect(rows.map((r) => r.v)).toEqual(values);
  });

  test("a write is visible to another connection once its promise resolves", async () => {
    await writer.submit(insert(42));
    const other = new Database(join(dir, "t.db"), { readonly: true });
    expect(other.query("SELECT v FROM t").all()).toEqual([{ v: 42 }]);
    other.close();
  });

  test("a failing write is undone alone; the rest of the batch commits", async () => {
    const results = await Promise.allSettled([
      writer.submit(insert(1)),
      writer.submit(async (db) => {
        await insert(2)(db);
        throw new NotFound("nope");
      }),
      writer.submit(insert(3)),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(NotFound);
    expect(sqlite.query("SELECT v FROM t ORDER BY v").all()).toEqual([{ v: 1 }, { v: 3 }]);
  });

  test("a write of several steps runs whole or not at all", async () => {
    const failed = await writer
      .submit(async (db) => {
        await insert(10)(db);
        await insert(11)(db);
        throw new NotFound("the third step fails");
      })
      .catch((e) => e);
    expect(failed).toBeInstanceOf(NotFound);
    expect(sqlite.query("SELECT count(*) AS n FROM t WHERE v IN (10, 11)").get()).toEqual({ n: 0 });
  });

  test("a full disk fails the batch as storage unavailable (503, retry later) and the writer recovers when space returns", async () => {
    const pages = (sqlite.query("PRAGMA page_count").get() as { page_count: number }).page_count;
    sqlite.exec(`PRAGMA max_page_count = ${pages}`);
    const big = async (db: Database) => void db.query("INSERT INTO t (v) VALUES (zeroblob(100000))").run();
    const failed = await writer.submit(big).catch((e) => e);
    expect(failed).toMatchObject({ kind: "unavailable", code: "storage_unavailable" });
    expect(failed.details.retryAfter).toBeGreaterThan(0);
    expect(writer.failing).toBe(true);
    sqlite.exec("PRAGMA max_page_count = 1073741823");
    await writer.submit(insert(7));
    expect(sqlite.query("SELECT count(*) AS n FROM t WHERE v = 7").get()).toEqual({ n: 1 });
    expect(writer.failing).toBe(false);
  });

  test("while another process holds the write lock, a write waits for it with the event loop free, then commits", async () => {
    // Another process (as `signalboard import` is) takes the write lock and keeps it until told.
    const other = Bun.spawn(
      [
        process.execPath,
        "-e",
        `const { Database } = require("bun:sqlite");
         const db = new Database(${JSON.stringify(join(dir, "t.db"))});
         db.exec("BEGIN IMMEDIATE");
         db.exec("INSERT INTO t (v) VALUES (1)");
         console.log("locked");
         for await (const _ of console) break;
         db.exec("COMMIT");
         console.log("committed");`,
      ],
      { stdin: "pipe", stdout: "pipe" },
    );
    const said = (other.stdout as ReadableStream<Uint8Array>).getReader();
    expect(new TextDecoder().decode((await said.read()).value)).toContain("locked");
    let settled = false;
    const write = writer.submit(insert(2)).finally(() => (settled = true));
    // Timers fire while the write waits: SQLite's own wait would have slept on this thread until it gave up.
    let turns = 0;
    while (turns < 20) await new Promise((resolve) => setTimeout(resolve, 1)).then(() => turns++);
    expect(settled).toBe(false);
    expect(writer.lockWaits.batches).toBe(1);
    other.stdin.write("go\n");
    await other.stdin.flush();
    await write;
    expect(await other.exited).toBe(0);
    expect(sqlite.query("SELECT v FROM t ORDER BY v").all()).toEqual([{ v: 1 }, { v: 2 }]);
  });
});

describe("group commit", () => {
  test("a batch cut short of a million writes leaves the rest for the next ones, without overflowing the stack", async () => {
    /** Commits one write in its first batch, then every write it is given. */
    class OneThenAll extends GroupCommit<null> {
      first = true;
      protected async commit(batch: Pending<null>[]): Promise<Outcome[]> {
        const take = this.first ? 1 : batch.length;
        this.first = false;
        return Promise.all(batch.slice(0, take).map(async (p) => ({ ok: true as const, value: await p.run(null) })));
      }
    }
    const commits = new OneThenAll();
    const count = 1_200_000;
    const writes: Promise<number>[] = [];
    for (let i = 0; i < count; i++) writes.push(commits.submit(async () => i));
    const done = await Promise.all(writes);
    expect(done.length).toBe(count);
    expect(done[count - 1]).toBe(count - 1);
    expect(commits.stats.batches).toBe(2);
  }, 60_000);
});
