// What happens at the edge of a connection: requests pipelined on one socket, and clients that go
// away in the middle. Nothing is stored that was not answered (a client retries what it got no
// answer to, and would store it twice), and a client leaving is not our error.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { setLogLevel } from "../../src/logger.ts";
import { call, eventually, startTestServer, type TestServer } from "../helpers.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ metrics: "true" });
});
afterAll(() => server.close());

/** Writes `raw` on one connection and collects what comes back until the server closes or `ms` pass. */
async function exchange(raw: string, ms = 1500): Promise<string> {
  const port = Number(new URL(server.url).port);
  let received = "";
  let closed: () => void = () => {};
  const done = new Promise<void>((resolve) => (closed = resolve));
  const socket = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data(_s, data) { received += data.toString(); }, close() { closed(); }, error() { closed(); } } });
  socket.write(raw);
  await Promise.race([done, Bun.sleep(ms)]);
  socket.end();
  return received;
}

const logRequest = (event: string) => {
  const body = JSON.stringify({ project: "default", channel: "pipelined", event });
  return `POST /v1/log HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.token}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
};

const stored = async (event: string) => (await call(server, { path: `/v1/events?project=default&q=${encodeURIComponent(event)}&limit=200` })).json.events.filter((e: { event: string }) => e.event === event).length;

describe("pipelined requests", () => {
  test("two POSTs pipelined on one connection: each is answered, or it is not stored (a retry cannot store it twice)", async () => {
    const answer = await exchange(logRequest("first pipelined") + logRequest("second pipelined"));
    const answered = answer.match(/HTTP\/1\.1 200/g)?.length ?? 0;
    await Bun.sleep(300); // the search index catches up
    const first = await stored("first pipelined");
    const second = await stored("second pipelined");
    // Stored only what was acknowledged, in order.
    expect(first).toBe(answered >= 1 ? 1 : 0);
    expect(second).toBe(answered >= 2 ? 1 : 0);
    // The retry a client makes after no answer stores it once.
    const retried = await call(server, { method: "POST", path: "/v1/log", body: { project: "default", channel: "pipelined", event: "first pipelined" } });
    expect(retried.status).toBe(200);
    await eventually(async () => expect(await stored("first pipelined")).toBe(answered >= 1 ? 2 : 1));
  });
});

describe("clients that go away", () => {
  test("a client that disconnects in the middle of its body is not an error of ours: no 500 counted, nothing logged above debug", async () => {
    const lines: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array) => (lines.push(String(chunk)), true)) as typeof process.stderr.write;
    setLogLevel("info");
    try {
      const body = JSON.stringify({ project: "default", channel: "gone", event: "half" });
      for (let i = 0; i < 5; i++) {
        await exchange(`POST /v1/log HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length + 500}\r\n\r\n${body}`, 100);
        await exchange(`POST /v1/log HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{"project":"defa`, 100);
      }
      await Bun.sleep(300);
    } finally {
      setLogLevel("silent");
      process.stderr.write = write;
    }
    expect(lines.filter((l) => /"level":"(error|warn)"/.test(l))).toEqual([]);
    const metrics = await call(server, { path: "/metrics" });
    expect(metrics.text).not.toMatch(/signalboard_ingest_requests_total\{route="POST \/v1\/log",status="500"\}/);
    expect(await stored("half")).toBe(0);
  });
});
