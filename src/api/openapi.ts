// The OpenAPI 3.1 description of the API, generated from the same zod schemas that validate
// requests, so it cannot drift from what the server accepts. Served at /openapi.json and rendered
// as a page at /docs.
import { z } from "zod";
import { type ApiDoc, type Route, route } from "../http/routes.ts";

/** A documented API route: what /docs and /openapi.json describe. */
export type Operation = Route & { doc: ApiDoc };

export const documented = (routes: Route[]): Operation[] => routes.filter((r): r is Operation => r.doc !== undefined);

const ERROR = {
  type: "object",
  required: ["success", "statusCode", "error", "message"],
  properties: {
    success: { const: false },
    statusCode: { type: "integer" },
    error: {
      type: "string",
      description:
        "A stable code: validation_error, invalid_json, unauthorized, forbidden, not_found, method_not_allowed, payload_too_large, unsupported_media_type, rate_limited, storage_unavailable, shutting_down, ...",
    },
    message: { type: "string", description: "What is wrong and how to fix it." },
    validation: {
      type: "object",
      properties: {
        body: {
          type: "array",
          items: {
            type: "object",
            properties: { path: { type: "string" }, type: { type: "string" }, message: { type: "string" } },
          },
        },
      },
    },
  },
};

export function jsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<
    string,
    unknown
  >;
  return rest;
}

function parameters(of: z.ZodType, where: "query" | "path") {
  const schema = jsonSchema(of) as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
  return Object.entries(schema.properties ?? {}).map(([name, s]) => ({
    name,
    in: where,
    required: where === "path" || (schema.required?.includes(name) ?? false),
    schema: s,
    description: s.description,
  }));
}

/** OpenAPI's form of a path: /v1/events/{id}. */
export const openApiPath = (path: string) => path.replace(/:(\w+)/g, "{$1}");

export function openApiDocument(routes: Route[], baseUrl: string, version: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const { method, path, access, doc } of documented(routes)) {
    const errors = {
      "4XX": {
        description: "A client error",
        content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
      },
      "503": {
        description: "Storage unavailable; retry after Retry-After",
        content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
      },
    };
    const at = openApiPath(path);
    paths[at] ??= {};
    paths[at]![method.toLowerCase()] = {
      summary: doc.summary,
      description: doc.description,
      security: access === "none" ? [] : [{ bearer: [] }],
      ...(doc.body
        ? { requestBody: { required: true, content: { "application/json": { schema: jsonSchema(doc.body) } } } }
        : {}),
      ...(doc.query || doc.params
        ? {
            parameters: [
              ...(doc.params ? parameters(doc.params, "path") : []),
              ...(doc.query ? parameters(doc.query, "query") : []),
            ],
          }
        : {}),
      ...(method !== "GET" && access === "token"
        ? { "x-idempotency": "Send an Idempotency-Key header to make retries safe." }
        : {}),
      responses: {
        "200": {
          description: "Success",
          content: { [doc.contentType ?? "application/json"]: { example: doc.example } },
        },
        ...errors,
      },
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Signalboard API",
      version,
      description: "Events and metrics over HTTP. LogSnag-compatible routes under /v1.",
    },
    servers: [{ url: baseUrl }],
    components: {
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description: "A token from Settings → API or `signalboard token create`.",
        },
      },
      schemas: { Error: ERROR },
    },
    paths,
  };
}

/** GET /openapi.json: the document of `routes`. */
export function openApiRoute(routes: Route[], baseUrl: string, version: string): Route {
  const document = JSON.stringify(openApiDocument(routes, baseUrl, version));
  return route({
    method: "GET",
    path: "/openapi.json",
    access: "none",
    handle: () =>
      new Response(document, {
        headers: {
          "Content-Type": "application/json",
          "Cache-Control": "no-cache",
          "Access-Control-Allow-Origin": "*",
        },
      }),
  });
}
