// Ingest routes. Each is a straight line (after the token check): read and validate the body, call
// the service, answer. Browsers may call them with a public token, so preflights are answered.
// An Idempotency-Key makes a retried request return the first answer instead of writing again.
import type { z } from "zod";
import { canonicalJson } from "../domain/canonical.ts";
import { type AnswerKind, answer as answerOf } from "../domain/ingest-answers.ts";
import type { Idempotency, WriteOptions, Written } from "../domain/ingest.ts";
import { validate } from "../domain/validation.ts";
import { checkShape, readJsonUnchecked } from "../http/body.ts";
import { BadRequest } from "../errors.ts";
import { API_HEADERS } from "../http/on-error.ts";
import {
  groupBody,
  identifyBody,
  insightBody,
  insightIncrementBody,
  logBody,
  logEventBody,
  pageBody,
  sendMetricBody,
} from "./models.ts";
import { fastLogInput } from "./fast-path.ts";
import type { Scope } from "../model/access.ts";
import type { Edge } from "../http/edge.ts";
import { type ApiDoc, type Route, route } from "../http/routes.ts";
import type { Services } from "../services.ts";

const KEY = /^[\x21-\x7e]{1,255}$/;

// A success carries the fewest headers the contract needs (each costs the hot path about 0.3 µs):
// its type, and what a web page posting with a public token needs to read it (browsers send Origin).
const OK_HEADERS = { "Content-Type": API_HEADERS["Content-Type"], "Access-Control-Allow-Origin": "*" };
const OK_HEADERS_CORS = {
  ...OK_HEADERS,
  "Access-Control-Expose-Headers": API_HEADERS["Access-Control-Expose-Headers"],
};

function answer(request: Request, body: string, replayed = false): Response {
  const headers = request.headers.has("origin") ? OK_HEADERS_CORS : OK_HEADERS;
  return new Response(body, { headers: replayed ? { ...headers, "Idempotent-Replayed": "true" } : headers });
}

/** The request's Idempotency-Key, if it has one, bound to this token and this exact request. */
function idempotency(request: Request, scope: Scope, body: unknown, kind: AnswerKind): Idempotency | undefined {
  const key = request.headers.get("idempotency-key");
  if (key === null || scope.tokenId === null) return undefined;
  if (!KEY.test(key))
    throw new BadRequest(
      "Idempotency-Key must be 1-255 visible ASCII characters, for example a UUID.",
      "invalid_idempotency_key",
    );
  // Of the parsed body in canonical form: the same request with its keys in another order is the same request.
  const fingerprint = new Bun.CryptoHasher("sha256")
    .update(`${request.method} ${new URL(request.url).pathname} ${canonicalJson(body)}`)
    .digest("hex");
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

export const EVENT_EXAMPLE = {
  success: true,
  statusCode: 200,
  id: 1,
  project: "my-saas",
  channel: "payments",
  event: "New subscription",
  description: "Pro plan",
  icon: "💰",
  notify: true,
  parser: "text",
  tags: { plan: "pro" },
  user_id: "user-42",
  timestamp: 1767225600,
  received_at: 1767225600,
  historical: false,
};
const PLAIN_EXAMPLE = { success: true, statusCode: 200 };
const PAGE_EXAMPLE = {
  ...EVENT_EXAMPLE,
  channel: "pageviews",
  event: "/pricing",
  description: "Pricing",
  icon: null,
  notify: false,
  tags: { referrer: "news.example.com" },
};

export function ingestRoutes({ ingest, config }: Services, { guard }: Edge): Route[] {
  /** One ingest route: read and validate the body, write (once per key), answer. `fast` may take the body without zod (null when it cannot be sure). */
  function ingestRoute<S extends z.ZodType, T>(
    method: "POST" | "PATCH",
    path: string,
    schema: S,
    write: (scope: Scope, input: z.output<S>, options: WriteOptions) => Promise<Written<T>>,
    kind: AnswerKind,
    doc: Omit<ApiDoc, "body">,
    fast?: (body: unknown) => z.output<S> | null,
  ): Route {
    return route({
      method,
      path,
      access: "token",
      cors: true, // browsers post with public tokens
      metered: true,
      doc: { ...doc, body: schema },
      async handle({ request, scope }) {
        const body = await readJsonUnchecked(request, config.bodyLimit);
        await guard.recheck(scope); // the token may have been revoked while the body came in
        const input = fast?.(body) ?? validateChecked(schema, body);
        return respond(
          request,
          await write(scope, input, { idempotency: idempotency(request, scope, body, kind), signal: request.signal }),
          kind,
        );
      },
    });
  }

  return [
    ingestRoute(
      "POST",
      "/v1/log",
      logBody,
      ingest.logEvent,
      "event",
      {
        summary: "Send an event",
        description: "LogSnag-compatible. An event with notify and no timestamp is pushed to devices and integrations.",
        example: EVENT_EXAMPLE,
      },
      (body) => fastLogInput(body, { event: "event", description: "description" }),
    ),
    ingestRoute(
      "POST",
      "/log-event",
      logEventBody,
      ingest.logEvent,
      "event",
      {
        summary: "Send an event (title/message)",
        description: "The same as /v1/log, with title for event and message for description.",
        example: EVENT_EXAMPLE,
      },
      (body) => fastLogInput(body, { event: "title", description: "message" }),
    ),
    ingestRoute("POST", "/send-metric", sendMetricBody, ingest.recordMetric, "metric", {
      summary: "Set or increment a metric",
      description:
        "With increment, value is added to the stored number (a new metric starts at 0). The answer holds the metric as stored: its value after an increment.",
      example: {
        success: true,
        statusCode: 200,
        project: "default",
        title: "Active users",
        value: 1259,
        icon: "👥",
        updated_at: 1767225600,
      },
    }),
    ingestRoute("POST", "/v1/insight", insightBody, ingest.recordMetric, "metric", {
      summary: "Set a metric (LogSnag insight)",
      description: "LogSnag-compatible.",
      example: {
        success: true,
        statusCode: 200,
        project: "my-saas",
        title: "Status",
        value: "online",
        icon: null,
        updated_at: 1767225600,
      },
    }),
    ingestRoute("PATCH", "/v1/insight", insightIncrementBody, ingest.recordMetric, "metric", {
      summary: "Increment a metric (LogSnag insight)",
      description: 'LogSnag-compatible: {"value": {"$inc": n}}.',
      example: {
        success: true,
        statusCode: 200,
        project: "my-saas",
        title: "Active users",
        value: 1259,
        icon: "👥",
        updated_at: 1767225600,
      },
    }),
    ingestRoute("POST", "/v1/identify", identifyBody, ingest.identify, "plain", {
      summary: "Set a user's properties",
      description: "Properties merge into what was stored; null removes one.",
      example: PLAIN_EXAMPLE,
    }),
    ingestRoute("POST", "/v1/group", groupBody, ingest.group, "plain", {
      summary: "Set a group's properties",
      description: "Optionally adds a user to the group.",
      example: PLAIN_EXAMPLE,
    }),
    ingestRoute("POST", "/v1/page", pageBody, ingest.pageView, "event", {
      summary: "Record a page view (LogSnag page)",
      description:
        'LogSnag-compatible. Stored as an event in the channel "pageviews" named by the path, with the referrer\'s host as the tag referrer; a public token limited to another channel may not send it.',
      example: PAGE_EXAMPLE,
    }),
  ];
}
