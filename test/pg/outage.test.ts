// The database going away and coming back: a clear error at start, 503s with Retry-After (and a
// /readyz that says so) while it is down, and recovery by itself, with nothing acknowledged lost.
// A cluster of its own, so stopping it disturbs no other test.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PROGRAM, run } from "../e2e/process.ts";
import { call, eventually, openSse, post, startTestServer, tempDir, type TestServer } from "../helpers.ts";
import { type Cluster, createDatabase, postgresBin, startCluster } from "../pg-cluster.ts";

const CLUSTER = process.env.SIGNALBOARD_TEST_POSTGRES;

describe.skipIf(!CLUSTER || !postgresBin())("when PostgreSQL is down", () => {
  let cluster: Cluster;
  let server: TestServer;

  beforeAll(async () => {
    cluster = await startCluster();
    server = await startTestServer({ "database-url": await createDatabase(cluster.url) });
  });
  afterAll(async () => {
    await server?.close().catch(() => {});
    await cluster?.stop();
  });

  test("/readyz names the database it answers for", async () => {
    const ready = await call(server, { path: "/readyz" });
    expect(ready.status).toBe(200);
    expect(ready.json).toMatchObject({ status: "ready", database: "postgresql" });
  });

  test("requests get 503 with Retry-After while it is down, and everything works again once it is back, by itself", async () => {
    const stream = await openSse(`${server.url}/v1/stream?project=default&channel=outage`, {
      Authorization: `Bearer ${server.token}`,
    });
    const before = await post(server, "/v1/log", { project: "default", channel: "outage", event: "before" });
    expect(before.status).toBe(200);
    await stream.waitFor(1); // live: it has read what it needed to start
    await cluster.pause();

    const write = await post(server, "/v1/log", { project: "default", channel: "outage", event: "during" });
    expect(write.status).toBe(503);
    expect(write.json.error).toBe("storage_unavailable");
    expect(Number(write.headers.get("retry-after"))).toBeGreaterThan(0);
    const read = await call(server, { path: "/v1/events?project=default" });
    expect(read.status).toBe(503);
    const ready = await call(server, { path: "/readyz" });
    expect(ready.status).toBe(503);
    expect(ready.headers.get("retry-after")).not.toBeNull();
    expect((await call(server, { path: "/healthz" })).status).toBe(200); // alive, only not ready

    await cluster.resume();
    await eventually(async () => expect((await call(server, { path: "/readyz" })).status).toBe(200));
    const after = await post(server, "/v1/log", { project: "default", channel: "outage", event: "after" });
    expect(after.status).toBe(200);
    // The live stream follows the database again (its LISTEN reconnected, or the poll caught up).
    await eventually(() => expect(stream.frames.map((f) => JSON.parse(f.data).event)).toEqual(["before", "after"]));
    stream.close();
    const list = await call(server, { path: "/v1/events?project=default&channel=outage" });
    expect(list.json.events.map((e: { event: string }) => e.event)).toEqual(["after", "before"]);
  });
});

describe.skipIf(!CLUSTER)("starting without a reachable database", () => {
  test("the server and commands exit with a clear error naming DATABASE_URL, without the password", async () => {
    const url = "postgres://signalboard:s3cret@127.0.0.1:1/none";
    const served = await run(PROGRAM, ["serve", "--port", "0", "--data-dir", tempDir(), "--database-url", url]);
    expect(served.code).toBe(1);
    expect(served.stderr).toContain("DATABASE_URL");
    expect(served.stderr).not.toContain("s3cret");
    const listed = await run(PROGRAM, ["token", "list", "--database-url", url]);
    expect(listed.code).toBe(1);
    expect(listed.stderr).toContain(
      "cannot use the PostgreSQL database at postgres://signalboard:***@127.0.0.1:1/none",
    );
  });

  test("a DATABASE_URL that is not a postgres:// URL is refused at start (exit 2), without repeating it", async () => {
    const bad = await run(PROGRAM, ["token", "list", "--database-url", "mysql://root:hunter2@db/x"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("DATABASE_URL (--database-url)");
    expect(bad.stderr).not.toContain("hunter2");
  });

  test("backup is a SQLite command: on PostgreSQL it says which tools to use", async () => {
    const url = await createDatabase(CLUSTER!);
    const result = await run(PROGRAM, ["backup", "/tmp/never-written.db", "--database-url", url]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("pg_dump");
  });
});
