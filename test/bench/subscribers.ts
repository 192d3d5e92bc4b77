export {};
// A separate process holding N live SSE subscribers (GET /v1/stream), for the fan-out benchmark.
// It connects them all, prints "connected", waits for a line on stdin, then posts one event and
// reports how long each subscriber took to receive it, as JSON on stdout.
const [url, token, count] = [process.argv[2]!, process.argv[3]!, Number(process.argv[4])];
const auth = { Authorization: `Bearer ${token}` };
const received: number[] = [];
let expected = "";
let sentAt = 0;

async function subscribe(): Promise<void> {
  const response = await fetch(`${url}/v1/stream?project=default&channel=fanout`, { headers: auth });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let ready: () => void = () => {};
  const connected = new Promise<void>((resolve) => (ready = resolve));
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      if (buffer.includes(": connected")) ready();
      if (expected && buffer.includes(expected)) {
        received.push(performance.timeOrigin + performance.now() - sentAt);
        buffer = "";
        expected === "" || (await reader.cancel().catch(() => {}));
        return;
      }
    }
  })();
  await connected;
}

for (let i = 0; i < count; i += 250) await Promise.all(Array.from({ length: Math.min(250, count - i) }, subscribe));
console.log("connected");
for await (const _ of console) break;
expected = `fanout-${Date.now()}`;
sentAt = performance.timeOrigin + performance.now();
await fetch(`${url}/v1/log`, { method: "POST", headers: { ...auth, "Content-Type": "application/json" }, body: JSON.stringify({ project: "default", channel: "fanout", event: expected }) });
const deadline = Date.now() + 30_000;
while (received.length < count && Date.now() < deadline) await Bun.sleep(5);
received.sort((a, b) => a - b);
const pct = (p: number) => received[Math.min(received.length - 1, Math.floor(received.length * p))] ?? NaN;
console.log(JSON.stringify({ subscribers: count, delivered: received.length, p50: pct(0.5), p99: pct(0.99), max: received.at(-1) ?? NaN }));
process.exit(0);
