// Every route of the server, walked from the route table itself: the table is what the server
// answers (nothing is registered beside it), every API route refuses a missing, unknown or revoked
// token, every dashboard route sends a visitor without a session to sign in, every
// state-changing dashboard request is refused without its CSRF token, every dashboard route
// answers each role as its access says (a viewer changes nothing), a person limited to some
// projects gets a 404 for every route of another project, and a token limited to some projects a
// 403. A new route is covered the moment it is added; one that skipped a check fails here.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mountRoutes, type Route, route, type RouteChecks } from "../../src/http/routes.ts";
import type { Role } from "../../src/model/user.ts";
import { Agent, call, signedIn, startTestApp, type TestApp } from "../helpers.ts";

let server: TestApp;
let owner: Agent;
let member: Agent;
let publicToken: string;
let revokedToken: string;
/** Signed in with each role, seeing every project. */
const as = {} as Record<Role, Agent>;
/** An admin limited to project "a" (the highest role a limit applies to), and the ids of what project "b" holds. */
let limited: Agent;
let limitedToken: string;
const inB = { event: 0, chart: 0, alert: 0, integration: 0, maintenance: 0, check: 0, hook: "", share: 0 };
/** Hooks' ids are not in order (they are the secret part of their URLs): project a's, kept by name. */
let hookInA = "";

/** The routes anyone may call, on purpose: making another one public means adding it here. */
const PUBLIC = [
  "GET /healthz",
  "GET /readyz",
  "GET /openapi.json",
  "GET /docs",
  "GET /assets/:file",
  "GET /manifest.webmanifest",
  "GET /sw.js",
  "GET /icon-192.png",
  "GET /icon-512.png",
  "GET /icon-maskable-512.png",
  "GET /apple-touch-icon.png",
  "GET /web/ls.js",
  "GET /feedback/ls.js",
  // Inbound webhooks: the hook's id is the secret, and each kind checks its service's signature.
  "POST /hooks/:id",
  // Status badges, public by the project's badge key.
  "GET /badge/:key",
  "GET /badge/:key/:file",
  // Shared pages, public by the share's key.
  "GET /s/:key",
  "GET /s/:key/cards/:id",
  "GET /s/:key/status",
  "GET /s/:key/live",
  ...["GET", "POST"].flatMap((method) =>
    ["/ping/:a", "/ping/:a/:b", "/ping/:a/:b/:c", "/api/push/:token"].map((path) => `${method} ${path}`),
  ),
];

const name = (r: Pick<Route, "method" | "path">) => `${r.method} ${r.path}`;
/** A concrete URL for a route's path (its parameters filled with things that exist). */
const urlOf = (path: string) =>
  path.replace(":project", "default").replace(":channel", "general").replace(":file", "app.css").replace(/:\w+/g, "1");

beforeAll(async () => {
  // Every API route is asked four ways without a valid token: more than the default limit of such requests per address.
  // outbound-allow: the integration it tests points at a closed port on this machine.
  server = await startTestApp({ metrics: "true", "rate-limit-ip": "10000/m", "outbound-allow": "127.0.0.1" });
  await server.services.accounts.createUser({ username: "owner", password: "owner password 1" }, "owner");
  for (const role of ["admin", "member", "viewer"] as const)
    await server.services.accounts.createUser({ username: role, password: `${role} password 1` }, role);
  owner = new Agent(server);
  member = new Agent(server);
  await owner.login("owner", "owner password 1");
  await member.login("member", "member password 1");
  for (const role of ["owner", "admin", "member", "viewer"] as const)
    as[role] = await signedIn(server, { username: role, password: `${role} password 1` });
  await server.services.projects.createChannel("default", "general");
  // Projects a and b, alike: a channel, an event, a chart, an alert rule and an integration each.
  for (const name of ["a", "b"]) {
    await server.services.projects.create(name);
    await server.services.projects.createChannel(name, "general");
    const written = await server.services.ingest.logEvent(
      { kind: "full", tokenId: null },
      { project: name, channel: "general", event: "hello", userId: "u1" },
    );
    const chart = await server.services.charts.create({
      project: name,
      kind: "series",
      name: "per day",
      definition: { last_days: 7 },
    });
    const alert = await server.services.alerts.create({ project: name, name: "quiet", kind: "absence", period: 3600 });
    const window = await server.services.maintenance.create({ project: name, starts_at: 0, ends_at: 60 });
    const check = await server.services.checks.create({ project: name, name: "Nightly backup" });
    const hook = await server.services.hooks.create({ project: name, kind: "generic", name: "Deploys" });
    if (name === "a") hookInA = hook.id;
    const share = await server.services.shares.create({ project: name, kind: "dashboard", charts: [chart.id] });
    const { integration } = await server.services.integrations.create({
      project: name,
      kind: "webhook",
      name: "hook",
      config: { url: "http://127.0.0.1:9/hook" },
      enabled: false,
    });
    if (name === "b")
      Object.assign(inB, {
        event: written.result!.id,
        chart: chart.id,
        alert: alert.id,
        integration: integration.id,
        maintenance: window.id,
        check: check.id,
        hook: hook.id,
        share: share.id,
      });
  }
  await server.services.accounts.createUser({ username: "limited", password: "limited password 1" }, "admin", {
    projects: ["a"],
  });
  limited = await signedIn(server, { username: "limited", password: "limited password 1" });
  limitedToken = (await server.services.tokens.create({ name: "only a", projects: ["a"] })).token;
  publicToken = (await server.services.tokens.create({ name: "page", kind: "public", project: "default" })).token;
  const revoked = await server.services.tokens.create({ name: "gone" });
  await server.services.tokens.revoke(String(revoked.info.id));
  revokedToken = revoked.token;
});
afterAll(() => server.close());

const of = (...access: Route["access"][]) => server.routes.filter((r) => access.includes(r.access));
const SIGNED_IN: Route["access"][] = ["viewer", "self", "member", "admin", "owner"];
const RANK: Record<Role, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };
/** The least role each dashboard access needs. */
const LEAST: Record<string, Role> = {
  viewer: "viewer",
  self: "viewer",
  member: "member",
  admin: "admin",
  owner: "owner",
};
/** What the route check says when a role is not enough (a refusal for another reason says something else). */
/** An answer's body, unless it is a stream (a live page's), which is closed at once. */
async function textOf(res: Response): Promise<string> {
  if (res.headers.get("content-type")?.startsWith("text/event-stream")) {
    await res.body?.cancel();
    return "";
  }
  return res.text();
}
const ROLE_REFUSED =
  /this needs a member, an admin or the owner|Only admins and the owner can do this|Only the owner can do this/;

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
      for (const [label, headers] of [
        ...cases,
        ["a revoked token", { Authorization: `Bearer ${revokedToken}` }] as [string, Record<string, string>],
      ]) {
        const res = await call(server, {
          method: r.method,
          path: urlOf(r.path),
          token: null,
          headers,
          body: r.method === "GET" ? undefined : {},
        });
        expect({ route: name(r), label, status: res.status, error: res.json?.error }).toEqual({
          route: name(r),
          label,
          status: 401,
          error: "unauthorized",
        });
      }
    }
  });

  test("each that needs a full-access token refuses a public one: 403", async () => {
    for (const r of of("full")) {
      const res = await call(server, { method: r.method, path: urlOf(r.path), token: publicToken });
      expect({ route: name(r), status: res.status, error: res.json?.error }).toEqual({
        route: name(r),
        status: 403,
        error: "forbidden",
      });
    }
  });

  test("a token limited to project a gets a 403 from every full-access route that reaches project b, and none from a", async () => {
    const routes = of("full").filter((r) => r.path !== "/metrics");
    expect(routes.length).toBeGreaterThanOrEqual(20);
    const idsOf = (path: string, ids: typeof inB) =>
      path
        .replace("/v1/events/:id", `/v1/events/${ids.event}`)
        .replace("/v1/charts/:id", `/v1/charts/${ids.chart}`)
        .replace("/v1/alerts/:id", `/v1/alerts/${ids.alert}`)
        .replace("/v1/integrations/:id", `/v1/integrations/${ids.integration}`)
        .replace("/v1/maintenance/:id", `/v1/maintenance/${ids.maintenance}`)
        .replace("/v1/checks/:id", `/v1/checks/${ids.check}`)
        .replace("/v1/hooks/:id", `/v1/hooks/${ids.hook}`)
        .replace("/v1/shares/:id", `/v1/shares/${ids.share}`)
        .replace(":user_id", "u1");
    const inA = {
      event: inB.event - 1,
      chart: inB.chart - 1,
      alert: inB.alert - 1,
      integration: inB.integration - 1,
      maintenance: inB.maintenance - 1,
      check: inB.check - 1,
      hook: hookInA,
      share: inB.share - 1,
    };
    for (const [project, ids, refused] of [
      ["b", inB, true],
      ["a", inA, false],
    ] as const) {
      for (const r of routes) {
        const path = `${idsOf(r.path, ids)}?project=${project}&title=x&step=hello&step=hello&at=2`;
        const body = r.method === "GET" ? undefined : JSON.stringify({ project, name: "x", kind: "series" });
        const res = await server.fetch(path, {
          method: r.method,
          headers: { Authorization: `Bearer ${limitedToken}`, "Content-Type": "application/json" },
          body,
        });
        const text = await textOf(res);
        const said = res.status === 403 && text.includes("This token is limited to");
        expect({ route: name(r), project, refused: said }).toEqual({ route: name(r), project, refused });
      }
    }
    // Without a project, a route that would reach every project refuses it too; one that reaches none (server metrics) always does.
    expect((await call(server, { path: "/v1/events", token: limitedToken })).status).toBe(403);
    expect((await call(server, { path: "/metrics", token: limitedToken })).status).toBe(403);
    // Ingest likewise: into a, not into b.
    expect(
      (
        await call(server, {
          path: "/v1/log",
          token: limitedToken,
          body: { project: "a", channel: "general", event: "ok" },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await call(server, {
          path: "/v1/log",
          token: limitedToken,
          body: { project: "b", channel: "general", event: "no" },
        })
      ).status,
    ).toBe(403);
  });

  test("each that browsers may call answers its preflight with the methods of its path", async () => {
    for (const r of server.routes.filter((x) => x.cors)) {
      const res = await server.fetch(urlOf(r.path), {
        method: "OPTIONS",
        headers: { Origin: "https://example.com", "Access-Control-Request-Method": r.method },
      });
      expect(res.status).toBe(204);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(res.headers.get("access-control-allow-methods")).toContain(r.method);
    }
  });
});

describe("dashboard routes", () => {
  test("each sends a visitor without a session to sign in, and comes back after", async () => {
    for (const r of of(...SIGNED_IN)) {
      const res = await server.fetch(urlOf(r.path), {
        method: r.method,
        redirect: "manual",
        headers: r.method === "GET" ? {} : { "Content-Type": "application/x-www-form-urlencoded" },
        body: r.method === "GET" ? undefined : "x=1",
      });
      const location = res.headers.get("location") ?? "";
      if (r.signedOut) {
        // Signing out without a session has nothing to end: it goes to the sign-in page all the same.
        expect({ route: name(r), status: res.status, location }).toEqual({
          route: name(r),
          status: 303,
          location: "/login",
        });
        continue;
      }
      expect({ route: name(r), status: res.status, location }).toEqual({
        route: name(r),
        status: 303,
        location: `/login?next=${encodeURIComponent(urlOf(r.path))}`,
      });
    }
  });

  test("each state-changing one refuses a signed-in request without the session's CSRF token, and with another session's", async () => {
    const csrf = await member.csrf();
    const changing = of(...SIGNED_IN).filter((r) => r.method !== "GET");
    expect(changing.length).toBeGreaterThanOrEqual(20);
    for (const r of changing) {
      const json = typeof r.body === "object";
      const send = (agent: Agent, headers: Record<string, string>, body: string) =>
        agent.request(urlOf(r.path), {
          method: r.method,
          headers: { "Content-Type": json ? "application/json" : "application/x-www-form-urlencoded", ...headers },
          body,
        });
      const missing = await send(owner, {}, json ? "{}" : "x=1");
      expect({ route: name(r), status: missing.status }).toEqual({ route: name(r), status: 403 });
      // The member's token, sent with the owner's session: a token is good for its own session only.
      const stolen = await send(owner, { "X-CSRF-Token": csrf }, json ? "{}" : `_csrf=${csrf}`);
      expect({ route: name(r), status: stolen.status }).toEqual({ route: name(r), status: 403 });
    }
  });

  test("each answers every role as its access says: 403 below the role it needs, a viewer on every change but their own", async () => {
    // Ids that name nothing: a role allowed in meets a 404 or a form's 422, and changes nothing that matters.
    const url = (path: string) =>
      path.replace(":project", "default").replace(":channel", "general").replace(/:\w+/g, "999999");
    const routes = of(...SIGNED_IN).filter((r) => r.path !== "/logout");
    expect(routes.length).toBeGreaterThanOrEqual(70);
    for (const role of ["viewer", "member", "admin", "owner"] as const) {
      const agent = as[role];
      const csrf = await agent.csrf();
      for (const r of routes) {
        const json = typeof r.body === "object";
        const init =
          r.method === "GET"
            ? {}
            : {
                method: r.method,
                headers: {
                  "Content-Type": json ? "application/json" : "application/x-www-form-urlencoded",
                  "X-CSRF-Token": csrf,
                },
                body: json ? "{}" : "x=1",
              };
        const res = await agent.request(url(r.path), init);
        const text = await textOf(res);
        const refused = res.status === 403 && ROLE_REFUSED.test(text);
        const allowed = RANK[role] >= RANK[LEAST[r.access]!];
        expect({ route: name(r), access: r.access, role, refused }).toEqual({
          route: name(r),
          access: r.access,
          role,
          refused: !allowed,
        });
      }
    }
  });

  test("a viewer changes nothing: every state-changing route but their own account's needs a member or more", async () => {
    const changing = of(...SIGNED_IN).filter((r) => r.method !== "GET");
    expect(changing.filter((r) => r.access === "viewer").map(name)).toEqual([]);
    // What a viewer may change is theirs alone: signing out, their password, their devices.
    expect(
      changing
        .filter((r) => r.access === "self")
        .map((r) => r.path)
        .every(
          (p) =>
            p === "/logout" || p.startsWith("/settings/account") || p.startsWith("/settings/notifications/devices"),
        ),
    ).toBe(true);
    // mountRoutes refuses to mount a viewer's route that changes something.
    const checks = {} as RouteChecks;
    expect(() =>
      mountRoutes([route({ method: "POST", path: "/oops", access: "viewer", handle: () => new Response() })], checks),
    ).toThrow(/only reads/);
  });

  test("member management is for admins and the owner; roles and projects for the owner", async () => {
    const members = server.routes.filter((r) => r.path.startsWith("/settings/members"));
    expect(members.length).toBeGreaterThanOrEqual(5);
    for (const r of members)
      expect({ route: name(r), ok: r.access === "admin" || r.access === "owner" }).toEqual({
        route: name(r),
        ok: true,
      });
    expect(members.filter((r) => r.access === "owner").map(name)).toEqual(["POST /settings/members/:id"]);
    for (const role of ["viewer", "member"] as const) {
      const csrf = await as[role].csrf();
      const res = await as[role].request("/settings/members", {
        method: "POST",
        form: { _csrf: csrf, username: "sneaky", password: "sneaky password 1", role: "admin" },
      });
      expect(res.status).toBe(403);
    }
    const admin = await as.admin.csrf();
    const promote = await as.admin.request("/settings/members/1", {
      method: "POST",
      form: { _csrf: admin, role: "admin", reach: "all" },
    });
    expect(promote.status).toBe(403);
    expect((await server.services.accounts.list()).some((u) => u.username === "sneaky")).toBe(false);
  });

  test("someone limited to project a gets a 404 for every route of project b, as if it did not exist", async () => {
    const routes = of(...SIGNED_IN).filter((r) => r.path.includes(":project"));
    expect(routes.length).toBeGreaterThanOrEqual(39);
    const csrf = await limited.csrf();
    const adminCsrf = await as.admin.csrf();
    const url = (path: string, project: string) =>
      path.replace(":project", project).replace(":channel", "general").replace(/:\w+/g, "1");
    const send = (agent: Agent, r: Route, path: string, token: string) => {
      const json = typeof r.body === "object";
      return agent.request(
        path,
        r.method === "GET"
          ? {}
          : {
              method: r.method,
              headers: {
                "Content-Type": json ? "application/json" : "application/x-www-form-urlencoded",
                "X-CSRF-Token": token,
              },
              body: json ? "{}" : "x=1",
            },
      );
    };
    for (const r of routes) {
      const res = await send(limited, r, url(r.path, "b"), csrf);
      const text = await textOf(res);
      expect({ route: name(r), status: res.status, hidden: text.includes("is not one of yours") }).toEqual({
        route: name(r),
        status: 404,
        hidden: true,
      });
      // Not a 404 of the project for someone who sees every project, nor for its own project: the limit is what hides it.
      const open = await textOf(await send(as.admin, r, url(r.path, "b"), adminCsrf));
      expect({ route: name(r), hidden: open.includes("is not one of yours") }).toEqual({
        route: name(r),
        hidden: false,
      });
      if (r.method === "GET")
        expect({
          route: name(r),
          hidden: (await textOf(await limited.request(url(r.path, "a")))).includes("is not one of yours"),
        }).toEqual({ route: name(r), hidden: false });
    }
    // A project named in the query string or a form is checked the same way.
    expect((await limited.request("/settings/integrations?project=b")).status).toBe(404);
    expect(
      (
        await limited.request("/settings/api/tokens", {
          method: "POST",
          form: { _csrf: csrf, name: "sneaky", kind: "public", project: "b" },
        })
      ).status,
    ).toBe(404);
    expect((await server.services.tokens.list()).some((t) => t.name === "sneaky")).toBe(false);
  });

  test("each form shown before sign-in refuses a post without its form token", async () => {
    const routes = of("visitor").filter((r) => r.method !== "GET");
    expect(routes.map(name).sort()).toEqual([
      "POST /login",
      "POST /login/link",
      "POST /login/passkey",
      "POST /login/passkey/options",
      "POST /login/second-factor",
      "POST /login/second-factor/passkey",
      "POST /login/second-factor/passkey/options",
      "POST /setup",
    ]);
    for (const r of routes) {
      const res = await server.fetch(r.path, {
        method: "POST",
        redirect: "manual",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: "username=owner&password=owner+password+1",
      });
      expect({ route: name(r), status: res.status }).toEqual({ route: name(r), status: 403 });
    }
  });
});
