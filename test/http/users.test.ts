// The users page (/p/PROJECT/users) as a member sees it: who is listed (users of events and
// identified profiles, of this project only), what each row says, the order, the pages, the
// search, and the answers to bad parameters. Runs on PostgreSQL too.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Agent, post, searchIndexed, signedIn, startTestApp, type TestApp } from "../helpers.ts";

const OWNER = { username: "owner", password: "correct horse battery staple" };
const DAY = 86_400;

let server: TestApp;
let agent: Agent;
const now = Math.floor(Date.now() / 1000);

async function ok(res: Promise<{ status: number; json: unknown }>) {
  const r = await res;
  if (r.status !== 200) throw new Error(`answered ${r.status}: ${JSON.stringify(r.json)}`);
}

const log = (project: string, userId: string | undefined, secondsAgo: number) =>
  ok(
    post(server, "/v1/log", {
      project,
      channel: "app",
      event: "Did something",
      ...(userId === undefined ? {} : { user_id: userId }),
      timestamp: now - secondsAgo,
    }),
  );

type Row = { id: string; href: string; props: string; lastSeen: string; firstSeen: string; events: string };

const text = (markup: string) =>
  markup
    .replace(/<[^>]+>/g, " ")
    .replace(/\s+/g, " ")
    .replace(/&amp;/g, "&")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .trim();

/** The rows of the users list, as a person reads them. */
function rows(markup: string): Row[] {
  return [...markup.matchAll(/<li class="user-row">([^]*?)<\/li>/g)].map(([, row]) => {
    const link = /<a class="user-id" href="([^"]+)">([^]*?)<\/a>/.exec(row!)!;
    const stat = (label: string) => text(new RegExp(`<dt>${label}</dt><dd[^>]*>([^]*?)</dd>`).exec(row!)![1]!);
    return {
      id: text(link[2]!),
      href: link[1]!,
      props: text(/<p class="user-props">([^]*?)<\/p>/.exec(row!)?.[1] ?? ""),
      lastSeen: stat("Last seen"),
      firstSeen: stat("First seen"),
      events: stat("Events"),
    };
  });
}

/** The "More users" link, if the page has one. */
const moreLink = (markup: string) =>
  /<li class="users-more"><a[^>]* href="([^"]+)"/.exec(markup)?.[1]?.replace(/&amp;/g, "&") ?? null;

async function page(path: string, headers: Record<string, string> = {}) {
  const res = await agent.request(path, { headers });
  return { status: res.status, html: await res.text() };
}

beforeAll(async () => {
  server = await startTestApp();
  await server.services.accounts.createUser(OWNER, "owner");
  agent = await signedIn(server, OWNER);
  for (const name of ["shop", "other", "many", "empty"]) await server.services.projects.create(name);

  // shop: two users known from events only, one identified only, one both; events without a user.
  await log("shop", "u-old", 5 * DAY);
  for (const days of [4, 3, 2]) await log("shop", "u-mid", days * DAY);
  await log("shop", undefined, 60);
  await log("shop", "bob", 1 * DAY);
  await ok(
    post(server, "/v1/identify", {
      project: "shop",
      user_id: "alice",
      properties: { name: "Alice Liddell", email: "alice@example.com", plan: "pro" },
    }),
  );
  await ok(
    post(server, "/v1/identify", { project: "shop", user_id: "bob", properties: { email: "bob@corp.io", beta: true } }),
  );
  // Another project's users are not shop's.
  await log("other", "intruder", 10);
  await ok(
    post(server, "/v1/identify", {
      project: "other",
      user_id: "alice-elsewhere",
      properties: { email: "alice@example.com" },
    }),
  );

  // many: 130 users, the last 60 of them at one and the same moment (ties across a page boundary).
  // The tied ones arrive odd ids first, then even: their order in the list comes from their ids, not their arrival.
  const order = [
    ...Array.from({ length: 70 }, (_, i) => i),
    ...Array.from({ length: 60 }, (_, i) => 70 + ((i * 2 + 1) % 60) - (i >= 30 ? 1 : 0)),
  ];
  for (const i of order)
    await log("many", `user-${String(i).padStart(3, "0")}`, i < 70 ? 3600 + i * 60 : 3600 + 70 * 60);
  // The search finds what its index holds: on SQLite, a moment after it was stored.
  await searchIndexed(server);
});
afterAll(() => server.close());

describe("the list", () => {
  test("everyone with events or a profile, newest activity first, with first and last seen, events and properties", async () => {
    const { status, html } = await page("/p/shop/users");
    expect(status).toBe(200);
    const list = rows(html);
    // bob and alice were identified just now (an identify call is activity), bob last; then by their newest event.
    expect(list.map((r) => r.id)).toEqual(["bob", "alice", "u-mid", "u-old"]);
    const [bob, alice, mid, old] = list;
    expect(bob).toMatchObject({
      href: "/p/shop/users/bob",
      lastSeen: "just now",
      firstSeen: "1 d ago",
      events: "1",
      props: "email bob@corp.io",
    });
    // name and email are shown before any other property.
    expect(alice).toMatchObject({
      lastSeen: "just now",
      firstSeen: "just now",
      events: "0",
      props: "name Alice Liddell email alice@example.com",
    });
    expect(mid).toMatchObject({
      href: "/p/shop/users/u-mid",
      lastSeen: "2 d ago",
      firstSeen: "4 d ago",
      events: "3",
      props: "",
    });
    expect(old).toMatchObject({ lastSeen: "5 d ago", firstSeen: "5 d ago", events: "1" });
    expect(html).not.toContain("intruder");
    expect(html).not.toContain("alice-elsewhere");
    expect(moreLink(html)).toBeNull();
  });

  test("a user's link leads to their journey", async () => {
    const { html } = await page("/p/shop/users");
    const href = rows(html).find((r) => r.id === "u-mid")!.href;
    const journey = await page(href);
    expect(journey.status).toBe(200);
    expect(journey.html).toContain("u-mid");
    expect(journey.html.match(/class="event[" ]/g)?.length).toBe(3);
  });

  test("is linked from the project page and the channel page's header", async () => {
    for (const path of ["/p/shop", "/p/shop/c/app"]) expect((await page(path)).html).toContain('href="/p/shop/users"');
  });

  test("the channel page's crumbs lead to its project only; the link to the users is a button in its header", async () => {
    const { html } = await page("/p/shop/c/app");
    const crumbs = /<p class="crumbs">([^]*?)<\/p>/.exec(html)![1]!;
    expect(text(crumbs)).toBe("shop");
    expect(crumbs).not.toContain("/users");
    const actions = /<header class="page-header">[^]*?<div class="actions">([^]*?)<\/div>/.exec(html)![1]!;
    expect(actions).toMatch(/<a class="button[^"]*" href="\/p\/shop\/users"[^>]*>[^]*Users<\/a>/);
  });

  test("a project without users explains how users appear", async () => {
    const { status, html } = await page("/p/empty/users");
    expect(status).toBe(200);
    expect(rows(html)).toEqual([]);
    expect(text(html)).toContain("No users yet. A user appears here when an event arrives with a user_id");
  });

  test("pages of 50, each after the last, none twice and none missed, ties at one moment included", async () => {
    const seen: string[] = [];
    let next: string | null = "/p/many/users";
    const sizes: number[] = [];
    while (next) {
      const { status, html } = await page(next);
      expect(status).toBe(200);
      const ids = rows(html).map((r) => r.id);
      sizes.push(ids.length);
      seen.push(...ids);
      next = moreLink(html);
    }
    expect(sizes).toEqual([50, 50, 30]);
    // Newest first: user-000 is the most recent; the 60 tied at the oldest moment come last, by id descending.
    const expected = [...Array.from({ length: 70 }, (_, i) => i), ...Array.from({ length: 60 }, (_, i) => 129 - i)].map(
      (i) => `user-${String(i).padStart(3, "0")}`,
    );
    expect(seen).toEqual(expected);
  });

  test("the next page for htmx is just its rows and the link after them", async () => {
    const first = await page("/p/many/users");
    const next = moreLink(first.html)!;
    const fragment = await page(next, { "HX-Request": "true" });
    expect(fragment.status).toBe(200);
    expect(fragment.html).not.toContain("<html");
    expect(rows(fragment.html)).toHaveLength(50);
    expect(rows(fragment.html)[0]!.id).toBe("user-050");
    expect(moreLink(fragment.html)).toContain("cursor=");
  });
});

describe("the search", () => {
  const search = async (project: string, q: string) =>
    rows((await page(`/p/${project}/users?q=${encodeURIComponent(q)}`)).html).map((r) => r.id);

  test("a word matches the start of a word of the user id, in any case", async () => {
    expect(await search("shop", "u-")).toEqual(["u-mid", "u-old"]);
    expect(await search("shop", "MID")).toEqual(["u-mid"]);
    expect(await search("shop", "bo")).toEqual(["bob"]);
    // Words, as the event search matches them: not any part of one.
    expect(await search("shop", "ob")).toEqual([]);
  });

  test("a word matches any property's value or key; key:value matches that property", async () => {
    expect(await search("shop", "corp")).toEqual(["bob"]);
    expect(await search("shop", "beta")).toEqual(["bob"]);
    expect(await search("shop", "liddell")).toEqual(["alice"]);
    expect(await search("shop", "email:ALICE@")).toEqual(["alice"]);
    expect(await search("shop", 'name:"Alice Liddell"')).toEqual(["alice"]);
    expect(await search("shop", "beta:true")).toEqual(["bob"]);
    // The key must be the property's: no other property's value matches.
    expect(await search("shop", "name:corp")).toEqual([]);
    // Every term must match.
    expect(await search("shop", "email:example plan:pro")).toEqual(["alice"]);
    expect(await search("shop", "email:example plan:free")).toEqual([]);
  });

  test("text typed as stored always matches, in any script", async () => {
    await server.services.projects.create("scripts");
    await ok(
      post(server, "/v1/identify", { project: "scripts", user_id: "u-tr", properties: { city: "İstanbul Iğdır" } }),
    );
    await ok(
      post(server, "/v1/identify", { project: "scripts", user_id: "u-gr", properties: { name: "Ωmega ΣΊΣΥΦΟΣ" } }),
    );
    await ok(
      post(server, "/v1/identify", { project: "scripts", user_id: "ÉVENTUSER", properties: { name: "Ärger Öl" } }),
    );
    await searchIndexed(server);
    expect(await search("scripts", "İstanbul")).toEqual(["u-tr"]);
    expect(await search("scripts", "ΣΊΣΥΦΟΣ")).toEqual(["u-gr"]);
    expect(await search("scripts", "name:ΣΊΣΥΦΟΣ")).toEqual(["u-gr"]);
    expect(await search("scripts", "Ärger")).toEqual(["ÉVENTUSER"]);
    expect(await search("scripts", "ÉVENTUSER")).toEqual(["ÉVENTUSER"]);
    // Folded as the event search folds: case and accents, in every script, on both stores.
    expect(await search("scripts", "éventuser")).toEqual(["ÉVENTUSER"]);
    expect(await search("scripts", "eventuser arger")).toEqual(["ÉVENTUSER"]);
  });

  test("finds nobody of another project, and says so", async () => {
    expect(await search("shop", "intruder")).toEqual([]);
    expect(await search("shop", "elsewhere")).toEqual([]);
    const { html } = await page("/p/shop/users?q=intruder");
    expect(text(html)).toContain("No users match “intruder”");
    expect(html).toContain('value="intruder"');
  });

  test("pages through its matches, keeping the search", async () => {
    let next: string | null = "/p/many/users?q=user-1";
    const seen: string[] = [];
    while (next) {
      const { html } = await page(next);
      seen.push(...rows(html).map((r) => r.id));
      next = moreLink(html);
      if (next) expect(next).toContain("q=user-1");
    }
    // user-100 .. user-129, all at the tied moment: by id descending.
    expect(seen).toEqual(Array.from({ length: 30 }, (_, i) => `user-${129 - i}`));
    const broad: string[] = [];
    next = "/p/many/users?q=user";
    while (next) {
      const { html } = await page(next);
      broad.push(...rows(html).map((r) => r.id));
      next = moreLink(html);
    }
    expect(broad).toHaveLength(130);
    expect(new Set(broad).size).toBe(130);
    expect(broad.slice(0, 3)).toEqual(["user-000", "user-001", "user-002"]);
  });
});

describe("bad parameters", () => {
  test("a cursor that is not one of ours is a 400 that says what to do", async () => {
    for (const cursor of [
      "garbage",
      Buffer.from("no-colon").toString("base64url"),
      Buffer.from("abc:user").toString("base64url"),
    ]) {
      const { status, html } = await page(`/p/many/users?cursor=${cursor}`);
      expect(status).toBe(400);
      expect(text(html)).toContain("is not valid");
    }
  });

  test("a search too long, or of too many terms, is a 400", async () => {
    expect((await page(`/p/shop/users?q=${"a".repeat(201)}`)).status).toBe(400);
    expect((await page(`/p/shop/users?q=${encodeURIComponent("a b c d e f g h i")}`)).status).toBe(400);
    expect((await page(`/p/shop/users?q=${encodeURIComponent("a\u0000b")}`)).status).toBe(400);
  });

  test("an unknown project is a 404", async () => {
    expect((await page("/p/nope/users")).status).toBe(404);
  });

  test("a user id with no events and no profile is a 404 that says so; one with either is a page", async () => {
    const missing = await page("/p/shop/users/alcie", { Accept: "text/html" });
    expect(missing.status).toBe(404);
    expect(text(missing.html)).toContain("No user “alcie” in project “shop”");
    // Known only in another project: not this project's user.
    expect((await page("/p/shop/users/intruder")).status).toBe(404);
    expect((await page("/p/shop/users/alice")).status).toBe(200); // a profile, no events
    expect((await page("/p/shop/users/u-old")).status).toBe(200); // events, no profile
    // A search on the user's page that finds none of their events is still their page.
    const searched = await page("/p/shop/users/u-old?q=nothing-like-this");
    expect(searched.status).toBe(200);
    expect(text(searched.html)).toContain("u-old");
    // The first event of a new id makes its page.
    expect((await page("/p/shop/users/newcomer")).status).toBe(404);
    await log("shop", "newcomer", 5);
    expect((await page("/p/shop/users/newcomer")).status).toBe(200);
  });

  test("a search that looks like SQL or markup is only text", async () => {
    const q = `' OR 1=1 --<script>alert(1)</script> %_`;
    const { status, html } = await page(`/p/shop/users?q=${encodeURIComponent(q)}`);
    expect(status).toBe(200);
    expect(rows(html)).toEqual([]);
    expect(html).not.toContain("<script>alert(1)");
  });
});
