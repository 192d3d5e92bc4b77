// Every route of the server, walked from the route table itself: the table is what the server
// answers (nothing is registered beside it), every API route refuses a missing, unknown or revoked
// token, every dashboard route sends a visitor without a session to sign in, and every
// state-changing dashboard request is refused without its CSRF token. A new route is covered the
// moment it is added; one that skipped a check fails here.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Route } from "../../src/http/routes.ts";
import { Agent, call, startTestServer, type TestServer } from "../helpers.ts";

let server: TestServer;
let owner: Agent;
let member: Agent;
let publicToken: string;
let revokedToken: string;

/** The routes anyone may call, on purpose: making another one public means adding it here. */
const PUBLIC = ["GET /healthz", "GET /readyz", "GET /openapi.json", "GET /docs", "GET /assets/:file", "GET /manifest.webmanifest", "GET /sw.js", "GET /icon-192.png", "GET /icon-512.png", "GET /icon-maskable-512.png", "GET /apple-touch-icon.png", "GET /web/ls.js", "GET /feedback/ls.js"];

const name = (r: Pick<Route, "method" | "path">) => `${r.method} ${r.path}`;
/** A concrete URL for a route's path (its parameters filled with things that exist). */
const urlOf = (path: string) => path.replace(":project", "default").replace(":channel", "general").replace(":file", "app.css").replace(/:\w+/g, "1");

beforeAll(async () => {
  // Every API route is asked four ways without a valid token: more than the default limit of such requests per address.
  server = await startTestServer({ metrics: "true", "rate-limit-ip": "10000/m" });
  await server.services.accounts.createUser({ username: "owner", password: "owner password 1" }, "owner");
  await server.services.accounts.createUser({ username: "member", password: "member password 1" }, "member");
  owner = new Agent(server.url);
  member = new Agent(server.url);
  await owner.login("owner", "owner password 1");
  await member.login("member", "member password 1");
  await server.services.projects.createChannel("default", "general");
  publicToken = (await server.services.tokens.create({ name: "page", kind: "public", project: "default" })).token;
  const revoked = await server.services.tokens.create({ name: "gone" });
  await server.services.tokens.revoke(String(revoked.info.id));
  revokedToken = revoked.token;
});
afterAll(() => server.close());

const of = (...access: Route["access"][]) => server.routes.filter((r) => access.includes(r.access));

describe("the route table", () => {
  test("is what the server answers: every registered route comes from it (preflights from its CORS routes)", () => {
    const table = new Set(server.routes.map(name));
    const preflights = new Set(server.routes.filter((r) => r.cors).map((r) => `OPTIONS ${r.path}`));
    const elysia = server.app.routes.map((r) => name({ method: r.method as Route["method"], path: r.path }));
    expect(elysia.filter((r) => !table.has(r) && !preflights.has(r))).toEqual([]);
    expect([...table].filter((r) => !elysia.includes(r))).toEqual([]);
  });

  test("only the listed routes are public", () => {
    expect(of("none").map(name).sort()).toEqual([...PUBLIC].sort());
  });

  test("every path is listed once per method", () => {
    const names = server.routes.map(name);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
  });
});

describe("API routes", () => {
  const cases: [string, Record<string, string>][] = [
    ["no Authorization header", {}],
    ["a malformed header", { Authorization: "Token abc" }],
    ["an unknown token", { Authorization: "Bearer sb_0000000000000000000000000000000000000000" }],
  ];

  test("each refuses a request without a valid token: 401 in the API's JSON", async () => {
    expect(of("token", "full").length).toBeGreaterThanOrEqual(12);
    for (const r of of("token", "full")) {
      for (const [label, headers] of [...cases, ["a revoked token", { Authorization: `Bearer ${revokedToken}` }] as [string, Record<string, string>]]) {
        const res = await call(server, { method: r.method, path: urlOf(r.path), token: null, headers, body: r.method === "GET" ? undefined : {} });
        expect({ route: name(r), label, status: res.status, error: res.json?.error }).toEqual({ route: name(r), label, status: 401, error: "unauthorized" });
      }
    }
  });

  test("each that needs a full-access token refuses a public one: 403", async () => {
    for (const r of of("full")) {
      const res = await call(server, { method: r.method, path: urlOf(r.path), token: publicToken });
      expect({ route: name(r), status: res.status, error: res.json?.error }).toEqual({ route: name(r), status: 403, error: "forbidden" });
    }
  });

  test("each that browsers may call answers its preflight with the methods of its path", async () => {
    for (const r of server.routes.filter((x) => x.cors)) {
      const res = await fetch(server.url + urlOf(r.path), { method: "OPTIONS", headers: { Origin: "https://example.com", "Access-Control-Request-Method": r.method } });
      expect(res.status).toBe(204);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(res.headers.get("access-control-allow-methods")).toContain(r.method);
    }
  });
});

describe("dashboard routes", () => {
  test("each sends a visitor without a session to sign in, and comes back after", async () => {
    for (const r of of("member", "owner")) {
      const res = await fetch(server.url + urlOf(r.path), { method: r.method, redirect: "manual", headers: r.method === "GET" ? {} : { "Content-Type": "application/x-www-form-urlencoded" }, body: r.method === "GET" ? undefined : "x=1" });
      const location = res.headers.get("location") ?? "";
      if (r.signedOut) {
        // Signing out without a session has nothing to end: it goes to the sign-in page all the same.
        expect({ route: name(r), status: res.status, location }).toEqual({ route: name(r), status: 303, location: "/login" });
        continue;
      }
      expect({ route: name(r), status: res.status, location }).toEqual({ route: name(r), status: 303, location: `/login?next=${encodeURIComponent(urlOf(r.path))}` });
    }
  });

  test("each state-changing one refuses a signed-in request without the session's CSRF token, and with another session's", async () => {
    const csrf = await member.csrf();
    const changing = of("member", "owner").filter((r) => r.method !== "GET");
    expect(changing.length).toBeGreaterThanOrEqual(20);
    for (const r of changing) {
      const json = typeof r.body === "object";
      const send = (agent: Agent, headers: Record<string, string>, body: string) => agent.request(urlOf(r.path), { method: r.method, headers: { "Content-Type": json ? "application/json" : "application/x-www-form-urlencoded", ...headers }, body });
      const missing = await send(owner, {}, json ? "{}" : "x=1");
      expect({ route: name(r), status: missing.status }).toEqual({ route: name(r), status: 403 });
      // The member's token, sent with the owner's session: a token is good for its own session only.
      const stolen = await send(owner, { "X-CSRF-Token": csrf }, json ? "{}" : `_csrf=${csrf}`);
      expect({ route: name(r), status: stolen.status }).toEqual({ route: name(r), status: 403 });
    }
  });

  test("each owner's route refuses a member: 403", async () => {
    const csrf = await member.csrf();
    const routes = of("owner");
    expect(routes.length).toBeGreaterThan(0);
    for (const r of routes) {
      const res = await member.request(urlOf(r.path), { method: r.method, ...(r.method === "GET" ? {} : { form: { _csrf: csrf, username: "sneaky", password: "sneaky password 1" } }) });
      expect({ route: name(r), status: res.status }).toEqual({ route: name(r), status: 403 });
    }
    expect((await server.services.accounts.list()).some((u) => u.username === "sneaky")).toBe(false);
  });

  test("each form shown before sign-in refuses a post without its form token", async () => {
    const routes = of("visitor").filter((r) => r.method !== "GET");
    expect(routes.map(name).sort()).toEqual(["POST /login", "POST /setup"]);
    for (const r of routes) {
      const res = await fetch(server.url + r.path, { method: "POST", redirect: "manual", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: "username=owner&password=owner+password+1" });
      expect({ route: name(r), status: res.status }).toEqual({ route: name(r), status: 403 });
    }
  });
});
