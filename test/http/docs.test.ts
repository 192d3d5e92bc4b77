// The API reference as a reader uses it: /docs opens with a table of contents that leads to every
// route's section, each route's fields list the required ones first, and tags (and properties)
// are described as what the API takes, on the page and in /openapi.json.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { z } from "zod";
import { call, startTestApp, type TestApp } from "../helpers.ts";

let server: TestApp;
let page: string;
let openapi: any;

beforeAll(async () => {
  server = await startTestApp();
  page = await (await server.fetch(`/docs`)).text();
  openapi = (await call(server, { path: "/openapi.json", token: null })).json;
});
afterAll(() => server.close());

/** Each route's section of /docs: its id, heading text, and its field rows (name, required, type, rules). */
function sections(html: string) {
  return [...html.matchAll(/<section class="card api-op" id="([^"]+)">([^]*?)<\/section>/g)].map(([, id, body]) => ({
    id: id!,
    heading: /<h2>([^]*?)<\/h2>/
      .exec(body!)![1]!
      .replace(/<[^>]+>/g, "")
      .replace(/\s+/g, " ")
      .trim(),
    rows: [
      ...body!.matchAll(
        /<tr><td class="card-title"><code>([^<]+)<\/code>([^]*?)<\/td><td data-label="Type">([^<]*)<\/td><td data-label="Rules">([^<]*)<\/td>/g,
      ),
    ].map(([, name, badge, type, rules]) => ({
      name: name!,
      required: badge!.includes("required"),
      type: type!,
      rules: rules!,
    })),
  }));
}

/** The operations /openapi.json describes, as "METHOD /path". */
const operations = () =>
  Object.entries(openapi.paths as Record<string, Record<string, unknown>>).flatMap(([path, methods]) =>
    Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`),
  );

describe("/docs", () => {
  test("opens with a table of contents: one link per route, in the page's order, to that route's section", async () => {
    const toc = /<nav[^>]*aria-labelledby="toc-title"[^>]*>([^]*?)<\/nav>/.exec(page);
    expect(toc).not.toBeNull();
    const links = [...toc![1]!.matchAll(/<a href="#([^"]+)">([^]*?)<\/a>/g)].map(([, href, text]) => ({
      href: href!,
      text: text!
        .replace(/<[^>]+>/g, "")
        .replace(/\s+/g, " ")
        .trim(),
    }));
    const all = sections(page);
    expect(all.length).toBe(operations().length);
    expect(links.map((l) => l.href)).toEqual(all.map((s) => s.id));
    // Each link names its route as its section's heading does.
    for (const [i, link] of links.entries())
      expect(all[i]!.heading).toStartWith(link.text.split(" ").slice(0, 2).join(" "));
    expect(links.map((l) => l.text)).toContain("POST /v1/log Send an event");
    // The contents come before the first route.
    expect(page.indexOf('aria-labelledby="toc-title"')).toBeLessThan(page.indexOf('class="card api-op"'));
  });

  test("lists each route's required fields before its optional ones", async () => {
    const all = sections(page);
    const log = all.find((s) => s.heading.startsWith("POST /v1/log"))!;
    expect(log.rows.filter((r) => r.required).map((r) => r.name)).toEqual(["project", "channel", "event"]);
    expect(log.rows.slice(0, 3).map((r) => r.name)).toEqual(["project", "channel", "event"]);
    for (const s of all) {
      const firstOptional = s.rows.findIndex((r) => !r.required);
      if (firstOptional >= 0)
        expect(
          s.rows
            .slice(firstOptional)
            .filter((r) => r.required)
            .map((r) => r.name),
          s.heading,
        ).toEqual([]);
    }
  });

  test("gives tags and properties their real type and rules, never “any”", async () => {
    const all = sections(page);
    for (const s of all) for (const r of s.rows) expect(r.type, `${s.heading}: ${r.name}`).not.toBe("any");
    for (const heading of ["POST /v1/log", "POST /log-event"]) {
      const tags = all.find((s) => s.heading.startsWith(heading))!.rows.find((r) => r.name === "tags")!;
      expect(tags.type).toBe("object of string, number or boolean values");
      expect(tags.rules).toContain("keys: pattern ^[a-z0-9-]{1,64}$");
      expect(tags.rules).toContain("strings of 0-256 characters");
      expect(tags.rules).toContain("at most 32 entries");
    }
    const properties = all
      .find((s) => s.heading.startsWith("POST /v1/identify"))!
      .rows.find((r) => r.name === "properties")!;
    expect(properties.type).toBe("object of string, number, boolean or null values");
    expect(properties.rules).toContain("at most 100 entries");
  });
});

describe("/openapi.json", () => {
  test("describes tags as an object of scalar values whose keys follow the tag-key rule, or null", async () => {
    const tags = openapi.paths["/v1/log"].post.requestBody.content["application/json"].schema.properties.tags;
    const object = (tags.anyOf as Record<string, unknown>[]).find((s) => s.type === "object") as any;
    expect(object).toBeDefined();
    expect(object.propertyNames).toEqual({ pattern: "^[a-z0-9-]{1,64}$" });
    expect(object.maxProperties).toBe(32);
    expect(tags.anyOf).toContainEqual({ type: "null" });
    // What the schema accepts is what the API accepts (as far as a validator reads it).
    const schema = z.fromJSONSchema(tags);
    for (const ok of [{ plan: "pro", seats: 3, trial: false }, {}, null])
      expect(schema.safeParse(ok).success, JSON.stringify(ok)).toBe(true);
    for (const bad of [
      { plan: ["pro"] },
      { plan: { tier: 1 } },
      { plan: null },
      { note: "x".repeat(257) },
      "plan:pro",
      [1],
    ])
      expect(schema.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    for (const body of [{ tags: { plan: "pro", seats: 3, trial: false } }, { tags: null }])
      expect(
        (await call(server, { path: "/v1/log", body: { project: "default", channel: "c", event: "e", ...body } }))
          .status,
      ).toBe(200);
    for (const tagsValue of [{ plan: ["pro"] }, { plan: null }, { note: "x".repeat(257) }, { Plan: "pro" }])
      expect(
        (
          await call(server, {
            path: "/v1/log",
            body: { project: "default", channel: "c", event: "e", tags: tagsValue },
          })
        ).status,
      ).toBe(400);
  });
});
