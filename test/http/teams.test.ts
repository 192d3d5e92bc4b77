// Teams: roles and project limits as people meet them (the route table's walk checks every route:
// routes.test.ts), one's own password, the audit trail, and API tokens: names unique among live
// ones, and the examples shown when one is made, run as a user would paste them.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setLogLevel } from "../../src/logger.ts";
import {
  Agent,
  eventually,
  notifierIdle,
  openSse,
  post,
  signedIn,
  startTestApp,
  startTestServer,
  type TestApp,
  type TestServer,
} from "../helpers.ts";
import { startPushService } from "../push-service.ts";

const OWNER = { username: "owner", password: "owner password 1" };
const person = (username: string) => ({ username, password: `${username} password 1` });

/** The text of an HTML answer with its entities read back (what a person sees and copies). */
const unescape = (html: string) =>
  html
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");

async function form(
  agent: Agent,
  path: string,
  fields: Record<string, string | string[]>,
  htmx = true,
): Promise<Response> {
  const body = new URLSearchParams();
  for (const [key, value] of Object.entries(fields)) for (const v of [value].flat()) body.append(key, v);
  body.append("_csrf", await agent.csrf());
  return agent.request(path, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", ...(htmx ? { "HX-Request": "true" } : {}) },
    body: body.toString(),
  });
}

describe("roles and project limits", () => {
  let server: TestServer;
  let owner: Agent;
  beforeAll(async () => {
    server = await startTestServer({ "outbound-allow": "127.0.0.1" }); // the push service is on 127.0.0.1
    await server.services.accounts.createUser(OWNER, "owner");
    owner = await signedIn(server, OWNER);
    for (const name of ["shop", "blog"]) await server.services.projects.create(name);
  });
  afterAll(() => server.close());

  test("the owner adds people with a role and projects, and changes them in Settings → Members", async () => {
    const added = await form(owner, "/settings/members", {
      username: "vera",
      password: "vera password 1",
      role: "viewer",
      reach: "some",
      projects: ["shop"],
    });
    expect(added.headers.get("hx-redirect")).toBe("/settings/members");
    let vera = (await server.services.accounts.list()).find((u) => u.username === "vera")!;
    expect({ role: vera.role, projects: vera.projects }).toEqual({ role: "viewer", projects: ["shop"] });
    const changed = await form(owner, `/settings/members/${vera.id}`, {
      role: "member",
      reach: "some",
      projects: ["shop", "blog"],
    });
    expect(changed.headers.get("hx-redirect")).toBe(`/settings/members?changed=${vera.id}`);
    vera = (await server.services.accounts.list()).find((u) => u.username === "vera")!;
    expect({ role: vera.role, projects: vera.projects }).toEqual({ role: "member", projects: ["blog", "shop"] });
    const page = await (await owner.request(`/settings/members?changed=${vera.id}`)).text();
    expect(page).toContain("Saved: vera is a member and sees blog, shop");
    expect((await form(owner, `/settings/members/${vera.id}`, { role: "member", reach: "all" })).status).toBe(200);
    expect((await server.services.accounts.list()).find((u) => u.username === "vera")!.projects).toBeNull();
    // Nothing ticked under "only these" is refused, next to the field.
    const none = await form(owner, `/settings/members/${vera.id}`, { role: "member", reach: "some" });
    expect(none.status).toBe(422);
    expect(await none.text()).toContain("choose at least one project");
  });

  test("an admin adds members and viewers, not admins; one limited to some projects gives only theirs", async () => {
    await server.services.accounts.createUser(person("ada"), "admin", { projects: ["shop"] });
    const ada = await signedIn(server, person("ada"));
    const admin = await form(ada, "/settings/members", {
      username: "boss",
      password: "boss password 1",
      role: "admin",
      reach: "some",
      projects: ["shop"],
    });
    expect(admin.status).toBe(422);
    expect(await admin.text()).toContain("only the owner can make admins");
    const beyond = await form(ada, "/settings/members", {
      username: "wide",
      password: "wide password 1",
      role: "member",
      reach: "some",
      projects: ["shop", "blog"],
    });
    expect(beyond.status).toBe(422);
    expect(await beyond.text()).toContain("choose among your own projects (shop)");
    const everything = await form(ada, "/settings/members", {
      username: "wide",
      password: "wide password 1",
      role: "member",
      reach: "all",
    });
    expect(everything.status).toBe(422);
    expect(
      (
        await form(ada, "/settings/members", {
          username: "mo",
          password: "mo password 12",
          role: "member",
          reach: "some",
          projects: ["shop"],
        })
      ).status,
    ).toBe(200);
    const users = await server.services.accounts.list();
    expect(users.find((u) => u.username === "mo")!.projects).toEqual(["shop"]);
    expect(users.some((u) => u.username === "boss" || u.username === "wide")).toBe(false);
    // She may remove mo, not the owner, and changes no one's role.
    const mo = users.find((u) => u.username === "mo")!;
    expect(
      (await form(ada, `/settings/members/${mo.id}`, { role: "viewer", reach: "some", projects: ["shop"] })).status,
    ).toBe(403);
    expect((await form(ada, `/settings/members/${users.find((u) => u.role === "owner")!.id}/remove`, {})).status).toBe(
      403,
    );
    expect((await form(ada, `/settings/members/${mo.id}/remove`, {})).headers.get("hx-redirect")).toBe(
      "/settings/members",
    );
  });

  test("someone limited to a project sees only it: the sidebar, the first page, the users list, the settings' project lists", async () => {
    await server.services.accounts.createUser(person("lim"), "admin", { projects: ["blog"] });
    const lim = await signedIn(server, person("lim"));
    const home = await lim.request("/");
    expect(home.headers.get("location")).toBe("/p/blog");
    const page = await (await lim.request("/p/blog")).text();
    const sidebar = page.slice(
      page.indexOf('id="project-list"'),
      page.indexOf("</ul>", page.indexOf('id="project-list"')),
    );
    expect(sidebar).toContain("/p/blog");
    expect(sidebar).not.toContain("/p/shop");
    expect(sidebar).not.toContain("/p/default");
    for (const path of ["/settings/api", "/settings/integrations", "/settings/notifications", "/settings/members"]) {
      const text = await (await lim.request(path)).text();
      expect({ path, shop: text.includes('value="shop"') }).toEqual({ path, shop: false });
    }
    expect((await lim.request("/p/shop/users")).status).toBe(404);
    // A project they create is theirs at once.
    const made = await form(lim, "/projects", { name: "blog-two" });
    expect(made.headers.get("hx-redirect")).toBe("/p/blog-two");
    expect((await lim.request("/p/blog-two")).status).toBe(200);
    expect((await server.services.accounts.list()).find((u) => u.username === "lim")!.projects).toEqual([
      "blog",
      "blog-two",
    ]);
  });

  test("the API tokens someone limited makes reach only their projects; limiting a person later limits their tokens", async () => {
    await server.services.accounts.createUser(person("tess"), "admin");
    const tess = await signedIn(server, person("tess"));
    const full = await (await form(tess, "/settings/api/tokens", { name: "tess full", kind: "full" })).text();
    const pub = await (
      await form(tess, "/settings/api/tokens", { name: "tess shop page", kind: "public", project: "shop" })
    ).text();
    const fullToken = /value="(sb_\w+)"/.exec(full)![1]!;
    const pubToken = /value="(sb_\w+)"/.exec(pub)![1]!;
    const send = (token: string, project: string) =>
      post(server, "/v1/log", { project, channel: "c", event: "e" }, token);
    expect((await send(fullToken, "shop")).status).toBe(200);
    const tessUser = (await server.services.accounts.list()).find((u) => u.username === "tess")!;
    const ownerUser = (await server.services.accounts.list()).find((u) => u.role === "owner")!;
    await server.services.members.change(ownerUser, tessUser.id, { role: "admin", projects: ["blog"] });
    await eventually(async () => expect((await send(fullToken, "shop")).status).toBe(403));
    expect((await send(fullToken, "blog")).status).toBe(200);
    expect((await send(pubToken, "shop")).status).toBe(401); // revoked: its project is no longer hers
    const read = await fetch(`${server.url}/v1/events?project=shop`, {
      headers: { Authorization: `Bearer ${fullToken}` },
    });
    expect(read.status).toBe(403);
    expect((await read.json()).message).toContain('This token is limited to project "blog"');
    // A metric sent without a project would go to the default project, which it cannot reach: the
    // answer says to name a project, rather than naming one the caller never mentioned.
    const metric = await post(server, "/send-metric", { title: "Active users", value: 3 }, fullToken);
    expect(metric.status).toBe(403);
    expect(metric.json.message).toBe(
      'This token is limited to project "blog", and a metric sent without a project goes to the default project, "default": name one of them ("project": "blog").',
    );
    // Made now, a full-access token is limited from the start, and the list says so.
    const later = await (await form(tess, "/settings/api/tokens", { name: "tess later", kind: "full" })).text();
    expect(later).toContain("your projects only (blog)");
    expect((await server.services.tokens.list()).find((t) => t.name === "tess later")!.projects).toEqual(["blog"]);
    // Nor does she see the tokens of projects that are not hers.
    await server.services.tokens.create({ name: "shop widget", kind: "public", project: "shop" });
    expect(await (await tess.request("/settings/api")).text()).not.toContain("shop widget");
    expect(await (await owner.request("/settings/api")).text()).toContain("shop widget");
  });

  test("an admin made a member or a viewer loses the API tokens they made", async () => {
    await server.services.accounts.createUser(person("dan"), "admin");
    const dan = await signedIn(server, person("dan"));
    const made = await (await form(dan, "/settings/api/tokens", { name: "dan's script", kind: "full" })).text();
    const token = /value="(sb_\w+)"/.exec(made)![1]!;
    const rule = { project: "shop", name: "Dan's rule", kind: "count", window: 3600, above: 100 };
    expect((await post(server, "/v1/alerts", rule, token)).status).toBe(200);
    const danUser = (await server.services.accounts.list()).find((u) => u.username === "dan")!;
    const owner = (await server.services.accounts.list()).find((u) => u.role === "owner")!;
    const changed = await server.services.members.change(owner, danUser.id, { role: "viewer", projects: null });
    expect(changed.revokedTokens).toBe(1);
    // A viewer changes nothing in the dashboard, nor through a token made while an admin.
    expect((await post(server, "/v1/alerts", { ...rule, name: "Dan's second rule" }, token)).status).toBe(401);
    expect((await server.services.tokens.list()).some((t) => t.name === "dan's script")).toBe(false);
  });

  test("a limited token naming its project and another in one query (project=shop&project=blog) is refused", async () => {
    const limited = (await server.services.tokens.create({ name: "shop only, twice", projects: ["shop"] })).token;
    await post(server, "/v1/log", { project: "blog", channel: "drafts", event: "Unpublished draft", user_id: "ed" });
    await post(server, "/send-metric", { project: "blog", title: "Drafts", value: 3 });
    for (const path of [
      "/v1/events?project=shop&project=blog",
      "/v1/users?project=shop&project=blog",
      "/v1/users/ed?project=shop&project=blog",
      "/v1/metrics?project=shop&project=blog",
      "/v1/metrics/history?project=shop&project=blog&title=Drafts",
      "/v1/analytics/series?project=shop&project=blog",
      "/v1/charts?project=shop&project=blog",
      "/v1/alerts?project=shop&project=blog",
      "/v1/integrations?project=shop&project=blog",
      "/v1/stream?project=shop&project=blog",
    ]) {
      const answer = await fetch(server.url + path, { headers: { Authorization: `Bearer ${limited}` } });
      const text = await answer.text();
      expect({ path, status: answer.status, leak: /Unpublished|Drafts|"ed"/.test(text) }).toEqual({
        path,
        status: 403,
        leak: false,
      });
    }
    expect(
      (
        await fetch(`${server.url}/v1/events?project=shop&project=shop`, {
          headers: { Authorization: `Bearer ${limited}` },
        })
      ).status,
    ).toBe(200);
  });

  test("a viewer reads but changes nothing, and is offered nothing to change", async () => {
    await server.services.accounts.createUser(person("vic"), "viewer");
    const vic = await signedIn(server, person("vic"));
    const page = await (await vic.request("/p/shop")).text();
    expect(page).toContain('class="role-viewer"');
    expect(page).toMatch(/class="[^"]*needs-member[^"]*"[^>]*data-testid="project-settings"/);
    expect((await vic.request("/p/shop/charts")).status).toBe(200);
    expect((await form(vic, "/p/shop/retention", { days: "3" })).status).toBe(403);
    expect((await server.services.projects.requireProject("shop")).retentionDays).toBeNull();
    expect((await vic.request("/settings")).headers.get("location")).toBe("/settings/account");
    // The Alerts page lists the rules; a rule's name leads members to its form, which a viewer is refused.
    const rule = await server.services.alerts.create({
      project: "shop",
      name: "Quiet shop",
      kind: "count",
      filter: { channel: "orders" },
      window: 3600,
      below: 1,
    });
    expect((await vic.request(`/p/shop/alerts/${rule.id}`)).status).toBe(403);
    for (const path of ["/p/shop/alerts", "/p/shop/alerts/list"]) {
      const list = await (await vic.request(path)).text();
      expect(list).toContain('<span class="alert-name">Quiet shop</span>');
      expect(list).not.toContain('<a class="alert-name"'); // Edit, among the members' controls, is hidden by the role's style
    }
    // A funnel's dropped users lead back to the builder, which a viewer may not open: they go back to the charts.
    const dropped = "/p/shop/funnel/dropped?kind=funnel&range=30&step=Signed+up&step=Paid&window=604800&at=2";
    expect((await vic.request("/p/shop/charts/new?kind=funnel")).status).toBe(403);
    const theirs = await (await vic.request(dropped)).text();
    expect(theirs).toContain('<p class="crumbs"><a href="/p/shop">shop</a> / <a href="/p/shop/charts">charts</a></p>');
    expect(theirs).not.toContain("/charts/new");
    expect(await (await owner.request(dropped)).text()).toContain(
      '<a href="/p/shop/charts/new?kind=funnel&amp;range=30&amp;step=Signed+up&amp;step=Paid&amp;window=604800">funnel</a>',
    );
    const owners = await (await owner.request("/p/shop/alerts")).text();
    expect(owners).toContain(`<a class="alert-name" href="/p/shop/alerts/${rule.id}">Quiet shop</a>`);
  });

  test("Settings → Notifications links to Integrations only for those who may open it", async () => {
    await server.services.accounts.createUser(person("mia"), "member");
    const mia = await signedIn(server, person("mia"));
    expect((await mia.request("/settings/integrations")).status).toBe(403);
    const text = await (await mia.request("/settings/notifications")).text();
    // The settings tab is hidden by the role's style; no other link leads there.
    expect(text.match(/<a [^>]*href="\/settings\/integrations"[^>]*>/g)).toEqual([
      '<a href="/settings/integrations" class="needs-admin">',
    ]);
    expect(text).toContain("an admin adds them");
    const mine = await (await owner.request("/settings/notifications")).text();
    expect(mine).toContain('<a href="/settings/integrations">Integrations</a> instead');
  });

  test("live pages and pushes tell someone limited only of their projects", async () => {
    const push = await startPushService();
    try {
      await server.services.accounts.createUser(person("pia"), "member", { projects: ["blog"] });
      const pia = (await server.services.accounts.list()).find((u) => u.username === "pia")!;
      const sub = push.subscribe();
      const phone = await server.services.devices.register(pia, {
        endpoint: sub.endpoint,
        keys: sub.keys,
        deviceName: "Pia's phone",
      });
      const agent = await signedIn(server, person("pia"));
      const following = server.services.fanout.size;
      const stream = await openSse(`${server.url}/p/blog/live`, { Cookie: agent.cookieHeader() });
      expect(stream.response.status).toBe(200);
      await eventually(() => expect(server.services.fanout.size).toBe(following + 1)); // it follows new events
      await post(server, "/v1/log", { project: "shop", channel: "sales", event: "Shop sale", notify: true });
      await post(server, "/v1/log", { project: "blog", channel: "posts", event: "Blog post", notify: true });
      await eventually(() =>
        expect(stream.frames.filter((f) => f.event === "toast").map((f) => JSON.parse(f.data).text)).toEqual([
          "Blog post · #posts",
        ]),
      );
      await notifierIdle(server);
      const delivered = await server.store.notifications.deliveriesFor("push", [phone.id]);
      expect(delivered.length).toBe(1);
      stream.close();
    } finally {
      await push.stop();
    }
  });

  test("a device's filters take no project its owner does not see, so they do not tell it exists", async () => {
    const push = await startPushService();
    try {
      await server.services.accounts.createUser(person("dora"), "viewer", { projects: ["blog"] });
      const dora = (await server.services.accounts.list()).find((u) => u.username === "dora")!;
      const sub = push.subscribe();
      const phone = await server.services.devices.register(dora, {
        endpoint: sub.endpoint,
        keys: sub.keys,
        deviceName: "Dora's phone",
      });
      const agent = await signedIn(server, person("dora"));
      const saved = await form(agent, `/settings/notifications/devices/${phone.id}/filters`, {
        scope: ["shop", "blog", "no-such-project"],
      });
      expect(saved.status).toBe(200);
      expect((await server.services.devices.get(dora, phone.id)).filterList).toEqual([
        { project: "blog", channels: null },
      ]);
      expect(await (await agent.request("/settings/notifications")).text()).not.toMatch(/notifies about[^<]*shop/);
    } finally {
      await push.stop();
    }
  });

  test("someone limited to some projects is not told whether a project they cannot see exists: checking a name or creating it", async () => {
    await server.services.accounts.createUser(person("ezra"), "member", { projects: ["blog"] });
    const ezra = await signedIn(server, person("ezra"));
    const check = async (name: string) => {
      const res = await ezra.request(`/names/check?kind=project&name=${name}`, { headers: { "HX-Request": "true" } });
      expect(res.status).toBe(200);
      return (await res.text()).replaceAll(name, "NAME");
    };
    // shop exists, nope-project does not: the same answer for both.
    const [shop, missing] = [await check("shop"), await check("nope-project")];
    expect(shop).toBe(missing);
    expect(shop).not.toMatch(/exists|available/);
    // Their own project is one they know of.
    expect(await check("blog")).toContain("already exists");
    const projects = (await server.services.projects.list()).length;
    const taken = await form(ezra, "/projects", { name: "shop" });
    expect(taken.status).toBe(422);
    const said = await taken.text();
    expect(said).toContain("cannot be used for a new project");
    expect(said).not.toMatch(/exists/);
    expect((await server.services.projects.list()).length).toBe(projects);
    expect((await server.services.accounts.list()).find((u) => u.username === "ezra")!.projects).toEqual(["blog"]);
    // Someone who sees every project is told, as before.
    const all = await owner.request("/names/check?kind=project&name=shop");
    expect(await all.text()).toContain("A project named “shop” already exists.");
    // A name free for them is theirs once made.
    expect((await form(ezra, "/projects", { name: "ezra-new" })).status).toBe(200);
    expect((await server.services.accounts.list()).find((u) => u.username === "ezra")!.projects).toEqual([
      "blog",
      "ezra-new",
    ]);
  });

  test("a page of a project taken from someone stops: their live stream ends within a second", async () => {
    await server.services.accounts.createUser(person("leo"), "member", { projects: ["shop", "blog"] });
    const leo = await signedIn(server, person("leo"));
    const before = server.services.fanout.size;
    const stream = await openSse(`${server.url}/p/shop/live`, { Cookie: leo.cookieHeader() });
    const kept = await openSse(`${server.url}/p/blog/live`, { Cookie: leo.cookieHeader() });
    await eventually(() => expect(server.services.fanout.size).toBe(before + 2)); // both follow new events
    const leoUser = (await server.services.accounts.list()).find((u) => u.username === "leo")!;
    await server.services.members.change(null, leoUser.id, { role: "member", projects: ["blog"] });
    // A session's streams hold while it reaches all it reached when they opened: every stream of it
    // ends (each seen ending on its own connection, so each is waited for), and a page of a project
    // still theirs reconnects, as a browser does; its toasts no longer tell of the project taken.
    await eventually(() => expect([stream.ended, kept.ended]).toEqual([true, true]));
    await eventually(() => expect(server.services.fanout.size).toBe(before));
    const live = await openSse(`${server.url}/p/blog/live`, { Cookie: leo.cookieHeader() });
    expect(live.response.status).toBe(200);
    await eventually(() => expect(server.services.fanout.size).toBe(before + 1));
    await post(server, "/v1/log", { project: "shop", channel: "sales", event: "Sale after leo left", notify: true });
    await post(server, "/v1/log", { project: "blog", channel: "posts", event: "Post leo sees", notify: true });
    await eventually(() => expect(live.frames.some((f) => f.data.includes("Post leo sees"))).toBe(true));
    expect(live.frames.map((f) => f.data).join("\n")).not.toContain("Sale after leo left");
    live.close();
    kept.close();
  });

  test("an API stream ends when its token loses the project it follows (its maker limited later)", async () => {
    await server.services.accounts.createUser(person("tom"), "admin");
    const tom = await signedIn(server, person("tom"));
    const made = await (await form(tom, "/settings/api/tokens", { name: "tom's tail", kind: "full" })).text();
    const token = /value="(sb_\w+)"/.exec(made)![1]!;
    const auth = { Authorization: `Bearer ${token}` };
    const shop = await openSse(`${server.url}/v1/stream?project=shop`, auth);
    const everything = await openSse(`${server.url}/v1/stream`, auth);
    const blog = await openSse(`${server.url}/v1/stream?project=blog`, auth);
    expect([shop.response.status, everything.response.status, blog.response.status]).toEqual([200, 200, 200]);
    const tomUser = (await server.services.accounts.list()).find((u) => u.username === "tom")!;
    await server.services.members.change(null, tomUser.id, { role: "admin", projects: ["blog"] });
    await eventually(() => expect([shop.ended, everything.ended]).toEqual([true, true]));
    await post(server, "/v1/log", { project: "shop", channel: "sales", event: "Sale tom's token lost" });
    await post(server, "/v1/log", { project: "blog", channel: "posts", event: "Post tom's token keeps" });
    await eventually(() => expect(blog.frames.some((f) => f.data.includes("Post tom's token keeps"))).toBe(true));
    expect([...shop.frames, ...everything.frames].some((f) => f.data.includes("Sale tom's token lost"))).toBe(false);
    expect(blog.ended).toBe(false);
    blog.close();
  });
});

describe("one's own password", () => {
  let server: TestApp;
  beforeAll(async () => {
    server = await startTestApp();
    await server.services.accounts.createUser(OWNER, "owner");
    await server.services.accounts.createUser(person("val"), "viewer");
  });
  afterAll(() => server.close());

  test("Settings → Account takes the current password and the new one twice; the other sessions end, this one stays", async () => {
    const here = await signedIn(server, person("val"));
    const there = await signedIn(server, person("val"));
    const wrong = await form(here, "/settings/account/password", {
      current: "not it at all",
      password: "a new password 1",
      confirm: "a new password 1",
    });
    expect(wrong.status).toBe(422);
    expect(await wrong.text()).toContain("this is not your current password");
    const differ = await form(here, "/settings/account/password", {
      current: "val password 1",
      password: "a new password 1",
      confirm: "a new password 2",
    });
    expect(differ.status).toBe(422);
    expect(await differ.text()).toContain("the two new passwords differ");
    const short = await form(here, "/settings/account/password", {
      current: "val password 1",
      password: "short",
      confirm: "short",
    });
    expect(short.status).toBe(422);
    expect(await short.text()).toContain("at least 8 characters");
    expect((await there.request("/p/default")).status).toBe(200); // nothing changed yet
    const done = await form(here, "/settings/account/password", {
      current: "val password 1",
      password: "a new password 1",
      confirm: "a new password 1",
    });
    expect(done.status).toBe(200);
    expect(await done.text()).toContain("Your password was changed");
    expect((await here.request("/p/default")).status).toBe(200);
    expect((await there.request("/p/default")).headers.get("location")).toStartWith("/login");
    expect((await signedIn(server, { username: "val", password: "a new password 1" })).cookies.size).toBeGreaterThan(0);
    expect((await new Agent(server).login("val", "val password 1")).status).toBe(401);
  });

  test("guesses of the current password are limited like failed sign-ins", async () => {
    const limited = await startTestApp({ "rate-limit-login": "3/m" });
    try {
      await limited.services.accounts.createUser(person("gus"), "member");
      const gus = await signedIn(limited, person("gus"));
      const change = (current: string) =>
        form(gus, "/settings/account/password", { current, password: "gus password 2", confirm: "gus password 2" });
      for (const guess of ["guess one", "guess two", "guess three"]) expect((await change(guess)).status).toBe(422);
      expect((await change("gus password 1")).status).toBe(429);
      expect((await change("guess four")).status).toBe(429);
    } finally {
      await limited.close();
    }
  });

  test("without JavaScript the form posts as a page and comes back as one", async () => {
    const agent = await signedIn(server, OWNER);
    const res = await form(
      agent,
      "/settings/account/password",
      { current: "nope nope", password: "x", confirm: "y" },
      false,
    );
    expect(res.status).toBe(422);
    const page = await res.text();
    expect(page).toContain("<h1>Settings</h1>");
    expect(page).toContain('aria-invalid="true"');
  });
});

describe("the audit trail", () => {
  let server: TestServer;
  let owner: Agent;
  beforeAll(async () => {
    // outbound-allow: its integrations point at a closed port on this machine.
    server = await startTestServer({ "trust-proxy": "127.0.0.1", "outbound-allow": "127.0.0.1" });
  });
  afterAll(() => server.close());

  const entries = () => server.services.audit.list();
  const viaProxy = (ip: string) => ({ "X-Forwarded-For": ip });

  test("the owner's creation and every sign-in, success or failure, with the client's address as the server sees it", async () => {
    const code = (await server.services.accounts.setupCode())!;
    const setup = new Agent(server.url);
    const formToken = await setup.formToken(`/setup?code=${code}`);
    await setup.request("/setup", {
      method: "POST",
      headers: viaProxy("198.51.100.7"),
      form: { _form: formToken, code, ...OWNER },
    });
    const login = async (password: string, ip: string) => {
      const agent = new Agent(server.url);
      const token = await agent.formToken("/login");
      await agent.request("/login", {
        method: "POST",
        headers: viaProxy(ip),
        form: { _form: token, username: "owner", password, next: "/" },
      });
      return agent;
    };
    await login("wrong password", "203.0.113.9");
    owner = await login(OWNER.password, "203.0.113.10");
    const [ok, failed, created] = await entries();
    expect(created).toMatchObject({
      action: "owner.created",
      actor: "owner",
      ip: "198.51.100.7",
      subject: "user owner",
    });
    expect(failed).toMatchObject({
      action: "sign_in.failed",
      actor: "owner",
      ip: "203.0.113.9",
      detail: "wrong password",
      method: "password",
    });
    expect(ok).toMatchObject({ action: "sign_in.succeeded", actor: "owner", ip: "203.0.113.10", method: "password" });
  });

  test("each is also a line of the log at the info level", async () => {
    const lines: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string) => (lines.push(String(chunk)), true)) as typeof process.stderr.write;
    setLogLevel("info");
    try {
      await server.services.accounts.login("nobody", "whatever it is", "192.0.2.4");
    } finally {
      setLogLevel("silent");
      process.stderr.write = write;
    }
    const line = lines.map((l) => JSON.parse(l)).find((l) => l.msg === "audit: sign_in.failed");
    expect(line).toMatchObject({
      level: "info",
      actor: "nobody",
      ip: "192.0.2.4",
      subject: "user nobody",
      detail: "no such user",
    });
  });

  test("tokens, members, deleted projects, retention, integrations and alert rules: who, what and from where", async () => {
    const since = (await entries())[0]!.id;
    const csrf = await owner.csrf();
    const send = (path: string, fields: Record<string, string>) =>
      owner.request(path, {
        method: "POST",
        headers: { "HX-Request": "true", ...viaProxy("203.0.113.20") },
        form: { _csrf: csrf, ...fields },
      });
    await send("/settings/api/tokens", { name: "deploys", kind: "full" });
    const token = (await server.services.tokens.list()).find((t) => t.name === "deploys")!;
    await send(`/settings/api/tokens/${token.id}/revoke`, {});
    await send("/settings/members", { username: "mia", password: "mia password 1", role: "member", reach: "all" });
    const mia = (await server.services.accounts.list()).find((u) => u.username === "mia")!;
    await send(`/settings/members/${mia.id}`, { role: "viewer", reach: "all" });
    await send(`/settings/members/${mia.id}/remove`, {});
    await server.services.projects.create("temp");
    await send("/p/temp/retention", { days: "30" });
    await send("/p/temp/delete", {});
    await send("/settings/integrations", {
      project: "default",
      kind: "webhook",
      name: "hook",
      "webhook.url": "http://127.0.0.1:9/hook",
    });
    const hook = (await server.services.integrations.list("default"))[0]!;
    await owner.request(`/settings/integrations/${hook.id}/toggle?project=default`, {
      method: "POST",
      headers: { "HX-Request": "true", ...viaProxy("203.0.113.20") },
      form: { _csrf: csrf },
    });
    await owner.request(`/settings/integrations/${hook.id}/delete?project=default`, {
      method: "POST",
      headers: { "HX-Request": "true", ...viaProxy("203.0.113.20") },
      form: { _csrf: csrf },
    });
    // Through the API, the token is who.
    const api = (await server.services.tokens.create({ name: "ops bot" })).token;
    const rule = await post(
      server,
      "/v1/alerts",
      { project: "default", name: "Backups", kind: "absence", period: 3600 },
      api,
    );
    await fetch(`${server.url}/v1/alerts/${rule.json.alert.id}`, {
      method: "PATCH",
      headers: { Authorization: `Bearer ${api}`, "Content-Type": "application/json", ...viaProxy("203.0.113.30") },
      body: JSON.stringify({ paused: true }),
    });
    await fetch(`${server.url}/v1/alerts/${rule.json.alert.id}`, {
      method: "DELETE",
      headers: { Authorization: `Bearer ${api}`, ...viaProxy("203.0.113.30") },
    });
    const made = await fetch(`${server.url}/v1/integrations`, {
      method: "POST",
      headers: { Authorization: `Bearer ${api}`, "Content-Type": "application/json", ...viaProxy("203.0.113.30") },
      body: JSON.stringify({
        project: "default",
        kind: "webhook",
        name: "ci",
        config: { url: "http://127.0.0.1:9/ci" },
      }),
    });
    const ci = ((await made.json()) as { integration: { id: number } }).integration.id;
    await fetch(`${server.url}/v1/integrations/${ci}`, {
      method: "PATCH",
      headers: { Authorization: `Bearer ${api}`, "Content-Type": "application/json", ...viaProxy("203.0.113.30") },
      body: JSON.stringify({ name: "deploys", filter: { min_priority: 4 } }),
    });

    const trail = (await entries()).reverse().filter((e) => e.id > since);
    expect(trail.map((e) => [e.action, e.actor, e.subject, e.detail])).toEqual([
      ["token.created", "owner", `token “deploys” (${token.prefix}…)`, "full access"],
      ["token.revoked", "owner", `token “deploys” (${token.prefix}…)`, "full access"],
      ["member.added", "owner", "user mia", "role member; every project"],
      ["member.changed", "owner", "user mia", "role member → viewer"],
      ["member.removed", "owner", "user mia", "role viewer; 0 tokens revoked, 0 integrations turned off"],
      ["project.retention", "owner", "project temp", "forever → 30 days"],
      ["project.deleted", "owner", "project temp", "0 events deleted with it"],
      ["integration.created", "owner", `integration “hook” (${hook.id}) of default`, "webhook"],
      ["integration.changed", "owner", `integration “hook” (${hook.id}) of default`, "turned off"],
      ["integration.deleted", "owner", `integration “hook” (${hook.id}) of default`, "webhook"],
      ["token.created", "command line", expect.stringContaining("ops bot"), "full access"],
      ["alert.created", "token “ops bot”", `alert rule “Backups” (${rule.json.alert.id}) of default`, "absence"],
      ["alert.changed", "token “ops bot”", `alert rule “Backups” (${rule.json.alert.id}) of default`, "paused"],
      ["alert.deleted", "token “ops bot”", `alert rule “Backups” (${rule.json.alert.id}) of default`, null],
      ["integration.created", "token “ops bot”", `integration “ci” (${ci}) of default`, "webhook"],
      ["integration.changed", "token “ops bot”", `integration “deploys” (${ci}) of default`, "name, filter"],
    ]);
    expect(new Set(trail.filter((e) => e.actor === "owner").map((e) => e.ip))).toEqual(new Set(["203.0.113.20"]));
    expect(trail.at(-1)!.ip).toBe("203.0.113.30");
  });

  test("Settings → Audit shows it to the owner only", async () => {
    const page = await (await owner.request("/settings/audit")).text();
    expect(page).toContain("Sign-in failed");
    expect(page).toContain("203.0.113.9");
    expect(page).toContain("Alert rule deleted");
    await server.services.accounts.createUser(person("adam"), "admin");
    const adam = await signedIn(server, person("adam"));
    expect((await adam.request("/settings/audit")).status).toBe(403);
  });

  test("housekeeping keeps the newest 10,000", async () => {
    const before = (await entries())[0]!;
    await server.store.tx(async (tx) => {
      for (let i = 0; i < 10_005; i++)
        await tx.audit.record({
          at: Date.now(),
          action: "sign_in.failed",
          actor: `bulk ${i}`,
          actorUserId: null,
          ip: null,
          subject: "user bulk",
          detail: null,
          method: "password",
        });
    });
    // The server's own housekeeping runs on the test's clock, so only when the test moves it on:
    // it cannot race this run (on PostgreSQL it did, 30 s after the start, on a busy machine).
    await server.services.housekeep();
    const all = await server.store.audit.list({ limit: 20_000 });
    expect(all.length).toBe(10_000);
    expect(all.at(-1)!.actor).toBe("bulk 5");
    expect(all.some((e) => e.id === before.id)).toBe(false);
  });
});

describe("API tokens", () => {
  let server: TestServer;
  let owner: Agent;
  let dir: string;
  beforeAll(async () => {
    // A server whose BASE_URL is where it listens, so the examples it shows can be run as they are.
    const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
    const port = probe.port;
    probe.stop(true);
    server = await startTestServer({ port: String(port), "base-url": `http://127.0.0.1:${port}` });
    await server.services.accounts.createUser(OWNER, "owner");
    owner = await signedIn(server, OWNER);
    dir = mkdtempSync(join(import.meta.dir, ".snippet-"));
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await server.close();
  });

  test("a name already used by a live token is refused, with a message; a revoked one's name is free again", async () => {
    expect((await form(owner, "/settings/api/tokens", { name: "laptop", kind: "full" })).status).toBe(200);
    const again = await form(owner, "/settings/api/tokens", { name: "laptop", kind: "full" });
    expect(again.status).toBe(422);
    expect(unescape(await again.text())).toContain('A token named "laptop" already exists');
    expect((await server.services.tokens.list()).filter((t) => t.name === "laptop").length).toBe(1);
    await server.services.tokens.revoke("laptop");
    expect(
      (await form(owner, "/settings/api/tokens", { name: "laptop", kind: "public", project: "default" })).status,
    ).toBe(200);
  });

  test("tokens made at once with one name: one is made", async () => {
    const tries = await Promise.allSettled(
      Array.from({ length: 6 }, () => server.services.tokens.create({ name: "racer" })),
    );
    expect(tries.filter((t) => t.status === "fulfilled").length).toBe(1);
    expect((await server.services.tokens.list()).filter((t) => t.name === "racer").length).toBe(1);
  });

  test("tokens that already share a name are left as they are; revoking by that name asks for the id", async () => {
    const row = (await server.services.tokens.create({ name: "twin" })).info;
    await server.store.tokens.insert({
      name: "twin",
      kind: "full",
      projectId: null,
      channel: null,
      prefix: "sb_TWIN0000",
      hash: "0".repeat(64),
      mayNotify: false,
      createdBy: null,
      createdByUserId: null,
      createdAt: Date.now(),
      projectIds: null,
    });
    expect((await server.services.tokens.list()).filter((t) => t.name === "twin").length).toBe(2);
    await expect(server.services.tokens.revoke("twin")).rejects.toThrow(/matches 2 tokens/);
    await server.services.tokens.revoke(String(row.id));
  });

  test("once made, the page shows a curl command and LogSnag's Node.js client set up for this server, and both work as pasted", async () => {
    const html = await (await form(owner, "/settings/api/tokens", { name: "paste me", kind: "full" })).text();
    const token = /value="(sb_\w+)"/.exec(html)![1]!;
    const snippet = (id: string) => unescape(new RegExp(`data-testid="${id}"[^>]*>([\\s\\S]*?)</pre>`).exec(html)![1]!);
    const curl = snippet("snippet-curl");
    expect(curl).toContain(`${server.services.config.baseUrl}/v1/log`);
    expect(curl).toContain(`Bearer ${token}`);
    // Run as processes of their own, as a person would (the server answers from this one).
    const ran = Bun.spawn(["sh", "-c", curl], { stdout: "pipe", stderr: "pipe" });
    expect(JSON.parse(await new Response(ran.stdout).text())).toMatchObject({
      success: true,
      event: "Hello from curl",
      project: "default",
    });
    const sdk = snippet("snippet-sdk");
    expect(sdk).toContain('from "@logsnag/node"');
    expect(sdk).toContain(token);
    writeFileSync(join(dir, "send.mjs"), sdk);
    const node = Bun.spawn([process.execPath, join(dir, "send.mjs")], { cwd: dir, stderr: "pipe" });
    expect(await new Response(node.stderr).text()).toBe("");
    expect(await node.exited).toBe(0);
    await eventually(async () =>
      expect(
        (await server.services.feed.listEvents({ project: "default", q: "Hello" })).events.map((e) => e.name).sort(),
      ).toEqual(["Hello from Node.js", "Hello from curl"]),
    );
  });

  test("a public token's examples send to its project and channel", async () => {
    await server.services.projects.create("site");
    const html = unescape(
      await (
        await form(owner, "/settings/api/tokens", {
          name: "site page",
          kind: "public",
          project: "site",
          channel: "signups",
        })
      ).text(),
    );
    expect(html).toContain('"project":"site","channel":"signups"');
    expect(html).toContain('project: "site"');
  });
});
