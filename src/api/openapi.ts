// The OpenAPI 3.1 description of the API, generated from the same zod schemas that validate
// requests, so it cannot drift from what the server accepts. Served at /openapi.json and rendered
// as a page at /docs.
import { Elysia } from "elysia";
import { z } from "zod";
import type { Deps } from "../app.ts";
import { groupBody, identifyBody, insightBody, insightIncrementBody, logBody, logEventBody, sendMetricBody } from "./models.ts";
import { eventParams, eventsQuery, historyQuery, metricsQuery } from "./read.ts";
import { streamQuery } from "./stream.ts";

export type Operation = { method: string; path: string; summary: string; description: string; body?: z.ZodType; query?: z.ZodType; params?: z.ZodType; auth: "full" | "any" | "none"; success: unknown };

const EVENT_EXAMPLE = { success: true, statusCode: 200, id: 1, project: "my-saas", channel: "payments", event: "New subscription", description: "Pro plan", icon: "💰", notify: true, parser: "text", tags: { plan: "pro" }, user_id: "user-42", timestamp: 1767225600, received_at: 1767225600, historical: false };

export const OPERATIONS: Operation[] = [
  { method: "post", path: "/v1/log", summary: "Send an event", description: "LogSnag-compatible. An event with notify and no timestamp is pushed to devices and integrations.", body: logBody, auth: "any", success: EVENT_EXAMPLE },
  { method: "post", path: "/log-event", summary: "Send an event (title/message)", description: "The same as /v1/log, with title for event and message for description.", body: logEventBody, auth: "any", success: EVENT_EXAMPLE },
  { method: "post", path: "/send-metric", summary: "Set or increment a metric", description: "With increment, value is added to the stored number (a new metric starts at 0).", body: sendMetricBody, auth: "any", success: { success: true, statusCode: 200 } },
  { method: "post", path: "/v1/insight", summary: "Set a metric (LogSnag insight)", description: "LogSnag-compatible.", body: insightBody, auth: "any", success: { success: true, statusCode: 200, project: "my-saas", title: "Status", value: "online", icon: null, updated_at: 1767225600 } },
  { method: "patch", path: "/v1/insight", summary: "Increment a metric (LogSnag insight)", description: 'LogSnag-compatible: {"value": {"$inc": n}}.', body: insightIncrementBody, auth: "any", success: { success: true, statusCode: 200, project: "my-saas", title: "Active users", value: 1259, icon: "👥", updated_at: 1767225600 } },
  { method: "post", path: "/v1/identify", summary: "Set a user's properties", description: "Properties merge into what was stored; null removes one.", body: identifyBody, auth: "any", success: { success: true, statusCode: 200 } },
  { method: "post", path: "/v1/group", summary: "Set a group's properties", description: "Optionally adds a user to the group.", body: groupBody, auth: "any", success: { success: true, statusCode: 200 } },
  { method: "get", path: "/v1/events", summary: "List events", description: "Newest first by event time; keyset pages behind next_cursor. Full-access tokens only.", query: eventsQuery, auth: "full", success: { success: true, statusCode: 200, events: [EVENT_EXAMPLE], next_cursor: null } },
  { method: "get", path: "/v1/events/{id}", summary: "One event", description: "The event with this id (404 when there is none). Full-access tokens only.", params: eventParams, auth: "full", success: { success: true, statusCode: 200, event: EVENT_EXAMPLE } },
  { method: "get", path: "/v1/metrics", summary: "List a project's metrics", description: "Current values. Full-access tokens only.", query: metricsQuery, auth: "full", success: { success: true, statusCode: 200, metrics: [{ project: "my-saas", title: "Active users", value: 1259, icon: "👥", updated_at: 1767225600 }] } },
  { method: "get", path: "/v1/metrics/history", summary: "A metric's history", description: "The last value of each minute. Full-access tokens only.", query: historyQuery, auth: "full", success: { success: true, statusCode: 200, metric: {}, points: [{ timestamp: 1767225600, value: 1259 }] } },
  { method: "get", path: "/v1/stream", summary: "Stream events (SSE)", description: "Server-Sent Events of stored events as JSON; resumes after Last-Event-ID. Full-access tokens only.", query: streamQuery, auth: "full", success: "id: 1\ndata: {...event...}" },
  { method: "get", path: "/healthz", summary: "Liveness", description: "Answers while the process runs.", auth: "none", success: { success: true, statusCode: 200, status: "ok", version: "0.1.0" } },
  { method: "get", path: "/readyz", summary: "Readiness", description: "Also checks the database (503 when it does not answer).", auth: "none", success: { success: true, statusCode: 200, status: "ready", version: "0.1.0" } },
];

const ERROR = {
  type: "object",
  required: ["success", "statusCode", "error", "message"],
  properties: {
    success: { const: false },
    statusCode: { type: "integer" },
    error: { type: "string", description: "A stable code: validation_error, invalid_json, unauthorized, forbidden, not_found, method_not_allowed, payload_too_large, unsupported_media_type, rate_limited, storage_unavailable, shutting_down, ..." },
    message: { type: "string", description: "What is wrong and how to fix it." },
    validation: { type: "object", properties: { body: { type: "array", items: { type: "object", properties: { path: { type: "string" }, type: { type: "string" }, message: { type: "string" } } } } } },
  },
};

export function jsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  return rest;
}

function parameters(of: z.ZodType, where: "query" | "path") {
  const schema = jsonSchema(of) as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
  return Object.entries(schema.properties ?? {}).map(([name, s]) => ({ name, in: where, required: where === "path" || (schema.required?.includes(name) ?? false), schema: s, description: s.description }));
}

export function openApiDocument(baseUrl: string, version: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of OPERATIONS) {
    const errors = { "4XX": { description: "A client error", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } }, "503": { description: "Storage unavailable; retry after Retry-After", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } } };
    paths[op.path] ??= {};
    paths[op.path]![op.method] = {
      summary: op.summary,
      description: op.description,
      security: op.auth === "none" ? [] : [{ bearer: [] }],
      ...(op.body ? { requestBody: { required: true, content: { "application/json": { schema: jsonSchema(op.body) } } } } : {}),
      ...(op.query || op.params ? { parameters: [...(op.params ? parameters(op.params, "path") : []), ...(op.query ? parameters(op.query, "query") : [])] } : {}),
      ...(op.method !== "get" ? { "x-idempotency": "Send an Idempotency-Key header to make retries safe." } : {}),
      responses: { "200": { description: "Success", content: { [op.path === "/v1/stream" ? "text/event-stream" : "application/json"]: { example: op.success } } }, ...errors },
    };
  }
  return {
    openapi: "3.1.0",
    info: { title: "Signalboard API", version, description: "Events and metrics over HTTP. LogSnag-compatible routes under /v1." },
    servers: [{ url: baseUrl }],
    components: { securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "A token from Settings → API or `signalboard token create`." } }, schemas: { Error: ERROR } },
    paths,
  };
}

export function openApiRoutes({ config, version }: Deps) {
  const document = JSON.stringify(openApiDocument(config.baseUrl, version));
  return new Elysia({ name: "api.openapi" }).get("/openapi.json", () => new Response(document, { headers: { "Content-Type": "application/json", "Cache-Control": "no-cache", "Access-Control-Allow-Origin": "*" } }));
}
