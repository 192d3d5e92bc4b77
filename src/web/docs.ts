// /docs: the API reference, rendered from the OpenAPI operations (and so from the zod schemas).
import { documented, jsonSchema, type Operation, openApiPath } from "../api/openapi.ts";
import type { Edge } from "../http/edge.ts";
import { type Route, route } from "../http/routes.ts";
import type { Services } from "../services.ts";
import { type Html, html } from "./html.ts";
import type { Kit } from "./kit.ts";

type Field = { name: string; required: boolean; type: string; description: string; rules: string };

function typeOf(s: Record<string, unknown>): string {
  const t = s.type ?? (Array.isArray(s.anyOf) ? (s.anyOf as Record<string, unknown>[]).map((x) => x.type).filter(Boolean) : "any");
  return (Array.isArray(t) ? t : [t]).filter((x) => x !== "null").join(" or ") || "object";
}

function fields(schema: Record<string, unknown>): Field[] {
  const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = (schema.required ?? []) as string[];
  return Object.entries(props).map(([name, s]) => {
    const inner = (Array.isArray(s.anyOf) ? (s.anyOf as Record<string, unknown>[]).find((x) => x.type !== "null") : undefined) ?? s;
    const rules = [
      inner.pattern ? `pattern ${inner.pattern}` : "",
      inner.minLength !== undefined || inner.maxLength !== undefined ? `${inner.minLength ?? 0}-${inner.maxLength ?? "∞"} characters` : "",
      Array.isArray(inner.enum) ? `one of ${(inner.enum as string[]).join(", ")}` : "",
      inner.maxProperties ? `at most ${inner.maxProperties} entries` : "",
      inner.maximum !== undefined ? `at most ${inner.maximum}` : "",
    ].filter(Boolean);
    return { name, required: required.includes(name), type: typeOf(inner), description: String(s.description ?? inner.description ?? ""), rules: rules.join("; ") };
  });
}

function example(op: Operation, baseUrl: string): string {
  const schema = op.doc.body ? (jsonSchema(op.doc.body) as { properties: Record<string, { examples?: unknown[] }>; required?: string[] }) : null;
  const auth = op.access === "none" ? "" : ` -H "Authorization: Bearer $TOKEN"`;
  if (!schema) return `curl "${baseUrl}${openApiPath(op.path)}"${auth}`;
  const body: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(schema.properties)) if (s.examples?.length && (schema.required?.includes(name) || Object.keys(body).length < 4)) body[name] = s.examples[0];
  return `curl -X ${op.method} ${baseUrl}${op.path}${auth} \\\n  -H "Content-Type: application/json" -d '${JSON.stringify(body)}'`;
}

function operation(op: Operation, baseUrl: string): Html {
  const { summary, description, body, query, params } = op.doc;
  const fieldsOf = body ?? query ?? params;
  const schema = fieldsOf ? jsonSchema(fieldsOf) : null;
  const list = schema ? fields(schema) : [];
  const path = openApiPath(op.path);
  return html`<section class="card api-op" id="${op.method.toLowerCase()}-${path.replace(/\W+/g, "-")}">
  <h2><span class="badge method">${op.method}</span> <code>${path}</code> ${summary}</h2>
  <p>${description} ${op.access === "full" ? "Needs a full-access token." : op.access === "token" ? "Any token: full, or public within its scope." : "No token needed."}</p>
  ${list.length ? html`<div class="table-wrap" tabindex="0" role="region" aria-label="${op.method} ${path}: ${body ? "body fields" : query ? "query parameters" : "path parameters"}"><table class="cards"><thead><tr><th>${body ? "Body field" : query ? "Query parameter" : "Path parameter"}</th><th>Type</th><th>Rules</th><th>Meaning</th></tr></thead><tbody>${list.map((f) => html`<tr><td class="card-title"><code>${f.name}</code>${f.required ? html` <span class="badge">required</span>` : ""}</td><td data-label="Type">${f.type}</td><td data-label="Rules">${f.rules}</td><td data-label="Meaning">${f.description}</td></tr>`)}</tbody></table></div>` : ""}
  <pre class="snippet">${example(op, baseUrl)}</pre>
</section>`;
}

/** /docs: the reference of `api` (the API's routes), for anyone; signed in, with the dashboard's navigation. */
export function docsRoutes({ config }: Services, { web }: Edge, kit: Kit, api: Route[]): Route[] {
  const operations = documented(api);
  return [
    route({
      method: "GET",
      path: "/docs",
      access: "none",
      async handle({ request }) {
        const session = await web.session(request);
        const body = html`<header class="page-header"><h1>API reference</h1></header>
<p>Every request takes <code>Authorization: Bearer TOKEN</code>; bodies are JSON. Errors are JSON with <code>success</code>, <code>statusCode</code>, <code>error</code>, <code>message</code> and, for 400s, <code>validation.body[]</code>. Ingest routes accept an <code>Idempotency-Key</code> header. The machine-readable description is <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1).</p>
${operations.map((op) => operation(op, config.baseUrl))}`;
        return kit.page(session, body, { title: "API reference", nav: {} });
      },
    }),
  ];
}
