// How PostgreSQL writes batches: a batch's events in one statement, the cluster-wide order held
// only while it commits, each write still undone alone, and nothing acknowledged lost when the
// database itself crashes. Runs in the PostgreSQL pass of npm test (SIGNALBOARD_TEST_POSTGRES).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { newEvent } from "../../src/domain/ingest-writes.ts";
import type { LogInput } from "../../src/domain/ingest-writes.ts";
import type { StoredEvent } from "../../src/model/event.ts";
import type { Project } from "../../src/model/project.ts";
import { openPgStore, type PgStore } from "../../src/store/pg/index.ts";
import { call, eventually, post, startTestServer } from "../helpers.ts";
import { type Cluster, createDatabase, dropDatabase, postgresBin, startCluster } from "../pg-cluster.ts";

const CLUSTER = process.env.SIGNALBOARD_TEST_POSTGRES;

describe.skipIf(!CLUSTER)("PostgreSQL write batches", () => {
  let url: string;
  let a: PgStore;
  let b: PgStore;
  let project: Project;
  let channelId: number;
  const now = Date.now();
  const row = (input: Omit<LogInput, "project" | "channel">) =>
    newEvent(project, channelId, { project: project.name, channel: "batch", ...input }, now);

  beforeAll(async () => {
    url = await createDatabase(CLUSTER!);
    [a, b] = await Promise.all([openPgStore(url), openPgStore(url)]);
    project = (await a.projects.create("writes", now))!;
    // Both stores know the project and the channel: writes that only add events send nothing before their batch commits.
    for (const store of [a, b]) {
      await store.projects.findByName("writes");
      channelId = (await store.projects.ensureChannel(project.id, "batch", now)).id;
    }
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await dropDatabase(CLUSTER!, url);
  });

  async function stored(ids: number[]): Promise<{ id: number; event: string; tags: string[] }[]> {
    const sql = new SQL(url, { max: 1 });
    try {
      const rows = (await sql`
        SELECT e.id::int AS id, e.event, coalesce(array_agg(t.key || '=' || t.value ORDER BY t.key) FILTER (WHERE t.key IS NOT NULL), '{}') AS tags
          FROM events e LEFT JOIN event_tags t ON t.event_id = e.id AND t.project_id = e.project_id AND t.ts = e.ts
         WHERE e.id = ANY(${sql.array(ids, "INT8")}) GROUP BY e.id ORDER BY e.id`) as {
        id: number;
        event: string;
        tags: string[];
      }[];
      return rows.map((r) => ({ ...r, tags: [...r.tags] }));
    } finally {
      await sql.close();
    }
  }

  test("a batch of events with tags: all stored with their tags, ids consecutive; a write that throws is undone alone", async () => {
    const batches = a.writer.stats.batches;
    // Submitted in one tick: one batch. Write 3 throws after queueing its event (it sent nothing);
    // write 6 throws after a statement of its own (the batch runs again, a savepoint per write).
    const writes = Array.from({ length: 10 }, (_, i) =>
      a.tx(async (tx) => {
        const event = await tx.events.insert(
          row({ event: `mixed ${i}`, tags: { n: i, even: i % 2 === 0, kind: i < 5 ? "first" : "second" } }),
        );
        if (i === 3) throw new Error("refused after queueing");
        if (i === 6) {
          await tx.projects.findChannel(project.id, "batch");
          throw new Error("refused after a statement");
        }
        return event;
      }),
    );
    const settled = await Promise.allSettled(writes);
    expect(a.writer.stats.batches).toBe(batches + 1);
    expect(settled.map((s) => s.status)).toEqual([
      "fulfilled",
      "fulfilled",
      "fulfilled",
      "rejected",
      "fulfilled",
      "fulfilled",
      "rejected",
      "fulfilled",
      "fulfilled",
      "fulfilled",
    ]);
    const events = settled.flatMap((s) => (s.status === "fulfilled" ? [s.value as StoredEvent] : []));
    const ids = events.map((e) => e.id);
    expect(ids).toEqual(Array.from({ length: 8 }, (_, i) => ids[0]! + i)); // in order, no holes
    const rows = await stored(ids);
    expect(rows.map((r) => r.event)).toEqual(events.map((e) => e.name));
    for (const [i, r] of rows.entries()) {
      const n = Number(r.event.split(" ")[1]);
      expect(r.id).toBe(ids[i]!);
      expect(r.tags).toEqual([`even=${n % 2 === 0}`, `kind=${n < 5 ? "first" : "second"}`, `n=${n}`]);
    }
  });

  test("an event's id is known inside its write when asked for, and set for the caller once it commits", async () => {
    const [inside, after] = await Promise.all([
      a.tx(async (tx) => {
        const event = await tx.events.insert(row({ event: "asked" }), { idNow: true });
        return event.id;
      }),
      a.tx((tx) => tx.events.insert(row({ event: "not asked" }))),
    ]);
    expect(after.id).toBe(inside + 1);
    expect(
      await a
        .tx(async (tx) => (await tx.events.insert(row({ event: "too early" }))).id)
        .catch((error: Error) => error.message),
    ).toContain("idNow");
  });

  test("an instance holding a batch open does not hold another's; ids follow the order of commits", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inserted!: () => void;
    const begun = new Promise<void>((resolve) => (inserted = resolve));
    const slow = a.tx(async (tx) => {
      const event = await tx.events.insert(row({ event: "queued first, committed last" }));
      inserted();
      await held;
      return event;
    });
    await begun; // a's batch has begun
    // Not held by a's batch: b commits while a's is still open (held, it would wait for ever).
    let fast: StoredEvent | null = null;
    void b.tx((tx) => tx.events.insert(row({ event: "queued second, committed first" }))).then((e) => (fast = e));
    try {
      await eventually(() => expect(fast).not.toBeNull());
    } finally {
      release();
    }
    expect((await slow).id).toBe(fast!.id + 1);
  });

  test("two instances writing at once: every id once, none skipped by a reader of `id > last`", async () => {
    const sql = new SQL(url, { max: 1 });
    let last = Number((await sql`SELECT last_id FROM event_ids`)[0].last_id);
    const seen: number[] = [];
    let writing = true;
    const deadline = performance.now() + 30_000; // what it has not seen by then it will not see
    const tail = (async () => {
      while ((writing || seen.length < 400) && performance.now() < deadline) {
        const rows = (await sql`SELECT id FROM events WHERE id > ${last} ORDER BY id`) as { id: string }[];
        for (const r of rows) seen.push(Number(r.id));
        if (rows.length) last = Number(rows.at(-1)!.id);
        else await Bun.sleep(1);
      }
    })();
    const sent = await Promise.all(
      Array.from({ length: 400 }, (_, i) =>
        [a, b][i % 2]!.tx((tx) => tx.events.insert(row({ event: `both ${i}`, tags: { i } }))),
      ),
    );
    writing = false;
    await tail;
    await sql.close();
    const ids = sent.map((e) => e.id).sort((x, y) => x - y);
    expect(seen).toEqual(ids);
    expect(ids.at(-1)! - ids[0]!).toBe(399);
  });
});

describe.skipIf(!CLUSTER || !postgresBin())("PostgreSQL crashing under load", () => {
  let cluster: Cluster;

  beforeAll(async () => {
    cluster = await startCluster();
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  test("every event acknowledged before the crash is there after it, with the id it was given", async () => {
    const server = await startTestServer({ "database-url": await createDatabase(cluster.url) });
    try {
      const acked = new Map<string, number>();
      let stop = false;
      let crashed: Promise<Map<string, number>> | null = null;
      const clients = Array.from({ length: 16 }, async (_, c) => {
        for (let i = 0; !stop; i++) {
          const res = await post(server, "/v1/log", {
            project: "default",
            channel: "crash",
            event: `c${c}-${i}`,
            tags: { c },
          }).catch(() => null);
          if (res?.status !== 200) {
            await Bun.sleep(20);
            continue;
          }
          acked.set(`c${c}-${i}`, res.json.id);
          // Right as an answer arrives, while other batches are on their way: what was acknowledged must be on disk.
          if (acked.size >= 300 && !crashed) {
            const before = new Map(acked);
            crashed = cluster.crash().then(() => before);
          }
        }
      });
      await eventually(() => expect(crashed).not.toBeNull());
      const ackedAtCrash = await crashed!;
      await Bun.sleep(200);
      await cluster.resume();
      await eventually(async () => expect((await call(server, { path: "/readyz" })).status).toBe(200));
      stop = true;
      await Promise.all(clients);

      const sql = new SQL(server.services.config.databaseUrl!, { max: 1 });
      const rows =
        (await sql`SELECT event, id::int AS id FROM events WHERE channel_id = (SELECT id FROM channels WHERE name = 'crash')`) as {
          event: string;
          id: number;
        }[];
      await sql.close();
      const ids = new Map(rows.map((r) => [r.event, r.id]));
      const missing = [...ackedAtCrash].filter(([name, id]) => ids.get(name) !== id);
      expect({ acked: ackedAtCrash.size >= 300, missing }).toEqual({ acked: true, missing: [] });
    } finally {
      await server.close();
    }
  });
});
