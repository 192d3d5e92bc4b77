// A separate process holding N live SSE subscribers, for the fan-out benchmarks.
//   bun subscribers.ts URL PATH HEADER COUNT measure   connect, print "connected", wait for a line on
//       stdin, post one event (PATH must be a /v1/stream URL) and print delivery latencies as JSON
//   bun subscribers.ts URL PATH HEADER COUNT hold      connect, print "connected", read and discard
//       until stdin closes (dashboards watching while something else loads the server)
//   bun subscribers.ts URL PATH HEADER COUNT markers   connect, print "connected", wait for a line,
//       then post a marker event to channel "latency" every 200 ms for 4 s (with BENCH_TOKEN) and
//       print how long each took to reach each subscriber, as JSON (PATH: a page showing that channel)
// HEADER is "Name: value" (an Authorization or a Cookie header).
//
// Each subscriber is a plain TCP socket speaking HTTP/1.1, read in a data callback: the client's own
// cost per received chunk stays small, so the latency measured is mostly the server's.
export {};
const [url, path, header, countText, mode] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  "measure" | "hold" | "markers",
];
const count = Number(countText);
const target = new URL(url);
const request = `GET ${path} HTTP/1.1\r\nHost: ${target.host}\r\n${header}\r\nAccept: text/event-stream\r\n\r\n`;
const received: number[] = [];
let expected = "";
let sentAt = 0;
// markers mode: when each marker was posted, and every arrival's latency.
const markers = new Map<string, number>();
const arrivals: number[] = [];

type State = {
  tail: string;
  connected: boolean;
  done: boolean;
  seen: Set<string>;
  ready: () => void;
  fail: (error: Error) => void;
};

async function subscribe(): Promise<void> {
  const state: State = { tail: "", connected: false, done: false, seen: new Set(), ready: () => {}, fail: () => {} };
  const connected = new Promise<void>((resolve, reject) => {
    state.ready = resolve;
    state.fail = reject;
  });
  await Bun.connect<State>({
    hostname: target.hostname,
    port: Number(target.port),
    data: state,
    socket: {
      open(socket) {
        socket.write(request);
      },
      data(socket, bytes) {
        const s = socket.data;
        if (mode === "markers" && s.connected) {
          const text = s.tail + bytes.toString("latin1");
          for (const m of text.matchAll(/latency-marker-(\d+)-end/g)) {
            const posted = markers.get(m[1]!);
            if (posted === undefined || s.seen.has(m[1]!)) continue; // a marker may appear twice in its fragment
            s.seen.add(m[1]!);
            arrivals.push(performance.timeOrigin + performance.now() - posted);
          }
          s.tail = text.slice(-64);
          return;
        }
        if (s.done || mode === "hold") {
          if (!s.connected) (s.connected = true), s.ready();
          return;
        }
        // Keep a short tail, so a marker split across two reads is still found.
        const text = s.tail + bytes.toString("latin1");
        if (!s.connected) {
          if (!text.startsWith("HTTP/1.1 200")) return s.fail(new Error(`subscribe: ${text.split("\r\n")[0]}`));
          if (!text.includes(": connected")) return void (s.tail = text);
          s.connected = true;
          s.ready();
        }
        if (expected && text.includes(expected)) {
          received.push(performance.timeOrigin + performance.now() - sentAt);
          s.done = true;
        }
        s.tail = text.slice(-128);
      },
      close(socket) {
        socket.data.fail(new Error("subscribe: the server closed the stream"));
      },
    },
  });
  await connected;
}

for (let i = 0; i < count; i += 250) await Promise.all(Array.from({ length: Math.min(250, count - i) }, subscribe));
console.log("connected");
if (mode === "hold") {
  for await (const _ of console) break;
  process.exit(0);
}
for await (const _ of console) break;
if (mode === "markers") {
  const token = process.env.BENCH_TOKEN!;
  for (let n = 0; n < 20; n++) {
    markers.set(String(n), performance.timeOrigin + performance.now());
    await fetch(`${url}/v1/log`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ project: "default", channel: "latency", event: `latency-marker-${n}-end` }),
    });
    await Bun.sleep(200);
  }
  await Bun.sleep(2000);
  arrivals.sort((a, b) => a - b);
  const at = (p: number) => arrivals[Math.min(arrivals.length - 1, Math.floor(arrivals.length * p))] ?? NaN;
  console.log(
    JSON.stringify({
      expected: 20 * count,
      arrived: arrivals.length,
      p50: at(0.5),
      p99: at(0.99),
      max: arrivals.at(-1) ?? NaN,
    }),
  );
  process.exit(0);
}
expected = `fanout-${Date.now()}`;
sentAt = performance.timeOrigin + performance.now();
const at = header.indexOf(":");
await fetch(`${url}/v1/log`, {
  method: "POST",
  headers: { [header.slice(0, at)]: header.slice(at + 1).trim(), "Content-Type": "application/json" },
  body: JSON.stringify({ project: "default", channel: "fanout", event: expected }),
});
const deadline = Date.now() + 30_000;
while (received.length < count && Date.now() < deadline) await Bun.sleep(5);
received.sort((a, b) => a - b);
const pct = (p: number) => received[Math.min(received.length - 1, Math.floor(received.length * p))] ?? NaN;
console.log(
  JSON.stringify({
    subscribers: count,
    delivered: received.length,
    p50: pct(0.5),
    p99: pct(0.99),
    max: received.at(-1) ?? NaN,
  }),
);
process.exit(0);
