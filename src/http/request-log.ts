// Request ids and access logs. Every request has an id (the caller's X-Request-Id when it sends a
// sane one, else a new one); errors carry it in their X-Request-Id header and in the log, so a
// user's report can be matched to a log line. Access logs (one JSON line per request, with the
// status the client got and its address) are written at the debug level only, to keep them off
// the ingest hot path in production.
import type { Server } from "bun";
import { Elysia } from "elysia";
import { log, logEnabled } from "../logger.ts";
import { clientIp } from "./client-ip.ts";

const ids = new WeakMap<Request, string>();
const started = new WeakMap<Request, { at: number; ip: string }>();
/** What the error handler answered: Elysia's own view of an error's status is not what was sent. */
const refused = new WeakMap<Request, { status: number; error: string }>();

export function requestId(request: Request): string {
  let id = ids.get(request);
  if (!id) {
    const sent = request.headers.get("x-request-id");
    id = sent && /^[\w.:-]{1,64}$/.test(sent) ? sent : crypto.randomUUID();
    ids.set(request, id);
  }
  return id;
}

/** Called by the error handler with the answer it made, so the access log tells what the client got. */
export function noteRefusal(request: Request, status: number, error: string): void {
  if (logEnabled("debug")) refused.set(request, { status, error });
}

export function accessLog(trustProxy: readonly string[]) {
  const app = new Elysia({ name: "access-log" });
  if (!logEnabled("debug")) return app;
  return (
    app
      // The id and the peer are read as the request arrives: once it is answered, Bun may have let
      // go of its headers and its connection.
      .onRequest(({ request, server }) => {
        requestId(request);
        started.set(request, {
          at: performance.now(),
          ip: clientIp(request, server as Server<unknown> | null, trustProxy),
        });
      })
      .onAfterResponse({ as: "global" }, ({ request, response, set }) => {
        const refusal = refused.get(request);
        const status =
          refusal?.status ??
          (response instanceof Response ? response.status : typeof set.status === "number" ? set.status : 200);
        const start = started.get(request);
        const ms = start ? Math.round((performance.now() - start.at) * 10) / 10 : 0;
        const ip = start?.ip ?? "unknown";
        log.debug("request", {
          id: requestId(request),
          method: request.method,
          path: new URL(request.url).pathname,
          status,
          ms,
          ip,
          ...(refusal ? { error: refusal.error } : {}),
        });
      })
  );
}
