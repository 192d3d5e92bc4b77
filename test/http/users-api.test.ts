// GET /v1/users and GET /v1/users/:user_id: the people /v1/identify describes, and everyone with
// events, read by a script; first seen the same in the list, on one user, and on the user's page.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { call, eventually, post, searchIndexed, signedIn, startTestApp, type TestApp } from "../helpers.ts";

const OWNER = { username: "owner", password: "correct horse battery staple" };
let server: TestApp;
const T0 = 1_700_000_000;

beforeAll(async () => {
  server = await startTestApp();
  await server.services.accounts.createUser(OWNER, "owner");
  // alice: an old event, then identified; bob: identified only; carol: events only.
  await post(server, "/v1/log", {
    project: "default",
    channel: "c",
    event: "signed up",
    user_id: "alice",
    timestamp: T0,
  });
  await post(server, "/v1/identify", {
    project: "default",
    user_id: "alice",
    properties: { name: "Alice Liddell", plan: "pro" },
  });
  await post(server, "/v1/identify", { project: "default", user_id: "bob", properties: { name: "Bob", plan: "free" } });
  await post(server, "/v1/log", {
    project: "default",
    channel: "c",
    event: "paid",
    user_id: "carol",
    timestamp: T0 + 60,
  });
  await post(server, "/v1/log", { project: "default", channel: "c", event: "paid again", user_id: "carol" });
  await searchIndexed(server);
});
afterAll(() => server.close());

describe("GET /v1/users", () => {
  test("lists everyone, newest activity first, with what they are and when they were seen", async () => {
    const answer = await call(server, { path: "/v1/users?project=default" });
    expect(answer.status).toBe(200);
    expect(answer.json.success).toBe(true);
    const ids = answer.json.users.map((u: { user_id: string }) => u.user_id);
    expect(ids).toEqual(["carol", "bob", "alice"]);
    const alice = answer.json.users.find((u: { user_id: string }) => u.user_id === "alice");
    expect(alice).toMatchObject({ properties: { name: "Alice Liddell", plan: "pro" }, first_seen: T0, events: 1 });
    expect(alice.last_seen).toBeGreaterThan(T0 + 1000);
    const carol = answer.json.users.find((u: { user_id: string }) => u.user_id === "carol");
    expect(carol).toMatchObject({ properties: {}, first_seen: T0 + 60, events: 2 });
    expect(answer.json.next_cursor).toBeNull();
  });

  test("searches ids and properties", async () => {
    expect(
      (await call(server, { path: "/v1/users?project=default&q=plan:pro" })).json.users.map(
        (u: { user_id: string }) => u.user_id,
      ),
    ).toEqual(["alice"]);
    expect(
      (await call(server, { path: "/v1/users?project=default&q=carol" })).json.users.map(
        (u: { user_id: string }) => u.user_id,
      ),
    ).toEqual(["carol"]);
  });

  test("pages with limit and cursor, each user once", async () => {
    await call(server, { method: "POST", path: "/v1/log", body: { project: "default", channel: "c", event: "noop" } });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { json: { users: { user_id: string }[]; next_cursor: string | null } } = await call(server, {
        path: `/v1/users?project=default&limit=1${cursor ? `&cursor=${cursor}` : ""}`,
      });
      seen.push(...page.json.users.map((u) => u.user_id));
      cursor = page.json.next_cursor;
    } while (cursor);
    expect(seen).toEqual(["carol", "bob", "alice"]);
  });

  test("bad parameters are a 400 naming the parameter; an unknown project a 404", async () => {
    for (const [path, param] of [
      ["/v1/users", "project"],
      ["/v1/users?project=default&limit=0", "limit"],
      ["/v1/users?project=default&limit=201", "limit"],
      ["/v1/users?project=Default", "project"],
    ] as const) {
      const answer = await call(server, { path });
      expect(answer.status).toBe(400);
      expect(answer.json.validation.query[0].path).toBe(param);
    }
    expect((await call(server, { path: "/v1/users?project=default&cursor=not-ours" })).status).toBe(400);
    expect((await call(server, { path: "/v1/users?project=nope" })).status).toBe(404);
  });

  test("is for full-access tokens: a public token gets 403", async () => {
    const { token } = await server.services.tokens.create({ name: "web", kind: "public", project: "default" });
    expect((await call(server, { path: "/v1/users?project=default", token })).status).toBe(403);
  });
});

describe("GET /v1/users/:user_id", () => {
  test("answers one user as the list does, and the user's page shows the same first seen", async () => {
    const list = (await call(server, { path: "/v1/users?project=default" })).json.users;
    for (const id of ["alice", "bob", "carol"]) {
      const one = await call(server, { path: `/v1/users/${id}?project=default` });
      expect(one.status).toBe(200);
      expect(one.json.user).toEqual(list.find((u: { user_id: string }) => u.user_id === id));
    }
    const agent = await signedIn(server, OWNER);
    const page = await (await agent.request("/p/default/users/alice")).text();
    const listPage = await (await agent.request("/p/default/users?q=alice")).text();
    const firstSeen = (html: string) => /<dt>First seen<\/dt><dd>([^]*?)<\/dd>/.exec(html)?.[1];
    expect(firstSeen(page)).toBeDefined();
    expect(firstSeen(page)).toBe(firstSeen(listPage));
  });

  test("first seen is the earliest of the first event and the first identify, the same in the list, on one user and on both pages", async () => {
    // dave: identified, then an event; erin: identified, then an event dated before that; frank: events only.
    await post(server, "/v1/identify", { project: "default", user_id: "dave", properties: { name: "Dave" } });
    const identified = Date.now();
    await eventually(() => expect(Date.now()).toBeGreaterThan(identified)); // the event comes a millisecond later at least
    await post(server, "/v1/log", { project: "default", channel: "c", event: "dave acts", user_id: "dave" });
    await post(server, "/v1/identify", { project: "default", user_id: "erin", properties: { name: "Erin" } });
    await post(server, "/v1/log", {
      project: "default",
      channel: "c",
      event: "erin, back then",
      user_id: "erin",
      timestamp: T0 + 120,
    });
    await post(server, "/v1/log", {
      project: "default",
      channel: "c",
      event: "frank later",
      user_id: "frank",
      timestamp: T0 + 300,
    });
    await post(server, "/v1/log", {
      project: "default",
      channel: "c",
      event: "frank first",
      user_id: "frank",
      timestamp: T0 + 180,
    });
    await searchIndexed(server);
    const profile = async (id: string) =>
      (await server.store.profiles.find((await server.store.projects.findByName("default"))!.id, id))!;
    const expected = { dave: (await profile("dave")).createdAt / 1000, erin: T0 + 120, frank: T0 + 180 };
    const agent = await signedIn(server, OWNER);
    /** The instant the page's First seen stands for (its time's datetime), in Unix seconds. */
    const firstSeen = (html: string) =>
      Date.parse(/<dt>First seen<\/dt><dd><time datetime="([^"]+)"/.exec(html)![1]!) / 1000;
    const list = (await call(server, { path: "/v1/users?project=default" })).json.users as {
      user_id: string;
      first_seen: number;
    }[];
    for (const [id, seconds] of Object.entries(expected)) {
      expect(list.find((u) => u.user_id === id)!.first_seen, `${id} in GET /v1/users`).toBe(seconds);
      expect(
        (await call(server, { path: `/v1/users/${id}?project=default` })).json.user.first_seen,
        `${id} in GET /v1/users/${id}`,
      ).toBe(seconds);
      const row = (await (await agent.request(`/p/default/users?q=${id}`)).text()).split('<li class="user-row">')[1]!;
      expect(firstSeen(row), `${id} on the users page`).toBe(Math.floor(seconds * 1000) / 1000);
      expect(firstSeen(await (await agent.request(`/p/default/users/${id}`)).text()), `${id} on the user's page`).toBe(
        Math.floor(seconds * 1000) / 1000,
      );
    }
    // Identified before any event: first seen is the identify, not the event after it.
    expect(expected.dave).toBeLessThan(
      (await call(server, { path: "/v1/events?project=default&user_id=dave" })).json.events[0].timestamp,
    );
  });

  test("an id nothing knows is a 404 that says so", async () => {
    const answer = await call(server, { path: "/v1/users/nobody?project=default" });
    expect(answer.status).toBe(404);
    expect(answer.json.message).toMatch(/No user "nobody"/);
  });
});
