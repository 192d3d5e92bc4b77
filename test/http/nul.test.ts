// The NUL character (U+0000) in a URL: no name holds one (every name is refused with it), so a path
// or a filter naming one finds nothing, the same on SQLite and PostgreSQL (which cannot even
// compare with it): a 404 or an empty result, never a 500.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Agent, call, post, signedIn, startTestApp, type TestApp } from "../helpers.ts";

const OWNER = { username: "owner", password: "correct horse battery staple" };

describe("NUL in URLs", () => {
  let server: TestApp;
  let agent: Agent;
  beforeAll(async () => {
    server = await startTestApp();
    await server.services.accounts.createUser(OWNER, "owner");
    agent = await signedIn(server, OWNER);
    expect(
      (
        await post(server, "/v1/log", {
          project: "default",
          channel: "shop",
          event: "e",
          user_id: "ann",
          tags: { plan: "pro" },
        })
      ).status,
    ).toBe(200);
  });
  afterAll(() => server.close());

  test("dashboard paths and filters that name something with NUL are not found", async () => {
    for (const path of [
      "/p/%00",
      "/p/%00/live",
      "/p/default/c/%00",
      "/p/default/c/%00/delete",
      "/p/default/metrics/%00",
      "/p/default/users/%00",
      "/p/default/feed?channel=%00",
      "/p/default/activity.json?channel=a%00",
      "/p/default/live?channel=%00",
      "/p/default?channel=%00",
    ]) {
      const res = await agent.request(path);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
    }
    const created = await agent.request("/p/%00/channels", {
      method: "POST",
      body: new URLSearchParams({ name: "x" }),
    });
    expect(created.status).toBe(404);
  });

  test("a filter value with NUL matches nothing; a users cursor with one is refused", async () => {
    const feed = await agent.request("/p/default/feed?user=%00");
    expect(feed.status).toBe(200);
    expect(await feed.text()).not.toContain("event-name");
    const chart = await agent.request("/p/default/activity.json?q=plan:%00&days=7");
    expect(chart.status).toBe(200);
    expect((await chart.json()).channels).toEqual([]);
    const cursor = Buffer.from("123:a\u0000").toString("base64url");
    for (const q of ["", "&q=ann", "&q=plan:pro"])
      expect((await agent.request(`/p/default/users?cursor=${cursor}${q}`)).status).toBe(400);
  });

  test("the API refuses a filter with NUL as invalid (400), naming the parameter", async () => {
    for (const [query, name] of [
      ["channel=%00", "channel"],
      ["user_id=%00", "user_id"],
      ["tag=a:%00", "tag"],
      ["q=%00", "q"],
    ]) {
      const res = await call(server, { path: `/v1/events?project=default&${query}` });
      expect(res.status).toBe(400);
      expect(res.json.message).toContain(name);
    }
  });

  test("a tag asked twice counts once, and gives what asking once gives", async () => {
    const once = await agent.request("/p/default/activity.json?days=7&q=plan:pro").then((r) => r.json());
    const twice = await agent.request("/p/default/activity.json?days=7&q=plan:pro%20plan:pro").then((r) => r.json());
    expect(twice.totals).toEqual(once.totals);
    expect(once.totals).toEqual([1]);
  });
});
