// Request ids and access logs. Every request has an id (the caller's X-Request-Id when it sends a
// sane one, else a new one); errors carry it in their X-Request-Id header and in the log, so a
// user's report can be matched to a log line. Access logs (one JSON line per request) are written
// at the debug level only, to keep them off the ingest hot path in production.
import { Elysia } from "elysia";
import { log, logEnabled } from "../logger.ts";

const ids = new WeakMap<Request, string>();
const started = new WeakMap<Request, number>();

export function requestId(request: Request): string {
  let id = ids.get(request);
  if (!id) {
    const sent = request.headers.get("x-request-id");
    id = sent && /^[\w.:-]{1,64}$/.test(sent) ? sent : crypto.randomUUID();
    ids.set(request, id);
  }
  return id;
}

export function accessLog() {
  const app = new Elysia({ name: "access-log" });
  if (!logEnabled("debug")) return app;
  return app
    .onRequest(({ request }) => {
      started.set(request, performance.now());
    })
    .onAfterResponse({ as: "global" }, ({ request, response, set }) => {
      const status = response instanceof Response ? response.status : typeof set.status === "number" ? set.status : 0;
      const ms = Math.round((performance.now() - (started.get(request) ?? performance.now())) * 10) / 10;
      log.debug("request", { id: requestId(request), method: request.method, path: new URL(request.url).pathname, status, ms });
    });
}
