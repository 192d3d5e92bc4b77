// An OTLP export is read off the event loop: a body of a few megabytes holding a quarter of a
// million attributes takes a worker seconds to decode, while the thread that serves requests only
// reads the body and writes what it is handed back. Measured as the CPU the main thread uses
// between two turns of its loop (a timer every 10 ms reading /proc's schedstat for this thread),
// which a busy machine does not inflate: waiting for a core is not CPU used.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import generated from "@opentelemetry/otlp-transformer/build/src/generated/root.js";
import { call, startTestApp, type TestApp } from "../helpers.ts";

type Coder = { encode(m: unknown): { finish(): Uint8Array } };
const LOGS: Coder = (generated as unknown as { opentelemetry: { proto: { collector: any } } }).opentelemetry.proto
  .collector.logs.v1.ExportLogsServiceRequest;

let server: TestApp;
beforeAll(async () => {
  server = await startTestApp({});
  await server.services.projects.create("shop");
});
afterAll(() => server.close());

/** One record whose body names it, with `n` string attributes k0, k1, ... */
const heavy = (name: string, n: number) => ({
  resourceLogs: [
    {
      resource: { attributes: [{ key: "service.name", value: { stringValue: "importer" } }] },
      scopeLogs: [
        {
          logRecords: [
            {
              body: { stringValue: name },
              attributes: Array.from({ length: n }, (_, i) => ({ key: `k${i}`, value: { stringValue: `v${i}` } })),
            },
          ],
        },
      ],
    },
  ],
});

/** The most CPU (ms) this thread used between two ticks of a 10 ms timer while `work` ran, its answer's tick included. */
async function mostCpuBetweenTicks(work: () => Promise<void>): Promise<number> {
  const schedstat = `/proc/self/task/${process.pid}/schedstat`;
  const cpu = () => Number(readFileSync(schedstat, "utf8").split(" ")[0]) / 1e6;
  let last = cpu();
  let most = 0;
  let ticked: (() => void) | null = null;
  const timer = setInterval(() => {
    const now = cpu();
    most = Math.max(most, now - last);
    last = now;
    ticked?.();
  }, 10);
  try {
    await work();
    await new Promise<void>((resolve) => (ticked = resolve)); // the tick after the answer
  } finally {
    clearInterval(timer);
  }
  return most;
}

async function post(contentType: string, body: Uint8Array<ArrayBuffer> | string) {
  const response = await server.fetch("/otlp/v1/logs", {
    method: "POST",
    headers: { Authorization: `Bearer ${server.token}`, "Content-Type": contentType, "X-Signalboard-Project": "shop" },
    body,
  });
  return { status: response.status, text: await response.text() };
}

const event = async (name: string) =>
  (
    (await call(server, { path: `/v1/events?project=shop&channel=importer&limit=50` })).json.events as {
      event: string;
      tags: Record<string, unknown>;
    }[]
  ).find((e) => e.event === name);

// Read on the loop, these 180,000 attributes held it for 200 ms of CPU and more (the JSON one for
// about 100); read by a worker, the loop's longest turn is 10 to 50 ms (its own reading of the body).
test("a protobuf export of 180,000 attributes (3.7 MB) is read without holding the event loop", async () => {
  const body = new Uint8Array(LOGS.encode(heavy("protobuf heavy", 180_000)).finish());
  let answer = { status: 0, text: "" };
  const most = await mostCpuBetweenTicks(async () => {
    answer = await post("application/x-protobuf", body);
  });
  expect(answer.status).toBe(200);
  const stored = await event("protobuf heavy");
  expect(Object.keys(stored!.tags)).toHaveLength(32); // an event's tags stop at 32
  expect(stored!.tags.k0).toBe("v0");
  expect(most).toBeLessThan(120);
});

test("so is an OTLP/JSON export of 75,000 attributes (4 MB), and a gzipped one", async () => {
  const json = JSON.stringify(heavy("json heavy", 75_000));
  let answer = { status: 0, text: "" };
  const most = await mostCpuBetweenTicks(async () => {
    answer = await post("application/json", json);
  });
  expect(answer).toEqual({ status: 200, text: "{}" });
  expect((await event("json heavy"))!.tags.k31).toBe("v31");
  expect(most).toBeLessThan(120);

  const zipped = Bun.gzipSync(JSON.stringify(heavy("gzipped heavy", 75_000)));
  const response = await server.fetch("/otlp/v1/logs", {
    method: "POST",
    headers: {
      Authorization: `Bearer ${server.token}`,
      "Content-Type": "application/json",
      "Content-Encoding": "gzip",
      "X-Signalboard-Project": "shop",
    },
    body: zipped,
  });
  expect(response.status).toBe(200);
  expect(await event("gzipped heavy")).toBeDefined();
});

test("exports read at the same time are each stored whole, in their own projects", async () => {
  await server.services.projects.create("other");
  const many = (name: string, n: number) => ({
    resourceLogs: [
      {
        resource: { attributes: [{ key: "service.name", value: { stringValue: "batch" } }] },
        scopeLogs: [{ logRecords: Array.from({ length: n }, (_, i) => ({ body: { stringValue: `${name} ${i}` } })) }],
      },
    ],
  });
  const send = (project: string, n: number) =>
    server.fetch("/otlp/v1/logs", {
      method: "POST",
      headers: {
        Authorization: `Bearer ${server.token}`,
        "Content-Type": "application/json",
        "X-Signalboard-Project": project,
      },
      body: JSON.stringify(many(project, n)),
    });
  // More records than one part of a plan (500), a few exports at once: more than there are workers.
  const answers = await Promise.all([send("shop", 1234), send("other", 777), send("shop", 501), send("other", 1)]);
  expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
  const listed = async (project: string) => {
    let total = 0;
    let cursor: string | null = null;
    do {
      const r = await call(server, {
        path: `/v1/events?project=${project}&channel=batch&limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      });
      total += r.json.events.length;
      cursor = r.json.next_cursor ?? null;
    } while (cursor);
    return total;
  };
  expect(await listed("shop")).toBe(1234 + 501);
  expect(await listed("other")).toBe(777 + 1);
});
