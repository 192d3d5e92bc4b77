// A separate process holding N live SSE subscribers, for the fan-out benchmarks.
//   bun subscribers.ts URL PATH HEADER COUNT measure   connect, print "connected", wait for a line on
//       stdin, post one event (PATH must be a /v1/stream URL) and print delivery latencies as JSON
//   bun subscribers.ts URL PATH HEADER COUNT hold      connect, print "connected", read and discard
//       until stdin closes (dashboards watching while something else loads the server)
// HEADER is "Name: value" (an Authorization or a Cookie header).
export {};
const [url, path, header, countText, mode] = process.argv.slice(2) as [string, string, string, string, "measure" | "hold"];
const count = Number(countText);
const at = header.indexOf(":");
const headers = { [header.slice(0, at)]: header.slice(at + 1).trim() };
const received: number[] = [];
let expected = "";
let sentAt = 0;

async function subscribe(): Promise<void> {
  const response = await fetch(url + path, { headers });
  if (!response.ok) throw new Error(`subscribe: ${response.status}`);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let ready: () => void = () => {};
  const connected = new Promise<void>((resolve) => (ready = resolve));
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) return;
      if (mode === "hold") {
        ready();
        continue;
      }
      buffer += decoder.decode(value, { stream: true });
      if (buffer.includes(": connected")) ready();
      if (expected && buffer.includes(expected)) {
        received.push(performance.timeOrigin + performance.now() - sentAt);
        return;
      }
    }
  })();
  await connected;
}

for (let i = 0; i < count; i += 250) await Promise.all(Array.from({ length: Math.min(250, count - i) }, subscribe));
console.log("connected");
if (mode === "hold") {
  for await (const _ of console) break;
  process.exit(0);
}
for await (const _ of console) break;
expected = `fanout-${Date.now()}`;
sentAt = performance.timeOrigin + performance.now();
await fetch(`${url}/v1/log`, { method: "POST", headers: { ...headers, "Content-Type": "application/json" }, body: JSON.stringify({ project: "default", channel: "fanout", event: expected }) });
const deadline = Date.now() + 30_000;
while (received.length < count && Date.now() < deadline) await Bun.sleep(5);
received.sort((a, b) => a - b);
const pct = (p: number) => received[Math.min(received.length - 1, Math.floor(received.length * p))] ?? NaN;
console.log(JSON.stringify({ subscribers: count, delivered: received.length, p50: pct(0.5), p99: pct(0.99), max: received.at(-1) ?? NaN }));
process.exit(0);
