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

/**
 * Writes `raw` on one connection and collects what comes back until `enough` says so or the server
 * closes; or, failing both, for `ms` (long: a busy machine answers late, and only a server that
 * never answers makes it wait that long).
 */
async function exchange(raw: string, enough: (received: string) => boolean, ms = 15_000): Promise<string> {
  const port = Number(new URL(server.url).port);
  let received = "";
  let closed = false;
  const socket = await Bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      data(_s, data) {
        received += data.toString();
      },
      close() {
        closed = true;
      },
      error() {
        closed = true;
      },
    },
  });
  socket.write(raw);
  await eventually(() => expect(closed || enough(received)).toBe(true), ms).catch(() => {});
  socket.end();
  return received;
}

const statusLines = (received: string) => [...received.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1]!);

const logRequest = (event: string) => {
  const body = JSON.stringify({ project: "default", channel: "pipelined", event });
  return `POST /v1/log HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.token}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
};

/** How many events of that name the channel holds (read from the events, not from the search index, which follows later). */
async function stored(channel: string, event: string): Promise<number> {
  const res = await call(server, { path: `/v1/events?project=default&channel=${channel}&limit=200` });
  if (res.status === 404) return 0; // the channel does not exist: nothing was ever stored in it
  return res.json.events.filter((e: { event: string }) => e.event === event).length;
}

/** Resolves once the server has no request in hand: each one it took has finished, stored or not. */
const requestsFinished = () => eventually(() => expect(server.app.server!.pendingRequests).toBe(0));

/** Requests to POST /v1/log finished so far, whatever their status. */
const logRequestsFinished = async () =>
  [
    ...(await call(server, { path: "/metrics" })).text.matchAll(
      /^signalboard_ingest_requests_total\{route="POST \/v1\/log",status="\d+"\} (\d+)$/gm,
    ),
  ].reduce((n, m) => n + Number(m[1]), 0);

describe("pipelined requests", () => {
  test("two POSTs pipelined on one connection: each is answered, or it is not stored (a retry cannot store it twice)", async () => {
    // A third request pipelined after them is the marker: answers come in order, so once its
    // answer is here, the two POSTs have had theirs, or will get none.
    const marker = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    const answer = await exchange(
      logRequest("first pipelined") + logRequest("second pipelined") + marker,
      (received) => statusLines(received).length >= 3,
    );
    const answered = statusLines(answer)
      .slice(0, 2)
      .filter((status) => status === "200").length;
    // A POST the server took but did not answer (it may close the connection) has finished too.
    await requestsFinished();
    const first = await stored("pipelined", "first pipelined");
    const second = await stored("pipelined", "second pipelined");
    // Stored only what was acknowledged, in order.
    expect(first).toBe(answered >= 1 ? 1 : 0);
    expect(second).toBe(answered >= 2 ? 1 : 0);
    // The retry a client makes after no answer stores it once.
    const retried = await call(server, {
      method: "POST",
      path: "/v1/log",
      body: { project: "default", channel: "pipelined", event: "first pipelined" },
    });
    expect(retried.status).toBe(200);
    expect(await stored("pipelined", "first pipelined")).toBe(answered >= 1 ? 2 : 1);
  });
});

describe("clients that go away", () => {
  test("a client that disconnects in the middle of its body is not an error of ours: no 500 counted, nothing logged above debug", async () => {
    const lines: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array) => (
      lines.push(String(chunk)), true
    )) as typeof process.stderr.write;
    setLogLevel("info");
    try {
      const body = JSON.stringify({ project: "default", channel: "gone", event: "half" });
      const before = await logRequestsFinished();
      // Each client goes away once the server has its request in hand, in the middle of its body
      // (the one before it finished first, so the request in hand is this one).
      const taken = () => server.app.server!.pendingRequests > 0;
      for (let i = 0; i < 5; i++) {
        await requestsFinished();
        await exchange(
          `POST /v1/log HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length + 500}\r\n\r\n${body}`,
          taken,
        );
        await requestsFinished();
        await exchange(
          `POST /v1/log HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{"project":"defa`,
          taken,
        );
      }
      // The marker: all ten are finished and counted (as whatever they were); what they log, they have logged.
      await eventually(async () => expect(await logRequestsFinished()).toBe(before + 10));
    } finally {
      setLogLevel("silent");
      process.stderr.write = write;
    }
    expect(lines.filter((l) => /"level":"(error|warn)"/.test(l))).toEqual([]);
    const metrics = await call(server, { path: "/metrics" });
    expect(metrics.text).not.toMatch(/signalboard_ingest_requests_total\{route="POST \/v1\/log",status="500"\}/);
    expect(await stored("gone", "half")).toBe(0);
  });
});
