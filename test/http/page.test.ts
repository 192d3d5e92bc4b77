// POST /v1/page, LogSnag's page view, over real HTTP: the body LogSnag's Node client sends, what is
// stored (an event in the pageviews channel named by the path, the referrer's host as a tag), where
// it shows (the events API with its filters, the user's journey), the ways the body can be wrong,
// and what public tokens may do from a web page. Runs on PostgreSQL too.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Agent, call, post, signedIn, startTestApp, type TestApp } from "../helpers.ts";

let server: TestApp;
let agent: Agent;
let publicToken: string;
let feedbackToken: string;
let pageviewsToken: string;

beforeAll(async () => {
  server = await startTestApp();
  await server.services.projects.create("shop");
  await server.services.projects.create("other");
  await server.services.accounts.createUser({ username: "owner", password: "correct horse battery staple" }, "owner");
  agent = await signedIn(server, { username: "owner", password: "correct horse battery staple" });
  publicToken = (await server.services.tokens.create({ name: "site", kind: "public", project: "shop" })).token;
  feedbackToken = (
    await server.services.tokens.create({ name: "widget", kind: "public", project: "shop", channel: "feedback" })
  ).token;
  pageviewsToken = (
    await server.services.tokens.create({ name: "views", kind: "public", project: "shop", channel: "pageviews" })
  ).token;
});
afterAll(() => server.close());

const view = (payload: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  project: "shop",
  user_id: "ann",
  payload,
  ...extra,
});

describe("POST /v1/page", () => {
  test("LogSnag's body is stored as an event in pageviews, named by the path, with the referrer's host", async () => {
    const res = await post(
      server,
      "/v1/page",
      view({
        path: "/pricing",
        referrer: "https://news.example.com/item?id=7",
        utm_source: "newsletter",
        title: "Pricing",
        user_agent: "Mozilla/5.0 (X11; Linux x86_64)",
      }),
    );
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      success: true,
      statusCode: 200,
      project: "shop",
      channel: "pageviews",
      event: "/pricing",
      description: "Pricing",
      user_id: "ann",
      notify: false,
      historical: false,
    });
    // Only the host of the referrer is kept (its path and query may be private); the user agent is not stored.
    expect(res.json.tags).toEqual({ referrer: "news.example.com", "utm-source": "newsletter" });
    expect(res.text).not.toContain("item?id=7");
    expect(res.text).not.toContain("Mozilla");
  });

  test("a bare host as referrer, no user, no title: still a page view", async () => {
    const res = await post(server, "/v1/page", {
      project: "shop",
      payload: { path: "/", referrer: "Search.Example.org" },
    });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      channel: "pageviews",
      event: "/",
      description: null,
      user_id: null,
      tags: { referrer: "search.example.org" },
    });
    const empty = await post(server, "/v1/page", {
      project: "shop",
      user_id: null,
      payload: { path: "/about", referrer: "", utm_source: null, title: null },
    });
    expect(empty.status).toBe(200);
    expect(empty.json).toMatchObject({ event: "/about", tags: {}, user_id: null });
  });

  test("page views are counted and filtered like events, and are on the user's journey", async () => {
    await post(server, "/v1/page", view({ path: "/docs", referrer: "https://news.example.com/" }, { user_id: "bob" }));
    const bob = await call(server, { path: "/v1/events?project=shop&channel=pageviews&user_id=bob" });
    expect(bob.json.events.map((e: { event: string }) => e.event)).toEqual(["/docs"]);
    const fromNews = await call(server, {
      path: "/v1/events?project=shop&channel=pageviews&tag=referrer:news.example.com",
    });
    expect(fromNews.json.events.map((e: { event: string; user_id: string }) => [e.event, e.user_id])).toEqual([
      ["/docs", "bob"],
      ["/pricing", "ann"],
    ]);
    const journey = await agent.request("/p/shop/users/bob");
    expect(journey.status).toBe(200);
    expect(await journey.text()).toContain("/docs");
  });

  const invalid: [string, unknown, string][] = [
    ["without payload", { project: "shop", user_id: "ann" }, "payload"],
    ["with payload not an object", { project: "shop", payload: "/pricing" }, "payload"],
    ["without a path", { project: "shop", payload: { title: "Pricing" } }, "payload.path"],
    ["with an empty path", { project: "shop", payload: { path: "" } }, "payload.path"],
    ["with a path over 200 characters", { project: "shop", payload: { path: `/${"a".repeat(200)}` } }, "payload.path"],
    [
      "with a referrer that is neither a URL nor a host",
      { project: "shop", payload: { path: "/", referrer: "not a referrer" } },
      "payload.referrer",
    ],
    [
      "with utm_source over 256 characters",
      { project: "shop", payload: { path: "/", utm_source: "x".repeat(257) } },
      "payload.utm_source",
    ],
    ["with a bad project name", { project: "Shop", payload: { path: "/" } }, "project"],
    ["with a user_id that is not a string", { project: "shop", user_id: 42, payload: { path: "/" } }, "user_id"],
  ];
  for (const [name, body, field] of invalid) {
    test(`400 naming the field ${name}`, async () => {
      const res = await post(server, "/v1/page", body);
      expect(res.status).toBe(400);
      expect(res.json.error).toBe("validation_error");
      expect(res.json.validation.body.map((i: { path: string }) => i.path)).toContain(field);
    });
  }

  test("an unknown project is a 404, and nothing is stored by a refused view", async () => {
    const count = async () =>
      (await call(server, { path: "/v1/events?project=shop&channel=pageviews&limit=200" })).json.events.length;
    const before = await count();
    expect((await post(server, "/v1/page", { project: "nope", payload: { path: "/" } })).status).toBe(404);
    expect(
      (await post(server, "/v1/page", { project: "shop", payload: { path: "/", referrer: "not a referrer" } })).status,
    ).toBe(400);
    expect(await count()).toBe(before);
  });
});

describe("POST /v1/page from a web page, with a public token", () => {
  const fromPage = (token: string, body: unknown) =>
    call(server, { path: "/v1/page", body, token, headers: { Origin: "https://shop.example.com" } });

  test("the preflight and the answer let any origin read it", async () => {
    const preflight = await server.fetch(`/v1/page`, {
      method: "OPTIONS",
      headers: {
        Origin: "https://shop.example.com",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    expect(preflight.headers.get("access-control-allow-headers")).toContain("Authorization");
    const res = await fromPage(publicToken, view({ path: "/from-the-page" }));
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
  });

  test("its project only", async () => {
    const res = await fromPage(publicToken, { project: "other", payload: { path: "/" } });
    expect(res.status).toBe(403);
    expect(res.json.message).toContain('only send to project "shop"');
  });

  test("a token limited to another channel may not record page views; one limited to pageviews may", async () => {
    const refused = await fromPage(feedbackToken, view({ path: "/" }));
    expect(refused.status).toBe(403);
    expect(refused.json.message).toContain('channel "feedback"');
    expect(refused.json.message).toContain('"pageviews"');
    const allowed = await fromPage(pageviewsToken, view({ path: "/limited" }));
    expect(allowed.status).toBe(200);
    expect(allowed.json.channel).toBe("pageviews");
  });
});
