// SQLite's reader processes: a read stopped while it runs (out of budget, or its client left) ends
// at once, its process is killed, and the next read gets a fresh reader.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { ReadGate } from "../../src/store/reads.ts";
import { ReaderPool } from "../../src/store/sqlite/readers.ts";
import { openSqliteStore } from "../../src/store/sqlite/index.ts";
import { tempDir } from "../helpers.ts";

const dir = tempDir();
const path = join(dir, "signalboard.db");
let pool: ReaderPool;

beforeAll(async () => {
  const store = openSqliteStore(path, { sync: "normal" });
  const project = (await store.projects.findByName("default")) ?? (await store.projects.create("default"))!;
  const { id: channelId } = await store.projects.ensureChannel(project.id, "c", 0);
  await store.tx(async (r) => {
    for (let i = 0; i < 300_000; i++) {
      await r.events.insert({
        projectId: project.id,
        project: "default",
        channelId,
        channel: "c",
        name: `e${i}`,
        description: null,
        icon: null,
        notify: false,
        parser: "text",
        userId: null,
        tags: null,
        ts: i,
        receivedAt: i,
        historical: false,
      });
    }
  });
  await store.close();
  pool = new ReaderPool(path, 1);
});
afterAll(async () => {
  await pool.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Whether a reader holds a read (the pool's own state: nothing outside it needs to know). */
const readingNow = () => (pool as unknown as { readers: { pending: unknown }[] }).readers.some((r) => r.pending);

/** A read that takes a while: the activity of a year, day by day, filtered so every row is read. */
const slowRead = { aggregate: "events", method: "activity", args: [1, 0, 366, { liveOnly: true }] };
const quickRead = { aggregate: "projects", method: "countEvents", args: [{ channelId: 1 }] };

for (const reason of ["timeout", "client"] as const) {
  test(`a running read stopped (${reason}) ends at once, and the next read is answered by a new reader`, async () => {
    expect(await pool.run(quickRead, new AbortController().signal)).toBe(300_000);
    const stop = new AbortController();
    const stoppedBefore = pool.stopped;
    const running = pool.run(slowRead, stop.signal);
    // Sent to its reader (not still waiting for one): looked for at each turn of the loop, as the
    // read itself takes tens of milliseconds at the least.
    while (!readingNow()) await new Promise((resolve) => setImmediate(resolve));
    stop.abort(reason);
    await expect(running).rejects.toThrow(/stopped/);
    expect(pool.stopped).toBe(stoppedBefore + 1); // its reader was killed: the read did not run on
    const before = pool.started;
    expect(await pool.run(quickRead, new AbortController().signal)).toBe(300_000);
    expect(pool.started).toBe(before + 1);
  });
}

test("the slow read does finish when nothing stops it (so stopping it was a real stop)", async () => {
  const started = performance.now();
  const rows = (await pool.run(slowRead, new AbortController().signal)) as { counts: number[] }[];
  expect(rows[0]!.counts.reduce((a, b) => a + b, 0)).toBe(300_000);
  console.log(`the slow read took ${(performance.now() - started).toFixed(0)} ms`);
  expect(performance.now() - started).toBeGreaterThan(20);
});

test("a queue whose budgets run out one after another starts no reader per read", async () => {
  // Reads asked a few ms apart, each past its budget while the one before it runs or its reader
  // starts: each was given a new reader (the one before had been killed), only to kill it too.
  const gate = new ReadGate(pool.run, { slots: 1, perKind: 1, budgetMs: 300 });
  const before = pool.started;
  const answers = await Promise.allSettled(
    Array.from({ length: 60 }, async (_, i) => {
      await Bun.sleep(i * 4);
      return gate.read("chart", slowRead);
    }),
  );
  expect(answers.filter((a) => a.status === "rejected").length).toBeGreaterThan(30);
  for (const a of answers)
    if (a.status === "rejected") expect((a.reason as { code?: string }).code).toBe("query_timeout");
  expect(pool.started - before).toBeLessThanOrEqual(5);
  // The pool still answers.
  expect(await pool.run(quickRead, new AbortController().signal)).toBe(300_000);
});

test("a reader that does not start in time is killed, and the next read starts another", async () => {
  const slow = new ReaderPool(path, 1);
  try {
    slow.startTimeoutMs = 1; // no process starts in a millisecond
    await expect(slow.run(quickRead, new AbortController().signal)).rejects.toThrow(/did not start/);
    slow.startTimeoutMs = 60_000;
    expect(await slow.run(quickRead, new AbortController().signal)).toBe(300_000);
    expect(slow.started).toBe(2);
  } finally {
    await slow.close();
  }
});
