// /docs: the API reference, rendered from the OpenAPI operations (and so from the zod schemas).
import { documented, jsonSchema, type Operation, openApiPath } from "../api/openapi.ts";
import type { Edge } from "../http/edge.ts";
import { type Route, route } from "../http/routes.ts";
import type { Services } from "../services.ts";
import { type Html, html } from "./html.ts";
import type { Kit } from "./kit.ts";
import { paths } from "./paths.ts";

type Field = { name: string; required: boolean; type: string; description: string; rules: string };
type Schema = Record<string, unknown>;

/** "a, b or c". */
const either = (words: string[]) =>
  words.length < 2 ? words.join("") : `${words.slice(0, -1).join(", ")} or ${words.at(-1)}`;

/** The types a schema allows. */
function allTypes(s: Schema): string[] {
  const t = s.type ?? (Array.isArray(s.anyOf) ? (s.anyOf as Schema[]).flatMap(allTypes) : []);
  return Array.isArray(t) ? (t as string[]) : [t as string];
}

/**
 * A field's type, null left out (an optional field takes null for absent). An object whose values
 * are described (tags, properties) says what they are: "object of string or number values".
 */
function typeOf(s: Schema): string {
  const values = s.additionalProperties;
  if (s.type === "object" && values && typeof values === "object")
    return `object of ${either(allTypes(values as Schema))} values`;
  return either(allTypes(s).filter((t) => t !== "null")) || "any";
}

function rulesOf(s: Schema): string[] {
  const values = (s.additionalProperties ?? {}) as Schema;
  const strings = (Array.isArray(values.anyOf) ? (values.anyOf as Schema[]) : [values]).find(
    (v) => v.type === "string" && v.maxLength !== undefined,
  );
  const keys = (s.propertyNames ?? {}) as Schema;
  return [
    s.pattern ? `pattern ${s.pattern}` : "",
    s.minLength !== undefined || s.maxLength !== undefined
      ? `${s.minLength ?? 0}-${s.maxLength ?? "∞"} characters`
      : "",
    Array.isArray(s.enum) ? `one of ${(s.enum as string[]).join(", ")}` : "",
    keys.pattern
      ? `keys: pattern ${keys.pattern}`
      : keys.maxLength !== undefined
        ? `keys of ${keys.minLength ?? 0}-${keys.maxLength} characters`
        : "",
    strings ? `strings of 0-${strings.maxLength} characters` : "",
    s.maxProperties ? `at most ${s.maxProperties} entries` : "",
    s.maximum !== undefined ? `at most ${s.maximum}` : "",
  ].filter(Boolean);
}

/** The fields of a body or query, the required ones first (each group in the schema's order). */
function fields(schema: Schema): Field[] {
  const props = (schema.properties ?? {}) as Record<string, Schema>;
  const required = (schema.required ?? []) as string[];
  const list = Object.entries(props).map(([name, s]) => {
    const inner = (Array.isArray(s.anyOf) ? (s.anyOf as Schema[]).find((x) => x.type !== "null") : undefined) ?? s;
    return {
      name,
      required: required.includes(name),
      type: typeOf(inner),
      description: String(s.description ?? inner.description ?? ""),
      rules: rulesOf(inner).join("; "),
    };
  });
  return [...list.filter((f) => f.required), ...list.filter((f) => !f.required)];
}

/** The id of a route's section, which the contents link to. */
const sectionId = (op: Operation) => `${op.method.toLowerCase()}-${openApiPath(op.path).replace(/\W+/g, "-")}`;

/** The contents: a link to each route's section, in the page's order. */
function contents(operations: Operation[]): Html {
  return html`<nav class="card api-toc" aria-labelledby="toc-title">
  <h2 id="toc-title">Contents</h2>
  <ol>${operations.map((op) => html`<li><a href="#${sectionId(op)}"><span class="method">${op.method}</span> <code>${openApiPath(op.path)}</code> ${op.doc.summary}</a></li>`)}</ol>
</nav>`;
}

function example(op: Operation, baseUrl: string): string {
  const schema = op.doc.body
    ? (jsonSchema(op.doc.body) as { properties: Record<string, { examples?: unknown[] }>; required?: string[] })
    : null;
  const auth = op.access === "none" ? "" : ` -H "Authorization: Bearer $TOKEN"`;
  if (!schema) return `curl "${baseUrl}${openApiPath(op.path)}"${auth}`;
  const body: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(schema.properties))
    if (s.examples?.length && (schema.required?.includes(name) || Object.keys(body).length < 4))
      body[name] = s.examples[0];
  return `curl -X ${op.method} ${baseUrl}${op.path}${auth} \\\n  -H "Content-Type: application/json" -d '${JSON.stringify(body)}'`;
}

function operation(op: Operation, baseUrl: string): Html {
  const { summary, description, body, query, params } = op.doc;
  const fieldsOf = body ?? query ?? params;
  const schema = fieldsOf ? jsonSchema(fieldsOf) : null;
  const list = schema ? fields(schema) : [];
  const path = openApiPath(op.path);
  return html`<section class="card api-op" id="${sectionId(op)}">
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
      path: paths.docs,
      access: "none",
      async handle({ request }) {
        const session = await web.session(request);
        const body = html`<header class="page-header"><h1>API reference</h1></header>
<p>Every request takes <code>Authorization: Bearer TOKEN</code>; bodies are JSON. Errors are JSON with <code>success</code>, <code>statusCode</code>, <code>error</code>, <code>message</code> and, for 400s, <code>validation.body[]</code>. Ingest routes accept an <code>Idempotency-Key</code> header. The machine-readable description is <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1).</p>
${contents(operations)}
${operations.map((op) => operation(op, config.baseUrl))}`;
        return kit.page(session, body, { title: "API reference", nav: {} });
      },
    }),
  ];
}
