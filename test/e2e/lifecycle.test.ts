// The server's life: stopping cleanly with streams open and requests in flight, and thousands of
// live clients coming and going without leaving anything behind.
import { heapStats } from "bun:jsc";
import { describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { eventually, openSse, signedIn, startTestServer, tempDir } from "../helpers.ts";
import { PROGRAM, listen, newToken, run, serve } from "./process.ts";

describe("graceful shutdown", () => {
  test("SIGTERM with open streams and requests in flight: they finish, streams end, exit 0", async () => {
    const dataDir = tempDir();
    const token = await newToken(dataDir, "t");
    const server = await serve(PROGRAM, ["--data-dir", dataDir]);
    const auth = { Authorization: `Bearer ${token}` };
    const streams = await Promise.all(Array.from({ length: 20 }, () => openSse(`${server.url}/v1/stream`, auth)));
    const inFlight = Array.from({ length: 50 }, (_, i) =>
      fetch(`${server.url}/v1/log`, {
        method: "POST",
        headers: { ...auth, "Content-Type": "application/json" },
        body: JSON.stringify({ project: "default", channel: "bye", event: `last ${i}` }),
      })
        .then((r) => r.status)
        .catch(() => "refused"),
    );
    await Promise.race(inFlight); // the server is taking them: one is answered, the rest under way
    server.proc.kill("SIGTERM");
    expect(await server.proc.exited).toBe(0);
    const statuses = await Promise.all(inFlight);
    // Each request either completed (200) or was never accepted (connection refused): none half-done.
    expect(statuses.every((s) => s === 200 || s === "refused")).toBe(true);
    for (const s of streams) await eventually(() => expect(s.ended).toBe(true));
    // What was answered 200 is stored.
    const again = await serve(PROGRAM, ["--data-dir", dataDir]);
    const list = await fetch(`${again.url}/v1/events?project=default&channel=bye&limit=200`, { headers: auth }).then(
      (r) => r.json(),
    );
    expect(list.events?.length ?? 0).toBe(statuses.filter((s) => s === 200).length);
    await again.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test("OTLP exports are read by the program's worker threads (the binary carries them); SIGTERM during one: it is answered, exit 0", async () => {
    const dataDir = tempDir();
    const token = await newToken(dataDir, "t");
    const server = await serve(PROGRAM, ["--data-dir", dataDir]);
    const auth = { Authorization: `Bearer ${token}` };
    const exportOf = (n: number) =>
      JSON.stringify({
        resourceLogs: [
          {
            resource: { attributes: [{ key: "service.name", value: { stringValue: "worker" } }] },
            scopeLogs: [
              { logRecords: Array.from({ length: n }, (_, i) => ({ body: { stringValue: `record ${i}` } })) },
            ],
          },
        ],
      });
    const post = (body: string) =>
      fetch(`${server.url}/otlp/v1/logs`, {
        method: "POST",
        headers: { ...auth, "Content-Type": "application/json" },
        body,
      });
    const first = await post(exportOf(3));
    expect([first.status, await first.text()]).toEqual([200, "{}"]);
    const inFlight = post(exportOf(5000)).then(
      async (r) => [r.status, await r.text()] as const,
      () => "refused" as const,
    );
    server.proc.kill("SIGTERM");
    expect(await server.proc.exited).toBe(0);
    const answer = await inFlight;
    expect(answer === "refused" || (answer[0] === 200 && answer[1] === "{}")).toBe(true);
    const again = await serve(PROGRAM, ["--data-dir", dataDir]);
    const count = async () => {
      let total = 0;
      let cursor: string | null = null;
      do {
        const page = (await fetch(
          `${again.url}/v1/events?project=default&channel=worker&limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
          { headers: auth },
        ).then((r) => r.json())) as { events: unknown[]; next_cursor: string | null };
        total += page.events.length;
        cursor = page.next_cursor;
      } while (cursor);
      return total;
    };
    // What was answered 200 is stored, whole; what was not, not at all.
    expect(await count()).toBe(answer === "refused" ? 3 : 5003);
    await again.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test("SIGINT (Ctrl-C) and SIGHUP (the terminal closed) stop it as SIGTERM does, exit 0", async () => {
    for (const signal of ["SIGINT", "SIGHUP"] as const) {
      const dataDir = tempDir();
      const server = await serve(PROGRAM, ["--data-dir", dataDir]);
      expect(await server.stop(signal), signal).toBe(0);
      expect(server.logs()).toContain(`"msg":"stopping","reason":"${signal}"`);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test("under nohup a hangup leaves it running: SIGHUP sent first, it is the SIGTERM after it that stops it", async () => {
    const dataDir = tempDir();
    const server = await listen([
      "nohup",
      ...PROGRAM,
      "serve",
      "--port",
      "0",
      "--host",
      "127.0.0.1",
      "--data-dir",
      dataDir,
    ]);
    server.proc.kill("SIGHUP");
    // Signals are taken in the order sent: had the hangup stopped it, the log would name SIGHUP.
    expect(await server.stop("SIGTERM")).toBe(0);
    expect(server.logs()).toContain('"msg":"stopping","reason":"SIGTERM"');
    expect(server.logs()).not.toContain('"reason":"SIGHUP"');
    rmSync(dataDir, { recursive: true, force: true });
  });
});

describe("one server per port", () => {
  test("a second server on a port in use exits 1 and says so; the first keeps every request", async () => {
    const [first, second] = [tempDir(), tempDir()];
    const token = await newToken(first, "t");
    const server = await serve(PROGRAM, ["--data-dir", first]);
    const port = new URL(server.url).port;
    const refused = await run(PROGRAM, ["serve", "--port", port, "--host", "127.0.0.1", "--data-dir", second]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`port ${port} in use`);
    // Every request reaches the first server (a shared port would have sent some to the second).
    const auth = { Authorization: `Bearer ${token}` };
    const statuses = await Promise.all(
      Array.from({ length: 20 }, () =>
        fetch(`${server.url}/v1/events?project=default`, { headers: auth }).then((r) => r.status),
      ),
    );
    expect(statuses).toEqual(Array(20).fill(200));
    expect(await server.stop()).toBe(0);
    for (const dir of [first, second]) rmSync(dir, { recursive: true, force: true });
  });
});

describe("SSE churn", () => {
  test("thousands of stream connects and disconnects leave no subscribers and no memory behind", async () => {
    const server = await startTestServer();
    try {
      const owner = { username: "owner", password: "password 123456" };
      await server.services.accounts.createUser(owner, "owner");
      const cookie = (await signedIn(server, owner)).cookieHeader();
      const targets: { url: string; headers: Record<string, string> }[] = [
        { url: `${server.url}/v1/stream?project=default`, headers: { Authorization: `Bearer ${server.token}` } },
        { url: `${server.url}/p/default/live?metrics=1`, headers: { Cookie: cookie } },
      ];
      const cycle = async (i: number) => {
        const target = targets[i % 2]!;
        const controller = new AbortController();
        const response = await fetch(target.url, { headers: target.headers, signal: controller.signal });
        expect(response.status).toBe(200);
        const reader = response.body!.getReader();
        await reader.read(); // the first bytes: the stream is open and subscribed
        controller.abort();
      };
      const round = async (count: number) => {
        for (let i = 0; i < count; i += 50) await Promise.all(Array.from({ length: 50 }, (_, j) => cycle(i + j)));
      };
      const baseline = server.services.fanout.size;
      /** Every stream closed, every subscriber gone. */
      const settled = () =>
        eventually(() => {
          expect(server.edge.streams.size).toBe(0);
          expect(server.services.fanout.size).toBe(baseline);
        });
      await round(1000); // warm up, so memory settles
      await settled();
      Bun.gc(true);
      const before = { rss: process.memoryUsage.rss(), heap: heapStats().heapSize };
      await round(3000);
      await settled();
      Bun.gc(true);
      const grown = process.memoryUsage.rss() - before.rss;
      const heapGrown = heapStats().heapSize - before.heap;
      expect(server.edge.streams.opened).toBeGreaterThanOrEqual(4000);
      expect(server.edge.streams.size).toBe(0);
      expect(server.services.fanout.size).toBe(baseline);
      // What a stream leaves behind in JavaScript shows in the heap after a collection; RSS, shared with
      // every test before this one in the process and kept by the allocator, guards only against a gross native leak.
      expect(heapGrown).toBeLessThan(4 * 1024 * 1024);
      expect(grown).toBeLessThan(128 * 1024 * 1024);
      console.log(
        `SSE churn: 4000 connections opened and closed; subscribers back to ${server.services.fanout.size}; over the last 3000 the heap grew ${(heapGrown / 1048576).toFixed(1)} MB, RSS ${(grown / 1048576).toFixed(1)} MB`,
      );
    } finally {
      await server.close();
    }
  });
});
