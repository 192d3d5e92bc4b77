// The read path: no read holds the loop that acknowledges writes; a read past its budget is a 503
// query_timeout and is stopped (its reader process killed on SQLite, its query cancelled in
// PostgreSQL); a read whose client left is cancelled too. On PostgreSQL a read is made to wait as long
// as the test likes by a lock the test holds on what it reads.
import { SQL } from "bun";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  type Agent,
  call,
  eventually,
  onPostgres,
  post,
  searchIndexed,
  signedIn,
  type TestServer,
  startTestServer,
} from "../helpers.ts";

const OWNER = { username: "owner", password: "correct horse battery staple" };

/** Holds a lock on a metric's history (PostgreSQL), so that reading it waits until released. */
async function holdHistoryLock(
  server: TestServer,
): Promise<{ release: () => Promise<void>; waiting: () => Promise<number> }> {
  const sql = new SQL(server.services.config.databaseUrl!, { max: 2 });
  const conn = await sql.reserve();
  await conn`BEGIN`;
  await conn`LOCK TABLE metric_history IN ACCESS EXCLUSIVE MODE`;
  const watcher = await sql.reserve();
  return {
    // Queries of the server waiting on the lock: each read that is still running in the database.
    waiting: async () =>
      Number(
        (
          await watcher`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE '%metric_history%'`
        )[0].n,
      ),
    release: async () => {
      await conn`ROLLBACK`;
      conn.release();
      watcher.release();
      await sql.close();
    },
  };
}

/**
 * SQLite's reads do not wait for locks (WAL), and its indexed reads are quick, so a read is made
 * longer than its budget by data and a tiny budget: 50,000 events a text search walks through.
 */
async function seedEvents(server: TestServer, count: number): Promise<void> {
  const project = (await server.services.projects.list()).find((p) => p.name === "default")!;
  const { id: channelId } = await server.store.projects.ensureChannel(project.id, "c", Date.now());
  const now = Date.now();
  for (let b = 0; b < count; b += 10_000) {
    await server.store.tx(async (r) => {
      for (let i = b; i < b + 10_000; i++) {
        await r.events.insert({
          projectId: project.id,
          project: "default",
          channelId,
          channel: "c",
          name: `hello world ${i}`,
          description: null,
          icon: null,
          notify: false,
          parser: "text",
          userId: null,
          tags: null,
          ts: now - i,
          receivedAt: now,
          historical: false,
        });
      }
    });
  }
}

describe("a read past its budget", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ "query-timeout": onPostgres ? "300ms" : "1ms" });
    await post(server, "/send-metric", { project: "default", title: "Queue", value: 3 });
    if (!onPostgres) await seedEvents(server, 50_000);
  });
  afterAll(() => server.close());

  test("is a 503 query_timeout with Retry-After and a message that says how to narrow it, while writes and health go on", async () => {
    const lock = onPostgres ? await holdHistoryLock(server) : null;
    try {
      const pending = call(server, {
        path: onPostgres
          ? "/v1/metrics/history?project=default&title=Queue"
          : "/v1/events?project=default&q=1&user_id=nobody",
      });
      // Meanwhile the loop that acknowledges writes is free.
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      expect(
        (await post(server, "/v1/log", { project: "default", channel: "c", event: "written while a read waits" }))
          .status,
      ).toBe(200);
      const answer = await pending;
      expect(answer.status).toBe(503);
      expect(answer.json).toMatchObject({ success: false, statusCode: 503, error: "query_timeout" });
      expect(answer.json.message).toMatch(/SIGNALBOARD_QUERY_TIMEOUT|could not start/);
      expect(answer.json.message).toMatch(/Narrow it/);
      expect(answer.headers.get("retry-after")).toBe("5");
      expect(server.store.reads!.timeouts).toBeGreaterThanOrEqual(1);
      if (lock) {
        await eventually(async () => expect(await lock.waiting()).toBe(0)); // cancelled in the database
        await lock.release();
        // The stopped read left nothing behind: the next one is answered.
        expect((await call(server, { path: "/v1/metrics/history?project=default&title=Queue" })).status).toBe(200);
      }
    } finally {
      await lock?.release().catch(() => {});
    }
  });
});

// SQLite: test/unit/readers.test.ts stops a running read in its reader process.
describe.skipIf(!onPostgres)("a read whose client leaves", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ "query-timeout": "60s" });
    await post(server, "/send-metric", { project: "default", title: "Queue", value: 3 });
    await post(server, "/v1/log", { project: "default", channel: "c", event: "hello there" });
  });
  afterAll(() => server.close());

  test("is stopped: it no longer runs, and the next read is answered", async () => {
    const lock = await holdHistoryLock(server);
    const heldRead = "/v1/metrics/history?project=default&title=Queue";
    try {
      const controller = new AbortController();
      const pending = fetch(server.url + heldRead, {
        headers: { Authorization: `Bearer ${server.token}` },
        signal: controller.signal,
      }).catch((e) => e);
      await eventually(() => expect(server.store.reads!.running).toBeGreaterThanOrEqual(1));
      await eventually(async () => expect(await lock.waiting()).toBeGreaterThanOrEqual(1));
      controller.abort();
      await pending;
      // Nothing runs on its behalf any more, though the lock is still held.
      await eventually(() => expect(server.store.reads!.running).toBe(0));
      await eventually(async () => expect(await lock.waiting()).toBe(0));
    } finally {
      await lock.release();
    }
    expect((await call(server, { path: heldRead })).status).toBe(200);
  });
});

describe("many expensive reads at once", () => {
  let server: TestServer;
  let agent: Agent;
  // A fifth of the benchmark's stall test (1,500 users), which measures what this checks: enough for
  // searches that walk every property, while what they answer stays exact.
  const USERS = 300;
  beforeAll(async () => {
    server = await startTestServer();
    await server.services.accounts.createUser(OWNER, "owner");
    agent = await signedIn(server, OWNER);
    // The stall test's data: users with 100 properties of 600 characters, the last one alone holding the word searched for.
    const filler = "lorem ipsum dolor sit amet ".repeat(23).slice(0, 600);
    for (let batch = 0; batch < USERS; batch += 50) {
      await Promise.all(
        Array.from({ length: 50 }, async (_, i) => {
          const n = batch + i;
          const properties: Record<string, string> = {};
          for (let p = 0; p < 99; p++) properties[`p${p}`] = filler;
          properties.p99 = `${filler.slice(0, 580)} ${n % 100 === 0 ? "needle" : "hay"}`;
          const answer = await post(server, "/v1/identify", { project: "default", user_id: `user-${n}`, properties });
          if (answer.status !== 200) throw new Error(`identify: ${answer.status} ${answer.text}`);
        }),
      );
    }
    await searchIndexed(server, 120_000);
  }, 300_000);
  afterAll(() => server.close());

  test("health checks and ingest go on meanwhile, and every search is answered, with results or query_timeout", async () => {
    // How long health checks and writes waited meanwhile is npm run bench's stall test to measure.
    let searching = true;
    // A load balancer's probe: on new connections, and on one it keeps reusing.
    const probe = (headers: Record<string, string>) =>
      (async () => {
        while (searching) {
          const health = await fetch(`${server.url}/healthz`, { headers });
          expect(health.status).toBe(200);
          await health.text();
          await Bun.sleep(20);
        }
      })();
    const probes = Promise.all([probe({ Connection: "close" }), probe({})]);
    const writes = (async () => {
      while (searching) {
        expect((await post(server, "/v1/log", { project: "default", channel: "c", event: "meanwhile" })).status).toBe(
          200,
        );
        await Bun.sleep(100);
      }
    })();
    const searches = await Promise.all(
      Array.from({ length: 12 }, async () => {
        const page = await agent.request("/p/default/users?q=needle");
        return { status: page.status, text: await page.text() };
      }),
    );
    searching = false;
    await Promise.all([probes, writes]);
    for (const answer of searches) {
      if (answer.status === 503) expect(answer.text).toMatch(/took longer|could not start/);
      else {
        expect(answer.status).toBe(200);
        const found = [...answer.text.matchAll(/href="\/p\/default\/users\/(user-\d+)"/g)].map((m) => m[1]).sort();
        expect(found).toEqual(Array.from({ length: USERS / 100 }, (_, i) => `user-${i * 100}`).sort());
      }
    }
  });
});
