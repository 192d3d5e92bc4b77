// Export reads one moment, on both stores: the real `export` command, a process of its own, reads
// a running server's database while events are written over HTTP. The writes come in pairs, an
// old event (a past timestamp, among those already exported) acknowledged before a live one: an
// export that pages through time without one snapshot passes the old event's place before it is
// written, yet reaches the live one, and so holds a live event without its older partner.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { PROGRAM, run } from "../e2e/process.ts";
import { eventually, post, startTestApp, storeArgs, type TestApp } from "../helpers.ts";

const SEEDED = 4000;
/** The seeded events' times (Unix seconds), ten seconds apart from FIRST on. */
const FIRST = 1_600_000_000;
/** An old event of a pair falls among the first tenth of them: on the export's first page, read before it is written. */
const oldTime = () => FIRST + Math.floor(Math.random() * SEEDED);

let server: TestApp;
beforeAll(async () => {
  server = await startTestApp();
  await server.services.projects.create("shop");
  const send = async (i: number) => {
    const sent = await post(server, "/v1/log", {
      project: "shop",
      channel: "seed",
      event: `seed-${i}`,
      tags: { i },
      timestamp: FIRST + i * 10,
    });
    expect(sent.status).toBe(200);
  };
  for (let i = 0; i < SEEDED; i += 50) await Promise.all(Array.from({ length: 50 }, (_, k) => send(i + k)));
});
afterAll(() => server.close());

type Line = { id: number; event: string; channel: string; timestamp: number };

test("export while pairs are written: every event acknowledged before it began is in it, and no live event without its older partner", async () => {
  const acked: { name: string; at: number }[] = [];
  let writing = true;
  let pairs = 0;
  // One pair after another: the old event is acknowledged before its live partner is sent.
  const writer = (async () => {
    while (writing) {
      const n = pairs++;
      const old = await post(server, "/v1/log", {
        project: "shop",
        channel: "pairs",
        event: `old-${n}`,
        timestamp: oldTime(),
      });
      expect(old.status).toBe(200);
      acked.push({ name: `old-${n}`, at: performance.now() });
      const live = await post(server, "/v1/log", { project: "shop", channel: "pairs", event: `live-${n}` });
      expect(live.status).toBe(200);
      acked.push({ name: `live-${n}`, at: performance.now() });
    }
  })();
  await eventually(() => expect(pairs).toBeGreaterThanOrEqual(20), 30_000);

  const began = performance.now();
  const [command, ...args] = PROGRAM;
  // node:child_process, not Bun.spawn: its pipe pushes back (Bun's reads the whole output ahead),
  // so reading slowly keeps the export running, a page at a time, while the pairs go on.
  const proc = spawn(command!, [...args, "export", "--project", "shop", ...storeArgs(server)], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  proc.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
  const exited = new Promise<number>((resolve) => proc.on("close", (code) => resolve(code ?? -1)));
  let text = "";
  for await (const chunk of proc.stdout) {
    // Read slowly: the next piece only once more writes were acknowledged (more than 40 after the
    // first). The export waits on its full pipe meanwhile, however fast or slow this machine is.
    const next = acked.length + (text ? 10 : 41);
    text += chunk;
    await eventually(() => expect(acked.length).toBeGreaterThanOrEqual(next), 30_000);
  }
  const code = await exited;
  const ended = performance.now();
  writing = false;
  await writer;

  expect(stderr).toContain("Exported");
  expect(code).toBe(0);
  const lines = text
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Line);
  expect(stderr).toContain(`Exported ${lines.length} events`);
  const names = new Set(lines.map((l) => l.event));

  // The pairs went on throughout the export, or this proves nothing.
  const during = acked.filter((a) => a.at > began && a.at < ended).length;
  expect(during).toBeGreaterThan(40);

  for (let i = 0; i < SEEDED; i++) expect(names.has(`seed-${i}`)).toBe(true);
  const missing = acked.filter((a) => a.at < began && !names.has(a.name)).map((a) => a.name);
  expect(missing).toEqual([]);
  const orphans = lines
    .filter((l) => l.event.startsWith("live-") && !names.has(`old-${l.event.slice(5)}`))
    .map((l) => l.event);
  expect(orphans).toEqual([]);
  // Each write was sent once the one before it was acknowledged, so one moment holds a first part
  // of them, in the order they were written, and nothing after.
  const written = acked.map((a) => a.name);
  const exported = lines.filter((l) => l.channel === "pairs").map((l) => l.event);
  expect(exported.sort()).toEqual(written.slice(0, exported.length).sort());

  // Order and format as before: oldest first by time, then id; each event once.
  const order = lines.map((l) => [l.timestamp, l.id] as const);
  expect(order).toEqual([...order].sort((a, b) => a[0] - b[0] || a[1] - b[1]));
  expect(names.size).toBe(lines.length);
});

test("a channel's export holds that channel's events, oldest first", async () => {
  const [command, ...args] = PROGRAM;
  const proc = spawn(command!, [...args, "export", "--project", "shop", "--channel", "seed", ...storeArgs(server)], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const [text, code] = await Promise.all([
    new Response(proc.stdout as never).text(),
    new Promise((resolve) => proc.on("close", resolve)),
  ]);
  expect(code).toBe(0);
  const lines = text
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Line);
  expect(lines.map((l) => l.event)).toEqual(Array.from({ length: SEEDED }, (_, i) => `seed-${i}`));
});

test("an empty --channel (an unset variable in a script) is refused, not an export of nothing that succeeds", async () => {
  const result = await run(PROGRAM, ["export", "--project", "shop", "--channel", "", ...storeArgs(server)]);
  expect(result.stdout).toBe("");
  expect(result.stderr).toMatch(/Channel "" does not exist/);
  expect(result.code).not.toBe(0);
});

test("a reader that goes away after the first lines ends the export quietly, and the database goes on", async () => {
  const [command, ...args] = PROGRAM;
  const proc = spawn(command!, [...args, "export", "--project", "shop", ...storeArgs(server)], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  proc.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
  const code = new Promise((resolve) => proc.on("close", resolve));
  for await (const chunk of proc.stdout) {
    expect(String(chunk)).toContain('"event":"seed-0"');
    break; // as `| head -n 1` does
  }
  expect(await code).toBe(0);
  expect(stderr).toBe("");
  const after = await post(server, "/v1/log", { project: "shop", channel: "seed", event: "after", timestamp: FIRST });
  expect(after.status).toBe(200);
});
