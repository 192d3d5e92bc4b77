// Ingest routes. Each is a straight line: authenticate, read and validate the body, call the
// service, answer. Browsers may call them with a public token, so preflights are answered.
// An Idempotency-Key makes a retried request return the first answer instead of writing again.
import { Elysia } from "elysia";
import type { z } from "zod";
import type { Deps } from "../app.ts";
import { canonicalJson } from "../domain/canonical.ts";
import { type AnswerKind, answer as answerOf } from "../domain/answers.ts";
import type { Idempotency, WriteOptions, Written } from "../domain/ingest.ts";
import { validate } from "../domain/validation.ts";
import { checkShape, readJsonUnchecked } from "../http/body.ts";
import { BadRequest } from "../errors.ts";
import { statusOf } from "../http/errors.ts";
import { API_HEADERS, errorOf } from "../http/on-error.ts";
import { groupBody, identifyBody, insightBody, insightIncrementBody, logBody, logEventBody, sendMetricBody } from "./models.ts";
import { fastLogInput } from "./fast-path.ts";
import type { Scope } from "../model/access.ts";

const PREFLIGHT = {
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Allow-Methods": "POST, PATCH, OPTIONS",
  "Access-Control-Allow-Headers": "Authorization, Content-Type, Idempotency-Key",
  "Access-Control-Max-Age": "86400",
};

export const INGEST_PATHS = ["/v1/log", "/log-event", "/send-metric", "/v1/insight", "/v1/identify", "/v1/group"];

const KEY = /^[\x21-\x7e]{1,255}$/;

// A success carries the fewest headers the contract needs (each costs the hot path about 0.3 µs):
// its type, and what a web page posting with a public token needs to read it (browsers send Origin).
const OK_HEADERS = { "Content-Type": API_HEADERS["Content-Type"], "Access-Control-Allow-Origin": "*" };
const OK_HEADERS_CORS = { ...OK_HEADERS, "Access-Control-Expose-Headers": API_HEADERS["Access-Control-Expose-Headers"] };

function answer(request: Request, body: string, replayed = false): Response {
  const headers = request.headers.has("origin") ? OK_HEADERS_CORS : OK_HEADERS;
  return new Response(body, { headers: replayed ? { ...headers, "Idempotent-Replayed": "true" } : headers });
}

/** The request's Idempotency-Key, if it has one, bound to this token and this exact request. */
function idempotency(request: Request, scope: Scope, body: unknown, kind: AnswerKind): Idempotency | undefined {
  const key = request.headers.get("idempotency-key");
  if (key === null || scope.tokenId === null) return undefined;
  if (!KEY.test(key)) throw new BadRequest("Idempotency-Key must be 1-255 visible ASCII characters, for example a UUID.", "invalid_idempotency_key");
  // Of the parsed body in canonical form: the same request with its keys in another order is the same request.
  const fingerprint = new Bun.CryptoHasher("sha256").update(`${request.method} ${new URL(request.url).pathname} ${canonicalJson(body)}`).digest("hex");
  return { tokenId: scope.tokenId, key, fingerprint, answer: kind };
}

function respond<T>(request: Request, written: Written<T>, kind: AnswerKind): Response {
  if (written.replayed !== undefined) return answer(request, written.replayed, true);
  return answer(request, written.answer ?? answerOf(kind, written.result));
}

function validateChecked<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  checkShape(body);
  return validate(schema, body);
}

export function ingestApi({ guard, ingest, config, metrics }: Deps) {
  const noParse = { parse: "none" } as const;

  /**
   * One ingest route: authenticate, validate, write (once per key), answer; counted and timed.
   * `fast` may take the body without zod (it returns null when it cannot be sure).
   */
  function route<S extends z.ZodType, T>(name: string, schema: S, write: (scope: Scope, input: z.output<S>, options: WriteOptions) => Promise<Written<T>>, kind: AnswerKind, fast?: (body: unknown) => z.output<S> | null) {
    // This route's counters, made once: counting a request is then an addition, not a label lookup.
    const answered = metrics.ingestRequests.cell({ route: name, status: "200" });
    const seconds = metrics.ingestSeconds.cell({ route: name });
    return async ({ request, server }: { request: Request; server: Parameters<typeof guard.authenticate>[1] }) => {
      const started = performance.now();
      try {
        const scope = guard.authenticate(request, server);
        const body = await readJsonUnchecked(request, config.bodyLimit);
        guard.recheck(scope); // the token may have been revoked while the body came in
        const input = fast?.(body) ?? validateChecked(schema, body);
        const response = respond(request, await write(scope, input, { idempotency: idempotency(request, scope, body, kind), signal: request.signal }), kind);
        answered.value++;
        return response;
      } catch (error) {
        metrics.ingestRequests.inc({ route: name, status: String(statusOf(errorOf(error, request))) });
        throw error;
      } finally {
        seconds.observe((performance.now() - started) / 1000);
      }
    };
  }

  const app = new Elysia({ name: "api.ingest" });
  for (const path of INGEST_PATHS) app.options(path, () => new Response(null, { status: 204, headers: PREFLIGHT }));

  return app
    .post("/v1/log", route("POST /v1/log", logBody, ingest.logEvent, "event", (body) => fastLogInput(body, { event: "event", description: "description" })), noParse)
    .post("/log-event", route("POST /log-event", logEventBody, ingest.logEvent, "event", (body) => fastLogInput(body, { event: "title", description: "message" })), noParse)
    .post("/send-metric", route("POST /send-metric", sendMetricBody, ingest.recordMetric, "plain"), noParse)
    .post("/v1/insight", route("POST /v1/insight", insightBody, ingest.recordMetric, "metric"), noParse)
    .patch("/v1/insight", route("PATCH /v1/insight", insightIncrementBody, ingest.recordMetric, "metric"), noParse)
    .post("/v1/identify", route("POST /v1/identify", identifyBody, ingest.identify, "plain"), noParse)
    .post("/v1/group", route("POST /v1/group", groupBody, ingest.group, "plain"), noParse);
}
