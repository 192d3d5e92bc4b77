// The one place errors become responses. Typed errors render as themselves; Elysia's own
// (unknown route, unparseable body) map onto the catalogue; anything else is a bug: a 500 that
// leaks nothing, logged once with its stack.
import { Elysia } from "elysia";
import { log } from "../logger.ts";
import { noteRefusal, requestId } from "./request-log.ts";
import { AppError, BadRequest, ClientGone, Internal, MethodNotAllowed, NotFound, SignInRequired } from "../errors.ts";
import { errorBody, errorHeaders, statusOf } from "./errors.ts";

type RouteInfo = { method: string; path: string };

export const API_HEADERS = {
  "Content-Type": "application/json; charset=utf-8",
  "Cache-Control": "no-store",
  "X-Content-Type-Options": "nosniff",
  // Public tokens post from web pages; they must be able to read why a post failed, and when to retry.
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Expose-Headers":
    "Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy, Idempotent-Replayed, X-Request-Id",
} as const;

export function jsonError(error: AppError): Response {
  return new Response(JSON.stringify(errorBody(error)), {
    status: statusOf(error),
    headers: { ...API_HEADERS, ...errorHeaders(error) },
  });
}

/** Dashboard pages and htmx get HTML errors; API clients (and curl, and fetch) get JSON. */
function wantsHtml(request: Request): boolean {
  return request.headers.get("hx-request") === "true" || (request.headers.get("accept") ?? "").includes("text/html");
}

/** How the dashboard shows an error: a page, a fragment for htmx, or (to sign in) a redirect. */
export type RenderWebError = (error: AppError, request: Request) => Promise<Response>;

/** How an API route answers an error in a shape of its own (OTLP's protobuf exports); null: the API's JSON error. */
export type RenderApiError = (error: AppError, request: Request) => Response | null;

/** `isApiPath`: the API answers JSON, errors included; everything else is the dashboard, which answers HTML. */
export function errorHandler(
  routes: () => RouteInfo[],
  isApiPath: (path: string) => boolean,
  renderWebError: RenderWebError,
  renderApiError: RenderApiError = () => null,
) {
  const allowed = allowedMethods(routes);
  return new Elysia({ name: "on-error" }).onError({ as: "global" }, ({ code, error, request }) => {
    const path = new URL(request.url).pathname;
    const appError = toAppError(code, error, request, path, allowed);
    const id = requestId(request);
    const status = statusOf(appError);
    // Refusals (4xx) and clients that left are told by the access log's one line per request; a
    // server-side failure is also logged here, with what went wrong, at a level production shows.
    if (status >= 500) {
      if (error instanceof AppError)
        log.warn("request failed", {
          id,
          method: request.method,
          path,
          status,
          error: appError.code,
          message: appError.message,
        });
      else log.error("unhandled error", { id, method: request.method, path, error });
    }
    // A dashboard page without a session sends its visitor to sign in, whatever it asked to receive.
    const web = !isApiPath(path) && (appError instanceof SignInRequired || wantsHtml(request));
    const respond = (response: Response) => {
      response.headers.set("X-Request-Id", id);
      noteRefusal(request, appError instanceof ClientGone ? status : response.status, appError.code);
      return response;
    };
    return web
      ? renderWebError(appError, request).then(respond)
      : respond(renderApiError(appError, request) ?? jsonError(appError));
  });
}

/** What `error` means for this request, in the catalogue's terms. */
export function errorOf(error: unknown, request: Request): AppError {
  return toAppError(undefined, error, request, new URL(request.url).pathname, () => []);
}

function toAppError(
  code: unknown,
  error: unknown,
  request: Request,
  path: string,
  allowed: (path: string) => string[],
): AppError {
  if (error instanceof AppError) return error;
  // Reading the body of a request whose client left throws; that is the client's doing, not a bug.
  if (request.signal.aborted || (error as Error)?.name === "AbortError") return new ClientGone();
  const method = request.method;
  if (code === "NOT_FOUND") {
    const methods = allowed(path);
    const hint = method === "POST" ? otlpHint(path) : null;
    if (methods.length) return new MethodNotAllowed(method, path, methods, hint ?? "");
    return new NotFound(
      hint ? `No route ${method} ${path}. ${hint}` : `No route ${method} ${path}. See /docs for the API.`,
    );
  }
  if (code === "PARSE") return new BadRequest("The request body could not be parsed.", "invalid_body");
  if (code === "VALIDATION") return new BadRequest("The request is invalid.", "validation_error");
  if (code === "INVALID_COOKIE_SIGNATURE")
    return new BadRequest("A cookie was tampered with; sign in again.", "invalid_cookie");
  return new Internal();
}

/**
 * What an OpenTelemetry exporter pointed at the wrong place needs to hear: OTLP's paths are
 * /otlp/v1/logs and /otlp/v1/metrics, an SDK adds /v1/<signal> to OTEL_EXPORTER_OTLP_ENDPOINT
 * itself, and traces are not taken. Null for a path that is no exporter's.
 */
function otlpHint(path: string): string | null {
  const signal = /\/v1\/(logs|metrics|traces)\/?$/.exec(path)?.[1];
  if (!signal && path !== "/otlp" && !path.startsWith("/otlp/")) return null;
  if (signal === "traces")
    return "Signalboard takes OpenTelemetry logs and metrics, not traces: send this exporter's traces elsewhere (OTEL_TRACES_EXPORTER=none, or no traces pipeline to it).";
  return "OpenTelemetry exports go to /otlp/v1/logs and /otlp/v1/metrics: set OTEL_EXPORTER_OTLP_ENDPOINT (or the Collector's otlphttp endpoint) to this server's URL followed by /otlp; the exporter adds /v1/logs and /v1/metrics itself. See docs/api.md, OpenTelemetry.";
}

/** Which methods a path answers to, so a wrong method gets 405 with Allow rather than 404. */
function allowedMethods(routes: () => RouteInfo[]): (path: string) => string[] {
  let table: { pattern: RegExp; method: string }[] | null = null;
  return (path) => {
    table ??= routes().map((r) => ({
      method: r.method,
      pattern: new RegExp(
        `^${r.path
          .replace(/[.+?^${}()|[\]\\]/g, "\\$&")
          .replace(/:[^/]+/g, "[^/]+")
          .replace(/\*/g, ".*")}$`,
      ),
    }));
    const methods = table.filter((r) => r.pattern.test(path)).map((r) => r.method);
    return [...new Set(methods)].filter((m) => m !== "ALL");
  };
}
