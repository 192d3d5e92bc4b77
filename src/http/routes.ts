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
import { validate } from "../domain/validation.ts";
import { Forbidden, NotFound } from "../errors.ts";
import type { Metrics } from "../metrics.ts";
import type { Scope } from "../model/access.ts";
import type { Actor } from "../model/audit.ts";
import type { Channel, Project } from "../model/project.ts";
import type { Role, Session } from "../model/user.ts";
import { forClient } from "../read-context.ts";
import type { Guard } from "./auth.ts";
import { readForm, readJson, WEB_BODY_LIMIT } from "./body.ts";
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

/** An API route's entry in the OpenAPI document and the /docs page (a route's params and query schemas are added to it). */
export type ApiDoc = {
  summary: string;
  description: string;
  body?: z.ZodType;
  query?: z.ZodType;
  params?: z.ZodType;
  example: unknown;
  contentType?: string;
};

/**
 * What a dashboard route on `:project` (and `:channel`) needs looked up before it runs: one place
 * finds it, and answers 404 for one that does not exist.
 */
export type Needs = "project" | "channel";
export type Found = { project: Project; channel?: Channel };
type FoundOf<N> = N extends "channel"
  ? { project: Project; channel: Channel }
  : N extends "project"
    ? { project: Project }
    : unknown;

/** How the routes' lookups are made (the projects service). */
export type Finder = {
  requireProject(name: string): Promise<Project>;
  requireChannel(project: string, name: string): Promise<{ project: Project; channel: Channel }>;
};

/** The properties every route has, whatever its handler receives. */
type RouteBase<A extends Access, Path extends string = string> = {
  method: Method;
  path: Path;
  access: A;
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
  needs?: Needs;
};

/** A route as mountRoutes sees it: its handler takes the raw context (and what it needs, found). */
type RouteOf<A extends Access> = RouteBase<A> & {
  handle: (ctx: Context<A> & { found?: Found }) => Response | Promise<Response>;
};

/** A route of any access, as the route lists hold them. */
export type Route<A extends Access = Access> = A extends Access ? RouteOf<A> : never;

/** The names of a path's parameters: "/p/:project/c/:channel" → "project" | "channel". */
export type PathParams<Path extends string> = Path extends `${string}:${infer Name}/${infer Rest}`
  ? Name | PathParams<`/${Rest}`>
  : Path extends `${string}:${infer Name}`
    ? Name
    : never;

type Schema = z.ZodType;

/**
 * What a route's handler receives: the context of its access, its path parameters (as their schema
 * parses them, or as strings), its query and body as their schemas parse them, and what it needs.
 */
export type Input<A extends Access, Path extends string, P, Q, B, N> = Omit<Context<A>, "params" | "body"> & {
  params: P extends Schema ? z.output<P> : Record<PathParams<Path>, string>;
} & (Q extends Schema ? { query: z.output<Q> } : unknown) &
  (A extends SignedIn | "visitor" ? { body: B extends Schema ? z.output<B> : unknown } : unknown) &
  FoundOf<N>;

/** A route as it is written: its schemas, and a handler typed by them and by its access. */
export type RouteDef<A extends Access, Path extends string, P, Q, B, N> = RouteBase<A, Path> & {
  /** The path's parameters: an API answers 400 for one its schema refuses, the dashboard 404 (with the schema's message). */
  params?: P;
  /** The query string, repeated names as lists where the schema takes a list; refused with 400. */
  query?: Q;
  /** The dashboard form's fields (its values are strings, or lists of them; form.ts has lenient field schemas); refused with 400. */
  form?: B;
  needs?: N;
  handle: (ctx: Input<A, Path, P, Q, B, N>) => Response | Promise<Response>;
};

/**
 * A route, typed by its access and its schemas: the handler receives its input parsed, and the
 * context its access provides (a token's scope, or a session with its role).
 */
export function route<
  A extends Access,
  Path extends string,
  P extends Schema | undefined = undefined,
  Q extends Schema | undefined = undefined,
  B extends Schema | undefined = undefined,
  N extends Needs | undefined = undefined,
>(def: RouteDef<A, Path, P, Q, B, N>): RouteOf<A> {
  const { params, query, form, handle, doc, ...rest } = def;
  const api = def.access === "token" || def.access === "full";
  // A route that declares nothing to parse (the ingest routes) gets its context as it comes: no copy on the hot path.
  const plain = !params && !query && !form && !def.needs;
  const lists = query ? listsOf(query) : [];
  return {
    ...rest,
    ...(doc && { doc: { ...(params && { params }), ...(query && { query }), ...doc } }),
    handle(ctx) {
      if (plain) return handle(ctx as Input<A, Path, P, Q, B, N>);
      const { found, ...raw } = ctx;
      const input = {
        ...raw,
        ...found,
        params: params ? parseParams(params, raw.params, api) : raw.params,
        ...(query && { query: validate(query, queryOf(raw.request, lists), "query") }),
        ...(form && "body" in raw && { body: validate(form, raw.body) }),
      };
      // The one place the parsed input meets its declared types: each part was parsed by its own schema above.
      return handle(input as Input<A, Path, P, Q, B, N>);
    },
  };
}

/** An API's path parameter refused is a 400 (as a query parameter's); on the dashboard, a path that names nothing is a 404. */
function parseParams(schema: Schema, params: Record<string, string>, api: boolean): unknown {
  if (api) return validate(schema, params, "query");
  const parsed = schema.safeParse(params);
  if (parsed.success) return parsed.data;
  throw new NotFound(parsed.error.issues[0]?.message ?? "Nothing here by that name.");
}

/**
 * The names a query schema takes as lists (a name the query may repeat: `tag`, `step`), or "all"
 * for a record of lists (every name read with all its values: the chart builder's fields).
 */
function listsOf(schema: Schema): string[] | "all" {
  const values = valuesOf(schema);
  if (values) return isList(values) ? "all" : [];
  const shape = shapeOf(schema);
  return Object.keys(shape).filter((name) => isList(shape[name]!));
}

type Def = { type: string; shape?: Record<string, Schema>; innerType?: Schema; in?: Schema; valueType?: Schema };

/** The values' schema of a record schema, through what wraps it; undefined for another schema. */
function valuesOf(schema: Schema): Schema | undefined {
  const def = schema._zod.def as Def;
  if (def.type === "record") return def.valueType;
  const inner = def.innerType ?? def.in;
  return inner ? valuesOf(inner) : undefined;
}

/** The fields of an object schema, through what wraps it (optional, a transform's input). */
function shapeOf(schema: Schema): Record<string, Schema> {
  const def = schema._zod.def as Def;
  if (def.shape) return def.shape;
  const inner = def.innerType ?? def.in;
  return inner ? shapeOf(inner) : {};
}

function isList(schema: Schema): boolean {
  const def = schema._zod.def as Def;
  if (def.type === "array") return true;
  const inner = def.innerType ?? def.in;
  return inner ? isList(inner) : false;
}

export type RouteChecks = {
  guard: Guard;
  web: WebGuard;
  metrics: Metrics;
  projects: Finder;
};

const CORS_PREFLIGHT = {
  "Access-Control-Allow-Origin": "*",
  // X-Signalboard-Project and Content-Encoding: OpenTelemetry exports from web pages (api/otlp.ts).
  "Access-Control-Allow-Headers":
    "Authorization, Content-Type, Content-Encoding, Idempotency-Key, X-Signalboard-Project",
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

function guarded(
  r: Route,
  { guard, web, metrics, projects }: RouteChecks,
): (c: BaseContext) => Promise<Response> | Response {
  const find = r.needs ? finder(r, projects) : null;
  switch (r.access) {
    case "none": {
      const handle = r.handle;
      return find ? async (c) => handle({ ...c, found: await find(c.params) }) : handle;
    }
    case "token": {
      const handle = r.handle;
      const authorized = async (c: BaseContext) =>
        handle({
          ...c,
          scope: await guard.authenticate(c.request, c.server),
          ...(find && { found: await find(c.params) }),
        });
      return r.metered ? metered(`${r.method} ${r.path}`, authorized, metrics) : authorized;
    }
    case "full": {
      const projectOf = r.project;
      const handle = r.handle;
      const authorized = async (c: BaseContext) => {
        const scope = await guard.authenticate(c.request, c.server);
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
        return handle({ ...c, scope, actor, ...(find && { found: await find(c.params) }) });
      };
      return r.metered ? metered(`${r.method} ${r.path}`, authorized, metrics) : authorized;
    }
    case "visitor": {
      const handle = r.handle;
      return async (c) => {
        if (r.method === "GET") return handle({ ...c, body: null, ...(find && { found: await find(c.params) }) });
        const body = await readForm(c.request, WEB_BODY_LIMIT);
        web.verifyFormToken(c.request, body._form);
        return handle({ ...c, body, ...(find && { found: await find(c.params) }) });
      };
    }
    default: {
      const least = LEAST[r.access];
      const { signedOut, handle } = r;
      const json = typeof r.body === "object" ? r.body.json : null;
      return async (c) => {
        // Without a session, the visitor is sent to sign in (or to set up the owner), then back here.
        const session = signedOut
          ? await web.session(c.request, c.server)
          : await web.requireSession(c.request, c.server);
        if (!session) return signedOut!(c);
        return web.withSessionCookie(c.request, await signedIn(c, session));
      };
      async function signedIn(c: BaseContext, session: Session): Promise<Response> {
        // A project beyond theirs does not exist for them, whatever the route: first, so nothing else tells.
        const mine = session.user.projects;
        if (mine) assertSees(mine, c.params?.project, new URL(c.request.url).searchParams.getAll("project"));
        if (!hasRole(session.user, least)) throw new Forbidden(ROLE_NEEDED[least]);
        const actor = { userId: session.user.id, name: session.user.username, ip: guard.ip(c.request, c.server) };
        if (r.method === "GET")
          return handle({ ...c, session, body: null, actor, ...(find && { found: await find(c.params) }) });
        // The body read (capped), the session checked again (it may have ended meanwhile), then its CSRF token.
        const body = json ? await web.json(c.request, session, json) : await web.form(c.request, session);
        if (mine && !json) assertSees(mine, (body as Record<string, unknown>).project);
        return handle({ ...c, session, body, actor, ...(find && { found: await find(c.params) }) });
      }
    }
  }
}

/** The lookup a route needs, from its path's parameters (a project or channel that does not exist is a 404). */
function finder(r: Route, projects: Finder): (params: Record<string, string>) => Promise<Found> {
  const needed = r.needs === "channel" ? [":project", ":channel"] : [":project"];
  if (!needed.every((name) => r.path.split("/").includes(name)))
    throw new Error(
      `${r.method} ${r.path}: a route that needs its ${r.needs} names it in its path (${needed.join(", ")})`,
    );
  if (r.needs === "channel") return (params) => projects.requireChannel(params.project!, params.channel!);
  return async (params) => ({ project: await projects.requireProject(params.project!) });
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

/** The project a body names, else the query's `project`, else `fallback`. */
const projectNamed = (body: unknown, query: string | null, fallback: string): string => {
  const named = (body as Record<string, unknown> | null)?.project;
  return typeof named === "string" ? named : (query ?? fallback);
};

/** API: a route's project is its JSON body's `project`, else its `project` query parameter, else `fallback`. */
export const projectInBodyOrQuery =
  (limit: number, fallback: string): ProjectOf =>
  async ({ request }) =>
    projectNamed(await readJson(request.clone(), limit), new URL(request.url).searchParams.get("project"), fallback);

/**
 * The body with the project projectInBodyOrQuery found; a body that is not an object is left as
 * it is, for the validation to say so.
 */
export function withProject(body: unknown, query: string | undefined, fallback: string): unknown {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return body;
  return { ...body, project: projectNamed(body, query ?? null, fallback) };
}

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

/** The query string's parameters, repeated ones (`tag`) as lists ("all": every one, in the order they come). */
export function queryOf(request: Request, lists: string[] | "all" = []): Record<string, string | string[]> {
  const params = new URL(request.url).searchParams;
  const out: Record<string, string | string[]> = {};
  if (lists === "all") {
    for (const name of new Set(params.keys())) out[name] = params.getAll(name);
    return out;
  }
  for (const name of lists) out[name] = params.getAll(name);
  for (const [key, value] of params) if (!lists.includes(key)) out[key] = value;
  return out;
}
