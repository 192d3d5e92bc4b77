// Scale-out end to end, as an operator runs it: three server processes on one PostgreSQL database
// behind a round-robin proxy, clients talking to the proxy only. One instance is killed (SIGKILL)
// under load: no acknowledged event is lost, none is stored twice, and the others go on.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { rmSync } from "node:fs";
import { PROGRAM, lastLine, run, type ServerProcess, serve } from "../e2e/process.ts";
import { eventually, openSse, tempDir } from "../helpers.ts";
import { createDatabase } from "../pg-cluster.ts";
import { startReceiver } from "../receiver.ts";

const CLUSTER = process.env.SIGNALBOARD_TEST_POSTGRES;

/** A small load balancer: each request to the next backend that is up, responses streamed through (SSE too). */
function roundRobin(backends: () => string[]) {
  let next = 0;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const body = request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer();
      const list = backends();
      for (let tried = 0; tried < list.length; tried++) {
        const target = list[next++ % list.length]!;
        try {
          return await fetch(target + url.pathname + url.search, {
            method: request.method,
            headers: request.headers,
            body,
            redirect: "manual",
          });
        } catch {
          // that backend is down: the next one
        }
      }
      return new Response("no backend", { status: 502 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
}

describe.skipIf(!CLUSTER)("three instances behind a load balancer", () => {
  let database: string;
  const dirs: string[] = [];
  let instances: (ServerProcess | null)[] = [];
  let proxy: ReturnType<typeof roundRobin>;
  let token: string;

  beforeAll(async () => {
    database = await createDatabase(CLUSTER!);
    instances = await Promise.all(
      [0, 1, 2].map(() => {
        const dir = tempDir();
        dirs.push(dir);
        return serve(PROGRAM, ["--data-dir", dir, "--database-url", database, "--rate-limit-full", "0"], {
          // The notification sink listens on 127.0.0.1: allowed as an operator would allow a service on the box.
          env: { SIGNALBOARD_LOG_LEVEL: "info", SIGNALBOARD_OUTBOUND_ALLOW: "127.0.0.1" },
        });
      }),
    );
    proxy = roundRobin(() => instances.filter((i): i is ServerProcess => i !== null).map((i) => i.url));
    // The command line works on the shared database too.
    token = lastLine((await run(PROGRAM, ["token", "create", "--name", "load", "--database-url", database])).stdout);
  });
  afterAll(async () => {
    proxy?.stop();
    await Promise.all(instances.map((i) => i?.stop("SIGKILL")));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const send = (body: unknown, key?: string) =>
    fetch(proxy.url + "/v1/log", {
      method: "POST",
      headers: {
        Authorization: `Bearer ${token}`,
        "Content-Type": "application/json",
        ...(key ? { "Idempotency-Key": key } : {}),
      },
      body: JSON.stringify(body),
    });

  test("a stream opened through the balancer gets events that went through any instance, in order", async () => {
    const stream = await openSse(`${proxy.url}/v1/stream?project=default&channel=rr`, {
      Authorization: `Bearer ${token}`,
    });
    const ids: number[] = [];
    for (let i = 0; i < 12; i++)
      ids.push((await (await send({ project: "default", channel: "rr", event: `rr ${i}` })).json()).id);
    const frames = await stream.waitFor(12);
    stream.close();
    expect(frames.map((f) => Number(f.id))).toEqual(ids);
  });

  test("each notification is delivered once, though three instances work the queue", async () => {
    const sink = await startReceiver();
    try {
      const created = await fetch(`${instances[0]!.url}/v1/log`, {
        method: "POST",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
        body: JSON.stringify({ project: "default", channel: "warmup", event: "warm" }),
      });
      expect(created.status).toBe(200);
      const sql = new SQL(database, { max: 1 });
      const [project] = (await sql`SELECT id FROM projects WHERE name = 'default'`) as [{ id: number }];
      await sql`INSERT INTO integrations (project_id, kind, name, config, created_at) VALUES (${project.id}, 'webhook', 'sink', ${JSON.stringify({ url: `${sink.url}/sink` })}, ${Date.now()})`;
      await sql.close();
      const acked = await Promise.all(
        Array.from({ length: 45 }, (_, i) =>
          send({ project: "default", channel: "alerts", event: `alert ${i}`, notify: true }).then((r) => r.json()),
        ),
      );
      await eventually(() => expect(sink.requests.length).toBeGreaterThanOrEqual(45));
      // A marker sent last, and delivered: anything sent twice would have arrived by now.
      const marker = await (
        await send({ project: "default", channel: "alerts", event: "marker", notify: true })
      ).json();
      await eventually(() => expect(sink.requests.some((r) => JSON.parse(r.body).event?.id === marker.id)).toBe(true));
      const delivered = sink.requests
        .map((r) => JSON.parse(r.body).event.id as number)
        .filter((id) => id !== marker.id);
      expect(delivered.sort((x, y) => x - y)).toEqual(acked.map((a) => a.id as number).sort((x, y) => x - y));
    } finally {
      sink.stop();
    }
  });

  test("SIGKILL of one instance under load: every acknowledged event is stored once, and the others carry on", async () => {
    const acked = new Map<string, number>();
    let stop = false;
    const clients = Array.from({ length: 12 }, async (_, c) => {
      for (let i = 0; !stop; i++) {
        const name = `load ${c}-${i}`;
        // A client that got no answer retries with the same key: a request that did commit is not stored again.
        for (let attempt = 0; attempt < 5; attempt++) {
          const res = await send({ project: "default", channel: "load", event: name }, name.replace(" ", "-")).catch(
            () => null,
          );
          if (res?.status === 200) {
            acked.set(name, (await res.json()).id);
            break;
          }
          await res?.text();
          await Bun.sleep(20);
        }
      }
    });
    // Killed once the load is real (on a busy machine that takes longer than on a quiet one).
    await eventually(() => expect(acked.size).toBeGreaterThan(200));
    const victim = instances[1]!;
    instances[1] = null; // the balancer stops sending to it, as a health check would
    await victim.stop("SIGKILL");
    const ackedAtKill = acked.size;
    await eventually(() => expect(acked.size).toBeGreaterThan(ackedAtKill + 50)); // the others carry on
    stop = true;
    await Promise.all(clients);

    const sql = new SQL(database, { max: 1 });
    const rows =
      (await sql`SELECT event AS name, count(*)::int AS n FROM events WHERE channel_id = (SELECT id FROM channels WHERE name = 'load') GROUP BY event`) as {
        name: string;
        n: number;
      }[];
    await sql.close();
    const stored = new Map(rows.map((r) => [r.name, r.n]));
    const lost = [...acked.keys()].filter((name) => !stored.has(name));
    const twice = rows.filter((r) => r.n > 1).map((r) => r.name);
    expect({ acked: acked.size > 200, lost, twice }).toEqual({ acked: true, lost: [], twice: [] });
  });
});
