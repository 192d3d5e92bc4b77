// Shared test plumbing: a real server on an ephemeral port with a fresh data directory, tokens,
// and small HTTP helpers. No mocks: every test talks HTTP to the real thing.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config.ts";
import { setLogLevel } from "../src/logger.ts";
import { type Running, startServer } from "../src/server.ts";

setLogLevel("silent");

export type TestServer = Running & { dataDir: string; token: string; close: () => Promise<void> };

export function tempDir(prefix = "signalboard-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A server on 127.0.0.1:0 with its own data dir and a full-access token. */
export async function startTestServer(settings: Record<string, string> = {}, dataDir = tempDir()): Promise<TestServer> {
  const config = loadConfig({ port: "0", host: "127.0.0.1", "data-dir": dataDir, "rate-limit-full": "0", ...settings }, {});
  const running = await startServer(config);
  const token = running.deps.tokens.create({ name: "test" }).token;
  return {
    ...running,
    dataDir,
    token,
    close: async () => {
      await running.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export type Call = { method?: string; path: string; body?: unknown; token?: string | null; headers?: Record<string, string> };

/** One HTTP request; JSON bodies are serialised and sent with Content-Type: application/json. */
export async function call(server: { url: string; token: string }, c: Call): Promise<{ status: number; headers: Headers; json: any; text: string }> {
  const headers: Record<string, string> = { ...c.headers };
  const token = c.token === undefined ? server.token : c.token;
  if (token !== null) headers.Authorization ??= `Bearer ${token}`;
  let body: string | undefined;
  if (c.body !== undefined) {
    body = typeof c.body === "string" ? c.body : JSON.stringify(c.body);
    headers["Content-Type"] ??= "application/json";
  }
  const response = await fetch(server.url + c.path, { method: c.method ?? (c.body === undefined ? "GET" : "POST"), headers, body });
  const text = await response.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON; tests that care assert on text
  }
  return { status: response.status, headers: response.headers, json, text };
}

export const post = (server: { url: string; token: string }, path: string, body: unknown, token?: string | null) => call(server, { path, body, token });
