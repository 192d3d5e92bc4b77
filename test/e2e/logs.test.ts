// What the server writes on stderr, read as an operator reads it: the start-up line names where the
// data is once, and at debug level every request is one line with the status its client got.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { eventually, tempDir } from "../helpers.ts";
import { PROGRAM, type ServerProcess, serve } from "./process.ts";

type Line = Record<string, unknown>;
const lines = (text: string): Line[] =>
  text
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Line);

let dataDir: string;
let server: ServerProcess;

beforeAll(async () => {
  dataDir = tempDir();
  server = await serve(PROGRAM, ["--data-dir", dataDir], { env: { SIGNALBOARD_LOG_LEVEL: "debug" } });
});
afterAll(async () => {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("logs", () => {
  test("the start-up line names the data directory once, with the version", () => {
    const listening = lines(server.logs()).find((l) => l.msg === "listening")!;
    expect(listening).toMatchObject({ database: "sqlite", dataDir, sqliteSync: "full" });
    expect(listening.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(Object.values(listening).filter((v) => v === dataDir)).toHaveLength(1);
    expect(listening).not.toHaveProperty("data");
  });

  test("at debug level each request is one line, with the status the client got and its address", async () => {
    const asked = [
      { path: "/v1/events", init: {}, status: 401, error: "unauthorized" }, // no token
      {
        path: "/v1/log",
        init: { method: "POST", headers: { Authorization: "Bearer sb_nope" }, body: "{}" },
        status: 401,
        error: "unauthorized",
      },
      {
        path: "/",
        init: { headers: { Accept: "text/html" }, redirect: "manual" as const },
        status: 303,
        error: "sign_in_required",
      }, // to sign in
      { path: "/no/such/page", init: {}, status: 404, error: "not_found" },
      { path: "/healthz", init: { method: "DELETE" }, status: 405, error: "method_not_allowed" },
      { path: "/healthz", init: {}, status: 200 },
    ];
    const ids: string[] = [];
    for (const [i, { path, init, status }] of asked.entries()) {
      const id = `log-test-${i}`;
      const response = await fetch(server.url + path, {
        ...init,
        headers: { ...(init as { headers?: Record<string, string> }).headers, "X-Request-Id": id },
      });
      expect(response.status, path).toBe(status);
      ids.push(id);
    }
    await eventually(() => expect(lines(server.logs()).filter((l) => l.id === ids.at(-1))).toHaveLength(1));
    const logged = lines(server.logs());
    for (const [i, { path, status, error }] of asked.entries()) {
      const about = logged.filter((l) => l.id === ids[i]);
      expect(about, path).toHaveLength(1);
      expect(about[0]).toMatchObject({ level: "debug", msg: "request", path, status, ip: "127.0.0.1" });
      if (error) expect(about[0]!.error).toBe(error);
      else expect(about[0]).not.toHaveProperty("error");
    }
  });
});
