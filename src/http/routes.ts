// Every route of the server is data: a method, a path, who may call it, and a handler. mountRoutes
// registers them and applies the checks their access names before the handler runs (a token; a
// session, the role it needs, and on a state-changing request its CSRF token), and the project
// check: a person limited to some projects gets a 404 for any other project a request names, and a
// token limited to some projects a 403, so no handler can forget one. The OpenAPI document, the
// CORS preflights, the API/dashboard split of errors and the tests that walk every route are
// derived from the same lists (api/routes.ts, web/routes.ts).
import type { Server } from "bun";
import { Elysia } from "elysia";
import type { z } from "zod";
import { assertCanRead, assertTokenReaches, hasRole, reaches } from "../domain/access.ts";
import type { Metrics } from "../metrics.ts";
import type { Scope } from "../model/access.ts";
import type { Actor } from "../model/audit.ts";
import type { Role, Session } from "../model/user.ts";
import { forClient } from "../read-context.ts";
import type { Guard } from "./auth.ts";
import { readForm, readJson, WEB_BODY_LIMIT } from "./body.ts";
import { Forbidden, NotFound } from "../errors.ts";
import { errorOf } from "./on-error.ts";
import { statusOf } from "./errors.ts";
import type { WebGuard } from "./session.ts";

/**
 * Who may call a route.
 * - none: anyone (health checks, assets, the API reference).
 * - token, full: the API, with a bearer token; any valid token (a public one within its scope), or a full-access one.
 * - visitor: dashboard pages shown before sign-in (setup, login); their forms carry a double-submit token.
 * - viewer, member, admin, owner: the dashboard, signed in with that role or a higher one (owner >
 *   admin > member > viewer). A viewer's route only reads: it is a GET (mountRoutes refuses another).
 * - self: the dashboard, signed in with any role, for what a person changes of their own (their
 *   password, their devices, signing out): the one kind of change a viewer may make.
 * Every request but a GET of a signed-in route carries the session's CSRF token.
 */
export type Access = "none" | "token" | "full" | "visitor" | SignedIn;

/** The dashboard's access kinds: a signed-in session, and what its role must be. */
export type SignedIn = "viewer" | "self" | "member" | "admin" | "owner";

/** The least role each signed-in access kind needs. */
const LEAST: Record<SignedIn, Role> = {
  viewer: "viewer",
  self: "viewer",
  member: "member",
  admin: "admin",
  owner: "owner",
};

export type Method = "GET" | "POST" | "PATCH" | "DELETE";

export type BaseContext = { request: Request; server: Server<unknown> | null; params: Record<string, string> };

/**
 * What a handler gets besides the request: the token's scope, or the session and the checked body;
 * and, where a change may be audited, who is asking and from where.
 */
export type Context<A extends Access> = BaseContext &
  (A extends "token"
    ? { scope: Scope }
    : A extends "full"
      ? { scope: Scope; actor: Actor }
      : A extends SignedIn
        ? { session: Session; body: unknown; actor: Actor }
        : A extends "visitor"
          ? { body: unknown }
          : object);

/**
 * API: the project a request reaches (null: every project), or each project it names (every one
 * must be reached); asked only for a token limited to some projects.
 */
export type ProjectOf = (
  ctx: BaseContext & { scope: Scope },
) => string | string[] | null | Promise<string | string[] | null>;

/** An API route's entry in the OpenAPI document and the /docs page. */
export type ApiDoc = {
  summary: string;
  description: string;
  body?: z.ZodType;
  query?: z.ZodType;
  params?: z.ZodType;
  example: unknown;
  contentType?: string;
};

export type Route<A extends Access = Access> = {
  method: Method;
  path: string;
  access: A;
  handle: (ctx: Context<A>) => Response | Promise<Response>;
  /** Dashboard: how the body of a state-changing request is read and checked; a form unless it says JSON (with its limit). */
  body?: "form" | { json: number };
  /** Dashboard, signed in: what a visitor without a session gets, instead of being sent to sign in. */
  signedOut?: (ctx: BaseContext) => Response | Promise<Response>;
  /**
   * API, full access: the project the request reaches, for tokens limited to some projects; a
   * route without it refuses them (403), so a new route is closed to them until it says.
   */
  project?: ProjectOf;
  /** API: web pages on other origins may call it (with a public token); its preflight is answered. */
  cors?: boolean;
  /** API: counted and timed by route and status (signalboard_ingest_*). */
  metered?: boolean;
  doc?: ApiDoc;
};

/** A route, typed by its access (so its handler sees what that access provides). */
export const route = <A extends Access>(r: Route<A>): Route => r as unknown as Route;

export type RouteChecks = {
  guard: Guard;
  web: WebGuard;
  metrics: Metrics;
};

const CORS_PREFLIGHT = {
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Allow-Headers": "Authorization, Content-Type, Idempotency-Key",
  "Access-Control-Max-Age": "86400",
};

/** Registers `routes` with their checks, and a preflight for every path with a CORS route. */
export function mountRoutes(routes: Route[], checks: RouteChecks): Elysia {
  const app = new Elysia({ name: "routes" });
  for (const r of routes) {
    if (r.access === "viewer" && r.method !== "GET")
      throw new Error(
        `${r.method} ${r.path}: a viewer's route only reads; a change needs member, admin, owner or self`,
      );
    // The handler names what it uses, so Elysia builds only that for each request.
    // A page or an API read is asked on behalf of its client: a read it makes is stopped if the client leaves.
    const handle = r.method === "GET" ? forEachClient(guarded(r, checks)) : guarded(r, checks);
    app.route(
      r.method,
      r.path,
      ({ request, server, params }) => (hasNul(params) ? notFound() : handle({ request, server, params })),
      { parse: "none" },
    );
  }
  const corsPaths = new Map<string, Set<string>>();
  for (const r of routes)
    if (r.cors) (corsPaths.get(r.path) ?? corsPaths.set(r.path, new Set(["OPTIONS"])).get(r.path)!).add(r.method);
  for (const [path, methods] of corsPaths) {
    const headers = { ...CORS_PREFLIGHT, "Access-Control-Allow-Methods": [...methods].sort().join(", ") };
    app.options(path, () => new Response(null, { status: 204, headers }));
  }
  return app;
}

/** Nothing is named with the NUL character (every name is refused with it), so a path holding one names nothing. */
function hasNul(params: Record<string, string>): boolean {
  for (const key in params) if (params[key]!.includes("\u0000")) return true;
  return false;
}
function notFound(): never {
  throw new NotFound("Nothing here is named with the NUL character (U+0000).");
}

function forEachClient(
  handle: (c: BaseContext) => Promise<Response> | Response,
): (c: BaseContext) => Promise<Response> | Response {
  return (c) => forClient(c.request.signal, () => handle(c));
}

function guarded(r: Route, { guard, web, metrics }: RouteChecks): (c: BaseContext) => Promise<Response> | Response {
  const handle = r.handle as (ctx: BaseContext & Record<string, unknown>) => Response | Promise<Response>;
  switch (r.access) {
    case "none":
      return handle;
    case "token":
    case "full": {
      const full = r.access === "full";
      const projectOf = r.project;
      const authorized = async (c: BaseContext) => {
        const scope = await guard.authenticate(c.request, c.server);
        if (!full) return handle({ ...c, scope });
        assertCanRead(scope);
        if (scope.kind === "full" && scope.projects) {
          // Limited to some projects: the route must say which it reaches.
          if (!projectOf)
            throw new Forbidden(
              `This token is limited to some projects; ${r.method} ${r.path} reaches beyond them. Use a token that is not limited.`,
            );
          for (const project of [await projectOf({ ...c, scope })].flat()) assertTokenReaches(scope, project);
        }
        const actor = {
          userId: null,
          name: `token “${scope.name ?? scope.tokenId}”`,
          ip: guard.ip(c.request, c.server),
        };
        return handle({ ...c, scope, actor });
      };
      return r.metered ? metered(`${r.method} ${r.path}`, authorized, metrics) : authorized;
    }
    case "visitor":
      return async (c) => {
        if (r.method === "GET") return handle({ ...c, body: null });
        const body = await readForm(c.request, WEB_BODY_LIMIT);
        web.verifyFormToken(c.request, (body as Record<string, unknown>)._form);
        return handle({ ...c, body });
      };
    default: {
      const least = LEAST[r.access];
      const bodyOf = r.body;
      return async (c) => {
        // Without a session, the visitor is sent to sign in (or to set up the owner), then back here.
        const session = r.signedOut ? await web.session(c.request) : await web.requireSession(c.request);
        if (!session) return r.signedOut!(c);
        // A project beyond theirs does not exist for them, whatever the route: first, so nothing else tells.
        const projects = session.user.projects;
        if (projects) assertSees(projects, c.params?.project, new URL(c.request.url).searchParams.getAll("project"));
        if (!hasRole(session.user, least)) throw new Forbidden(ROLE_NEEDED[least]);
        const actor = { userId: session.user.id, name: session.user.username, ip: guard.ip(c.request, c.server) };
        if (r.method === "GET") return handle({ ...c, session, body: null, actor });
        // The body read (capped), the session checked again (it may have ended meanwhile), then its CSRF token.
        const body =
          typeof bodyOf === "object"
            ? await web.json(c.request, session, bodyOf.json)
            : await web.form(c.request, session);
        if (projects && typeof bodyOf !== "object") assertSees(projects, (body as Record<string, unknown>).project);
        return handle({ ...c, session, body, actor });
      };
    }
  }
}

const ROLE_NEEDED: Record<Role, string> = {
  viewer: "Sign in to do this.",
  member: "Viewers can look but not change anything: this needs a member, an admin or the owner.",
  admin: "Only admins and the owner can do this.",
  owner: "Only the owner can do this.",
};

/** Throws NotFound for a project named here (path, query or form) beyond `projects`: to its user it does not exist. */
function assertSees(projects: string[], ...named: unknown[]): void {
  for (const name of named.flat()) {
    if (typeof name === "string" && name !== "" && !reaches(projects, name))
      throw new NotFound(`Project "${name}" does not exist, or is not one of yours.`);
  }
}

/**
 * API: a route's project is its `project` query parameter, or `fallback` (the default project) without one.
 * Every `project` given is checked: one named twice (`project=a&project=b`) reaches both, whichever the handler reads.
 */
export const projectInQuery =
  (fallback: string | null = null): ProjectOf =>
  ({ request }) => {
    const named = new URL(request.url).searchParams.getAll("project");
    return named.length ? named : fallback;
  };

/** API: a route's project is its JSON body's `project`, or `fallback`; read from a copy (the handler reads the body itself). */
export const projectInBody =
  (limit: number, fallback: string | null = null): ProjectOf =>
  async ({ request }) => {
    const body = await readJson(request.clone(), limit);
    const project = (body as Record<string, unknown>).project;
    return typeof project === "string" ? project : fallback;
  };

/** Counts each answer by route and status, and times it (the counter of a success is kept at hand: one addition). */
function metered(name: string, handle: (c: BaseContext) => Promise<Response>, metrics: Metrics) {
  const answered = metrics.ingestRequests.cell({ route: name, status: "200" });
  const seconds = metrics.ingestSeconds.cell({ route: name });
  return async (c: BaseContext) => {
    const started = performance.now();
    try {
      const response = await handle(c);
      answered.value++;
      return response;
    } catch (error) {
      metrics.ingestRequests.inc({ route: name, status: String(statusOf(errorOf(error, c.request))) });
      throw error;
    } finally {
      seconds.observe((performance.now() - started) / 1000);
    }
  };
}

/** The query string's parameters, repeated ones (`tag`) as lists. */
export function queryOf(request: Request, lists: string[] = []): Record<string, string | string[]> {
  const params = new URL(request.url).searchParams;
  const out: Record<string, string | string[]> = {};
  for (const name of lists) out[name] = params.getAll(name);
  for (const [key, value] of params) if (!lists.includes(key)) out[key] = value;
  return out;
}
