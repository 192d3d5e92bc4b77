// Shared test plumbing: the server, on an ephemeral port or in this process (no socket: requests go
// through app.handle), with a fresh data directory, a full-access token and a clock the test moves;
// and small HTTP helpers that talk to either. No mocks: every test talks HTTP to the real thing.
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Config, loadConfig } from "../src/config.ts";
import type { PasswordCost } from "../src/domain/accounts.ts";
import { setLogLevel } from "../src/logger.ts";
import { Conflict } from "../src/errors.ts";
import { type Opened, openServer, type Running, type ServerOptions, startServer } from "../src/server.ts";
import { TestClock } from "./clock.ts";
import { createMigratedDatabase, dropDatabase } from "./pg-cluster.ts";

setLogLevel("silent");

/** Sends a request (a path, or a whole URL) to a test server, over HTTP or in-process. */
export type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

type Extras = {
  dataDir: string;
  token: string;
  /** The time the services go by; timers set on it (the server's jobs) fire only when the test advances it. */
  clock: TestClock;
  fetch: Fetch;
  close: () => Promise<void>;
};

/** A server listening on 127.0.0.1: for streams, sockets, processes and browsers. */
export type TestServer = Running & Extras;

/**
 * The app in this process, not listening: `url` is where its links point, and nothing answers there;
 * `fetch` reaches it. stop() stops it as a server stops (a restart starts another on its dataDir).
 */
export type TestApp = Omit<Opened, "stop"> & { url: string; stop: () => Promise<void> } & Extras;

/** What the HTTP helpers need of either (or of a server process: without `fetch`, over HTTP to `url`). */
export type Target = { url: string; token: string; fetch?: Fetch };

/** How to reach a target: its own fetch, or HTTP to its URL. */
export const sender = (target: Pick<Target, "url" | "fetch">): Fetch =>
  target.fetch ?? ((input, init) => fetch(at(target.url, input), init));

/** A whole URL stays as it is; a path (kept as written, "//x" too) is put after `base`. */
const at = (base: string, input: string): string => (/^[a-z][a-z0-9+.-]*:/i.test(input) ? input : base + input);

/**
 * In the PostgreSQL pass of npm test (scripts/test.ts), the throwaway cluster's URL: each test
 * server gets a database of its own there, unless the test names one (several instances, one database).
 */
export const POSTGRES = process.env.SIGNALBOARD_TEST_POSTGRES || null;
/** For tests of what only SQLite has (its files, its pragmas): they skip, visibly, on PostgreSQL. */
export const onPostgres = POSTGRES !== null;

export function tempDir(prefix = "signalboard-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * Argon2id at a cost of about a millisecond: at the production cost each hash and each sign-in
 * takes half a second on a busy machine, and the suite makes hundreds. A test of what the cost
 * itself does passes `passwordCost: null` (Bun.password's default).
 */
export const TEST_PASSWORD_COST: PasswordCost = { memoryCost: 1024, timeCost: 1 };

/**
 * `lookup` resolves outbound destinations' names in place of the system; `clock` is the test's
 * (a new TestClock at the real time unless given); `passwordCost`, TEST_PASSWORD_COST unless given.
 */
export type TestOptions = Pick<ServerOptions, "lookup"> & { clock?: TestClock; passwordCost?: PasswordCost | null };

/** On PostgreSQL, the database of each data directory: a server started again on its directory (a restart) finds its data. */
const databases = new Map<string, string>();

/** Where in-process apps' links point (their BASE_URL unless a test sets one): nothing answers there. */
const IN_PROCESS_URL = "http://signalboard.test";

/**
 * A server on 127.0.0.1:0 with its own data dir and a full-access token. Like an operator's, it
 * sends nowhere the outbound rules refuse: a test whose receivers listen on 127.0.0.1 says so in
 * `"outbound-allow"`.
 */
export async function startTestServer(
  settings: Record<string, string | undefined> = {},
  dataDir = tempDir(),
  options: TestOptions = {},
): Promise<TestServer> {
  const { config, release } = await testConfig(settings, dataDir);
  const clock = options.clock ?? new TestClock();
  const running = await listenOnFreePort(() => startServer(config, serverOptions(options, clock))).catch(
    async (error) => {
      await release();
      throw error;
    },
  );
  const fetchOver: Fetch = (input, init) => fetch(at(running.url, input), init);
  return {
    ...running,
    ...(await extras(running, dataDir, clock, fetchOver)),
    close: async () => {
      await running.stop();
      await release();
    },
  };
}

/**
 * The same server in this process, not listening: requests go through `app.handle`, with no socket,
 * port or HTTP parsing between. For scenarios of requests and answers; streams, sockets, processes
 * and browsers need startTestServer. The client's address is unknown to it (there is no peer).
 */
export async function startTestApp(
  settings: Record<string, string | undefined> = {},
  dataDir = tempDir(),
  options: TestOptions = {},
): Promise<TestApp> {
  const url = settings["base-url"] ?? IN_PROCESS_URL;
  const { config, release } = await testConfig({ "base-url": url, ...settings }, dataDir);
  const clock = options.clock ?? new TestClock();
  const opened = await openServer(config, serverOptions(options, clock)).catch(async (error) => {
    await release();
    throw error;
  });
  const handle: Fetch = (input, init) => opened.app.handle(new Request(at(url, input), init));
  let stopping: Promise<void> | null = null;
  const stop = () => (stopping ??= opened.stop());
  return {
    ...opened,
    url,
    stop,
    ...(await extras(opened, dataDir, clock, handle)),
    close: async () => {
      await stop();
      await release();
    },
  };
}

/**
 * With port 0 the server takes a free port, lets it go while it starts, and listens on it again;
 * with several test files at once, another process's connection can take it meanwhile. Then it is
 * started again (on another free port): a race of the tests' making, not the server's to answer.
 */
async function listenOnFreePort(start: () => Promise<Running>): Promise<Running> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (error) {
      if (attempt >= 3 || !/^port \d+ in use/.test((error as Error).message)) throw error;
    }
  }
}

/** A test server's configuration, on its own PostgreSQL database in the PostgreSQL pass; `release` drops it and the data dir. */
async function testConfig(
  settings: Record<string, string | undefined>,
  dataDir: string,
): Promise<{ config: Config; release: () => Promise<void> }> {
  let own: string | null = null;
  if (POSTGRES && !("database-url" in settings)) {
    own = databases.get(dataDir) ?? (await createMigratedDatabase(POSTGRES));
    databases.set(dataDir, own);
  }
  const config = loadConfig(
    {
      port: "0",
      host: "127.0.0.1",
      "data-dir": dataDir,
      // A read's budget is the product's promise to a client, not a test's: on a busy machine a
      // chart of a few events can take seconds. A test of the budget sets its own.
      "query-timeout": "60s",
      ...(own ? { "database-url": own } : {}),
      ...settings,
    },
    {},
  );
  const release = async () => {
    if (own) {
      databases.delete(dataDir);
      await dropDatabase(POSTGRES!, own);
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  return { config, release };
}

function serverOptions(options: TestOptions, clock: TestClock): ServerOptions {
  const passwordCost = options.passwordCost === undefined ? TEST_PASSWORD_COST : (options.passwordCost ?? undefined);
  return { lookup: options.lookup, clock, passwordCost };
}

async function extras(
  server: Pick<Opened, "services">,
  dataDir: string,
  clock: TestClock,
  fetcher: Fetch,
): Promise<Omit<Extras, "close">> {
  // Live tokens' names are unique: started again on its data (a restart), or beside another instance
  // on one database (started at the same moment, so counting the others would not do), it names its own.
  const token = (
    await server.services.tokens.create({ name: "test" }).catch((error) => {
      if (!(error instanceof Conflict)) throw error;
      return server.services.tokens.create({ name: `test ${crypto.randomUUID().slice(0, 8)}` });
    })
  ).token;
  return { dataDir, token, clock, fetch: fetcher };
}

/** The flags that point a command at a test server's database (its data directory, or its PostgreSQL database). */
export const storeArgs = (server: Pick<TestServer, "services" | "dataDir">): string[] =>
  server.services.config.databaseUrl
    ? ["--database-url", server.services.config.databaseUrl]
    : ["--data-dir", server.dataDir];

/** Runs SQL on a test server's database, SQLite or PostgreSQL (`?` placeholders); the rows. */
export async function peek<T = Record<string, unknown>>(
  server: Pick<TestServer, "store">,
  text: string,
  ...params: unknown[]
): Promise<T[]> {
  const store = server.store;
  if ("sqlite" in store) return store.sqlite.query(text).all(...(params as never[])) as T[];
  let n = 0;
  return [
    ...((await store.sql.unsafe(
      text.replace(/\?/g, () => `$${++n}`),
      params,
    )) as T[]),
  ];
}

export type Call = {
  method?: string;
  path: string;
  body?: unknown;
  token?: string | null;
  headers?: Record<string, string>;
};

/** One HTTP request; JSON bodies are serialised and sent with Content-Type: application/json. */
export async function call(
  server: Target,
  c: Call,
): Promise<{ status: number; headers: Headers; json: any; text: string }> {
  const headers: Record<string, string> = { ...c.headers };
  const token = c.token === undefined ? server.token : c.token;
  if (token !== null) headers.Authorization ??= `Bearer ${token}`;
  let body: string | undefined;
  if (c.body !== undefined) {
    body = typeof c.body === "string" ? c.body : JSON.stringify(c.body);
    headers["Content-Type"] ??= "application/json";
  }
  const response = await sender(server)(c.path, {
    method: c.method ?? (c.body === undefined ? "GET" : "POST"),
    headers,
    body,
  });
  const text = await response.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON; tests that care assert on text
  }
  return { status: response.status, headers: response.headers, json, text };
}

export const post = (server: Target, path: string, body: unknown, token?: string | null) =>
  call(server, { path, body, token });

/**
 * How long a wait on a condition gives up after: a hang's limit, not a bet on the machine's speed (a
 * test's own limit is 4 minutes; a busy machine may take tens of seconds for what takes one here).
 */
export const HANG_MS = 200_000;

/**
 * Retries `check` until it stops throwing or `timeoutMs` passes. The default is long: a wait on a
 * condition costs only what it waits, and a busy machine (npm test runs several files at once,
 * beside whatever else runs) may take many seconds for what takes milliseconds here. How
 * soon the product keeps a promise ("within a second") is npm run bench's to measure, not a limit here.
 */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = HANG_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await Bun.sleep(50);
    }
  }
}

export type SseFrame = { id?: string; event?: string; data: string };

/** A minimal SSE client over fetch, to see exactly what a script or browser would receive. */
export async function openSse(url: string, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const response = await fetch(url, {
    headers: { Accept: "text/event-stream", ...headers },
    signal: controller.signal,
  });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const frames: SseFrame[] = [];
  const comments: string[] = [];
  const wake = { now: () => {} };
  let ended = false;
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const frame: SseFrame = { data: "" };
          const data: string[] = [];
          for (const line of block.split("\n")) {
            if (line.startsWith(":")) comments.push(line.slice(1).trim());
            else if (line.startsWith("data: ")) data.push(line.slice(6));
            else if (line.startsWith("id: ")) frame.id = line.slice(4);
            else if (line.startsWith("event: ")) frame.event = line.slice(7);
          }
          if (data.length) {
            frame.data = data.join("\n");
            frames.push(frame);
          }
          wake.now();
        }
      }
    } catch {
      // aborted
    }
    ended = true;
    wake.now();
  })();
  return {
    response,
    frames,
    comments,
    get ended() {
      return ended;
    },
    /** Resolves once at least `count` data frames arrived (or rejects after `timeoutMs`). */
    async waitFor(count: number, timeoutMs = HANG_MS): Promise<SseFrame[]> {
      const deadline = Date.now() + timeoutMs;
      while (frames.length < count) {
        if (ended) throw new Error(`stream ended after ${frames.length} frames`);
        if (Date.now() > deadline) throw new Error(`only ${frames.length} of ${count} frames after ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          wake.now = resolve;
          setTimeout(resolve, 50);
        });
      }
      return frames;
    },
    close: () => controller.abort(),
  };
}

/**
 * Resolves once the notifier has settled every delivery queued so far: whatever it was going to
 * send has been sent and answered. After a marker notification arrived, this is the moment to
 * assert that another one was not sent.
 */
export async function notifierIdle(server: Pick<TestServer, "store">, timeoutMs = HANG_MS): Promise<void> {
  await eventually(async () => {
    const pending = await server.store.notifications.pendingCount();
    if (pending) throw new Error(`${pending} deliveries still pending after ${timeoutMs} ms`);
  }, timeoutMs);
}

/** The database file of a data directory. */
export const databaseFile = (dataDir: string) => join(dataDir, "signalboard.db");

/** Opens an SQLite file (read-only unless `write`), runs `use` on it, and closes it. */
export function withDatabase<T>(file: string, use: (db: Database) => T, { write = false } = {}): T {
  const db = new Database(file, { readonly: !write });
  try {
    return use(db);
  } finally {
    db.close();
  }
}

/** Waits until `get` returns something (not undefined or null), and returns it. */
export async function found<T>(get: () => T | undefined | null, timeoutMs = HANG_MS): Promise<T> {
  return eventually(() => {
    const value = get();
    if (value === undefined || value === null) throw new Error(`nothing found within ${timeoutMs} ms`);
    return value;
  }, timeoutMs);
}

/**
 * Waits until the search index (search.db: the events' and the users') has caught up with what the
 * database held when called; on PostgreSQL the index is written with the data, so at once.
 */
export async function searchIndexed(server: Pick<TestServer, "store" | "dataDir">, timeoutMs = HANG_MS): Promise<void> {
  const store = server.store;
  if (!("sqlite" in store)) return;
  const events = store.sqlite.query<{ n: number }, []>("SELECT coalesce(max(id), 0) AS n FROM events").get()!.n;
  const changes = store.sqlite
    .query<{ n: number }, []>("SELECT coalesce(max(seq), 0) AS n FROM profile_changes")
    .get()!.n;
  await eventually(() => {
    const state = withDatabase(
      join(server.dataDir, "search.db"),
      (db) =>
        new Map(
          db
            .query<{ key: string; value: string }, []>("SELECT key, value FROM search_state")
            .all()
            .map((r) => [r.key, r.value]),
        ),
    );
    if (
      Number(state.get("indexed_through") ?? 0) < events ||
      state.get("users_fill") !== "done" ||
      Number(state.get("users_through") ?? 0) < changes
    )
      throw new Error(`the search index has not caught up in ${timeoutMs} ms`);
  }, timeoutMs);
}

/** A client that keeps cookies, like a browser would; of a server (over HTTP or in-process), or of a URL. */
export class Agent {
  cookies = new Map<string, string>();
  readonly base: string;
  private readonly send: Fetch;
  constructor(target: string | Pick<Target, "url" | "fetch">) {
    this.base = typeof target === "string" ? target : target.url;
    this.send = typeof target === "string" ? (input, init) => fetch(this.base + input, init) : sender(target);
  }

  async request(path: string, init: RequestInit & { form?: Record<string, string> } = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set("Cookie", this.cookieHeader());
    let body = init.body;
    if (init.form) {
      body = new URLSearchParams(init.form).toString();
      headers.set("Content-Type", "application/x-www-form-urlencoded");
    }
    const response = await this.send(path, { ...init, headers, body, redirect: "manual" });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const at = pair!.indexOf("=");
      const name = pair!.slice(0, at);
      const value = pair!.slice(at + 1);
      if (/Max-Age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return response;
  }

  /** Its cookies as a Cookie header, for a request made without it (an SSE stream, a raw socket). */
  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  /** The hidden _form token of a page shown before sign-in. */
  async formToken(path: string): Promise<string> {
    const html = await (await this.request(path)).text();
    return /name="_form" value="([^"]+)"/.exec(html)![1]!;
  }

  async login(username: string, password: string): Promise<Response> {
    const token = await this.formToken("/login");
    return this.request("/login", { method: "POST", form: { _form: token, username, password, next: "/" } });
  }

  async csrf(): Promise<string> {
    const html = await (await this.request("/settings/account")).text();
    return /X-CSRF-Token&quot;:&quot;([^&]+)&quot;/.exec(html)![1]!;
  }
}

/** An Agent signed in as `user` (which must exist); throws unless the sign-in succeeded. */
export async function signedIn(
  server: Pick<Target, "url" | "fetch">,
  user: { username: string; password: string },
): Promise<Agent> {
  const agent = new Agent(server);
  const res = await agent.login(user.username, user.password);
  if (res.status !== 303) throw new Error(`signing in as ${user.username} answered ${res.status}, not 303`);
  return agent;
}
