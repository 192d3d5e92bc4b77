// The compiled binary, copied alone into an empty directory: it must carry its migrations, assets
// (the scripts other sites load among them) and worker threads, keep data across restarts, and stop
// cleanly on SIGTERM. It is built from a copy of the sources that is deleted before it runs: nothing
// may be read from a source tree.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, cpSync, existsSync, rmSync, statSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import generated from "@opentelemetry/otlp-transformer/build/src/generated/root.js";
import { eventually, openSse, tempDir } from "../helpers.ts";
import { type Cluster, createDatabase, postgresBin, startCluster } from "../pg-cluster.ts";
import { lastLine, ROOT, run, serve } from "./process.ts";

let dir: string;
let binary: string;

type Coder = { encode(m: unknown): { finish(): Uint8Array }; decode(b: Uint8Array): Record<string, unknown> };

beforeAll(async () => {
  const buildDir = tempDir("signalboard-build-");
  const sources = tempDir("signalboard-sources-");
  for (const part of ["src", "drizzle", "public", "scripts", "package.json", "tsconfig.json"])
    cpSync(join(ROOT, part), join(sources, part), { recursive: true });
  symlinkSync(join(ROOT, "node_modules"), join(sources, "node_modules"));
  const built = await run([process.execPath, join(sources, "scripts/build.ts")], [join(buildDir, "signalboard")], {
    cwd: sources,
  });
  rmSync(sources, { recursive: true, force: true });
  if (built.code !== 0) throw new Error(`build failed:\n${built.stdout}\n${built.stderr}`);
  dir = tempDir("signalboard-bin-");
  binary = join(dir, "signalboard");
  copyFileSync(join(buildDir, "signalboard"), binary);
  rmSync(buildDir, { recursive: true, force: true });
  // A stray .env in the working directory must not change a production binary's behaviour.
  await Bun.write(join(dir, ".env"), "SIGNALBOARD_DEFAULT_PROJECT=from-dotenv\n");
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the compiled binary", () => {
  test("runs from an empty directory, keeps data across a restart, stops cleanly", async () => {
    const token = lastLine((await run([binary], ["token", "create", "--name", "bin", "--init"], { cwd: dir })).stdout);
    expect(existsSync(join(dir, "data", "signalboard.db"))).toBe(true);
    // Private to its user: the database holds the push keys and token hashes.
    expect(statSync(join(dir, "data")).mode & 0o077).toBe(0);
    expect(statSync(join(dir, "data", "signalboard.db")).mode & 0o077).toBe(0);

    const first = await serve([binary], [], { cwd: dir });
    const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
    const health = await fetch(`${first.url}/healthz`).then((r) => r.json());
    expect(health.status).toBe("ok");
    const sent = await fetch(`${first.url}/v1/log`, {
      method: "POST",
      headers,
      body: JSON.stringify({ project: "default", channel: "bin", event: "From the binary", icon: ":rocket:" }),
    });
    expect(sent.status).toBe(200);
    expect(await first.stop("SIGTERM")).toBe(0);

    const second = await serve([binary], [], { cwd: dir });
    const list = await fetch(`${second.url}/v1/events?project=default`, { headers }).then((r) => r.json());
    expect(list.events.map((e: { event: string; icon: string }) => [e.event, e.icon])).toEqual([
      ["From the binary", "🚀"],
    ]);
    const projects = await run([binary], ["project", "list"], { cwd: dir });
    expect(projects.stdout).not.toContain("from-dotenv");
    expect(await second.stop("SIGINT")).toBe(0);
  });

  test("serves the scripts other sites load, from inside itself: the tracker and the feedback widget", async () => {
    const server = await serve([binary], [], { cwd: dir });
    try {
      for (const [path, file] of [
        ["/web/ls.js", "public/web/ls.js"],
        ["/feedback/ls.js", "public/feedback/ls.js"],
      ] as const) {
        const res = await fetch(server.url + path, { headers: { "Accept-Encoding": "gzip" }, decompress: false });
        expect({
          path,
          status: res.status,
          type: res.headers.get("content-type"),
          cors: res.headers.get("access-control-allow-origin"),
        }).toEqual({ path, status: 200, type: "text/javascript; charset=utf-8", cors: "*" });
        expect(res.headers.get("content-encoding")).toBe("gzip");
        expect(Bun.gunzipSync(new Uint8Array(await res.arrayBuffer()))).toEqual(
          await Bun.file(join(ROOT, file)).bytes(),
        );
        const again = await fetch(server.url + path, { headers: { "If-None-Match": res.headers.get("etag")! } });
        expect(again.status).toBe(304);
      }
    } finally {
      await server.stop();
    }
  });

  test("decodes an OpenTelemetry export in protobuf with the code it carries, and answers in protobuf", async () => {
    const token = lastLine((await run([binary], ["token", "create", "--name", "otlp"], { cwd: dir })).stdout);
    const logs = (
      generated as unknown as { opentelemetry: { proto: { collector: { logs: { v1: Record<string, Coder> } } } } }
    ).opentelemetry.proto.collector.logs.v1;
    const message = {
      resourceLogs: [
        {
          resource: { attributes: [{ key: "service.name", value: { stringValue: "binary" } }] },
          scopeLogs: [{ logRecords: [{ severityText: "WARN", body: { stringValue: "From an SDK" } }] }],
        },
      ],
    };
    const server = await serve([binary], [], { cwd: dir });
    try {
      const sent = await fetch(`${server.url}/otlp/v1/logs`, {
        method: "POST",
        headers: {
          Authorization: `Bearer ${token}`,
          "Content-Type": "application/x-protobuf",
          "Content-Encoding": "gzip",
        },
        body: Bun.gzipSync(new Uint8Array(logs.ExportLogsServiceRequest!.encode(message).finish())),
      });
      expect(sent.status).toBe(200);
      expect(sent.headers.get("content-type")).toBe("application/x-protobuf");
      expect(
        logs.ExportLogsServiceResponse!.decode(new Uint8Array(await sent.arrayBuffer())).partialSuccess,
      ).toBeNull();
      const list = await fetch(`${server.url}/v1/events?project=default&channel=binary`, {
        headers: { Authorization: `Bearer ${token}` },
      }).then((r) => r.json());
      expect(list.events.map((e: { event: string; tags: unknown }) => [e.event, e.tags])).toEqual([
        ["From an SDK", { severity: "warn" }],
      ]);
    } finally {
      await server.stop();
    }
  });

  test("carries its worker threads: the search index fills, and the writer thread writes", async () => {
    const token = lastLine((await run([binary], ["token", "create", "--name", "workers"], { cwd: dir })).stdout);
    const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
    const server = await serve([binary], ["--writer", "thread"], { cwd: dir });
    try {
      const sent = await fetch(`${server.url}/v1/log`, {
        method: "POST",
        headers,
        body: JSON.stringify({ project: "default", channel: "bin", event: "Wombat from a thread" }),
        signal: AbortSignal.timeout(30_000),
      });
      expect(sent.status).toBe(200);
      // Found once the search index (its own thread) has it.
      await eventually(async () => {
        const found = (
          await fetch(`${server.url}/v1/events?project=default&q=wombat`, { headers }).then((r) => r.json())
        ).events as { event: string }[];
        expect(found.map((e) => e.event)).toEqual(["Wombat from a thread"]);
      });
      expect(server.logs()).not.toContain('"level":"error"');
    } finally {
      await server.stop();
    }
  });
});

describe.skipIf(!postgresBin())("the compiled binary on PostgreSQL", () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster();
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  test("with DATABASE_URL it migrates the database, serves, and two of it share one live view", async () => {
    const env = { DATABASE_URL: await createDatabase(cluster.url) };
    const token = lastLine((await run([binary], ["token", "create", "--name", "bin"], { cwd: dir, env })).stdout);
    const a = await serve([binary], [], { cwd: dir, env });
    const b = await serve([binary], [], { cwd: dir, env });
    try {
      expect(await fetch(`${a.url}/readyz`).then((r) => r.json())).toMatchObject({
        status: "ready",
        database: "postgresql",
      });
      const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
      const stream = await openSse(`${b.url}/v1/stream?project=default`, { Authorization: `Bearer ${token}` });
      const sent = await fetch(`${a.url}/v1/log`, {
        method: "POST",
        headers,
        body: JSON.stringify({ project: "default", channel: "bin", event: "Through A", tags: { via: "pg" } }),
      });
      expect(sent.status).toBe(200);
      await stream.waitFor(1);
      expect(JSON.parse(stream.frames[0]!.data)).toMatchObject({ event: "Through A", tags: { via: "pg" } });
      stream.close();
      const search = await fetch(`${b.url}/v1/events?project=default&tag=via:pg`, { headers }).then((r) => r.json());
      expect(search.events.map((e: { event: string }) => e.event)).toEqual(["Through A"]);
    } finally {
      expect(await a.stop("SIGTERM")).toBe(0);
      expect(await b.stop("SIGTERM")).toBe(0);
    }
  });
});
