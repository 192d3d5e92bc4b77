// The browser tracker (/web/ls.js) in real Chromium, loaded by a site on another origin under a
// strict Content-Security-Policy, as LogSnag's users place it: the queue before it loads, setUserId,
// track and identify, a data-event click on a link that leaves the page, page views in a
// history-routed app, nothing sent before setConfig, and a revoked or wrong-project token (nothing
// thrown into the page, the error in the console with setDebug). What arrived is checked through
// the API with a full token. withPage fails a test on any page error or CSP violation.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { type Agent, call, eventually, signedIn, startTestServer, type TestServer } from "../helpers.ts";
import { CHROMIUM, describeBrowser, launch, OWNER, withPage } from "./browser.ts";
import { type HostSite, html, startHostSite, startSlowProxy, strictCsp } from "./host-site.ts";

let browser: Browser;
let server: TestServer;
let site: HostSite;
let owner: Agent;
let token: string; // public, project shop, may notify (LogSnag's browser examples send notify: true)
let revoked: string;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) return;
  browser = await launch();
  server = await startTestServer();
  await server.services.projects.create("shop");
  await server.services.projects.create("other");
  await server.services.accounts.createUser(OWNER, "owner");
  owner = await signedIn(server, OWNER);
  token = (await server.services.tokens.create({ name: "site", kind: "public", project: "shop", mayNotify: true }))
    .token;
  const gone = await server.services.tokens.create({ name: "old site", kind: "public", project: "shop" });
  await server.services.tokens.revoke(String(gone.info.id));
  revoked = gone.token;
  site = startHostSite(server.url);
  site.set("/site.css", "* { font-family: serif; } a, button { color: rgb(255, 0, 0); }");
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
  await server?.close();
});

type Event = {
  id: number;
  channel: string;
  event: string;
  description: string | null;
  icon: string | null;
  notify: boolean;
  tags: Record<string, unknown>;
  user_id: string | null;
};

async function events(query: string): Promise<Event[]> {
  const res = await call(server, { path: `/v1/events?project=shop&limit=200&${query}` });
  if (res.status === 404 && /channel/i.test(res.json.message)) return []; // no event made the channel yet
  expect(res.status).toBe(200);
  return (res.json.events as Event[]).sort((a, b) => a.id - b.id);
}

/** Waits until the events `query` finds are `count`, and returns them oldest first. */
const arrived = (query: string, count: number) =>
  eventually(async () => {
    const found = await events(query);
    if (found.length !== count)
      throw new Error(
        `${found.length} events for ${query}, expected ${count}: ${JSON.stringify(found.map((e) => e.event))}`,
      );
    return found;
  });

/** LogSnag's snippet, in a file of the site (a strict CSP allows no inline script), then `calls`. */
const snippet = (calls: string) =>
  `window.lsq = window.lsq || [];\nwindow.ls = window.ls || ((...args) => window.lsq.push(args));\n${calls}`;
const tracker = () => `<script async src="${server.url}/web/ls.js"></script>`;
const loaded = (page: Page) => page.waitForFunction(() => (window as any).ls?.signalboard === true);

/** The tracker's own console lines, and every request the page made to Signalboard. */
function watch(page: Page) {
  const lines: string[] = [];
  const requests: { method: string; path: string; cookie: string | undefined }[] = [];
  page.on("console", (m) => m.text().startsWith("[Signalboard]") && lines.push(`${m.type()}: ${m.text()}`));
  page.on(
    "request",
    (r) =>
      r.url().startsWith(server.url) &&
      requests.push({ method: r.method(), path: new URL(r.url()).pathname, cookie: r.headers().cookie }),
  );
  return { lines, requests };
}

describeBrowser("the tracker on a site of another origin, under a strict CSP", () => {
  test("the queue left before it loads, setUserId, track and identify, a page view; no cookie", async () => {
    site.set(
      "/queue.js",
      snippet(`window.ls("setDebug");
window.ls("setConfig", ${JSON.stringify(token)}, "shop");
window.ls("setUserId", "user-42");
window.ls("track", { channel: "app", event: "Queued before load", icon: ":rocket:", tags: { plan: "pro", seats: 3 } });
window.ls("identify", { properties: { plan: "pro", seats: 3 } });
window.queuedBeforeLoad = !window.ls.signalboard;`),
    );
    site.set("/queue", html(`<script src="/queue.js"></script>${tracker()}`, "<h1>Shop</h1>"));
    await withPage(browser, "tracker-queue", async (page, context) => {
      const seen = watch(page);
      await page.goto(`${site.origin}/queue`);
      await loaded(page);
      expect(await page.evaluate(() => (window as any).queuedBeforeLoad)).toBe(true);
      // After load, window.ls is the tracker itself; user_id defaults to the one set.
      await page.evaluate(() =>
        (window as any).ls("track", {
          channel: "payments",
          event: "New subscription",
          icon: "💰",
          notify: true,
          tags: { plan: "premium", trial: false },
        }),
      );
      await page.evaluate(() =>
        (window as any).ls("track", { channel: "payments", event: "Gift", user_id: "someone-else" }),
      );

      const mine = await arrived("user_id=user-42", 3);
      expect(mine.map((e) => `${e.channel} ${e.event}`).sort()).toEqual([
        "app Queued before load",
        "pageviews /queue",
        "payments New subscription",
      ]);
      expect(mine.find((e) => e.event === "Queued before load")).toMatchObject({
        icon: "🚀",
        tags: { plan: "pro", seats: 3 },
      });
      expect(mine.find((e) => e.event === "New subscription")).toMatchObject({
        icon: "💰",
        notify: true,
        tags: { plan: "premium", trial: false },
      });
      expect(mine.find((e) => e.channel === "pageviews")).toMatchObject({
        event: "/queue",
        description: "Host site",
        tags: {},
      });
      expect((await arrived("user_id=someone-else", 1))[0]!.event).toBe("Gift");
      // identify: the profile, on the user's page in the dashboard, beside the journey that holds the page view.
      const journey = await eventually(async () => {
        const text = await (await owner.request("/p/shop/users/user-42")).text();
        if (!text.includes("<dt>seats</dt>")) throw new Error("no properties yet");
        return text;
      });
      expect(journey).toContain("<dt>plan</dt><dd>pro</dd>");
      expect(journey).toContain("<dt>seats</dt><dd>3</dd>");
      expect(journey).toContain(">/queue<");

      expect(seen.lines.some((l) => l.startsWith("log: [Signalboard] POST /v1/log"))).toBe(true);
      expect(
        seen.requests
          .filter((r) => r.method === "POST")
          .map((r) => r.path)
          .sort(),
      ).toEqual(["/v1/identify", "/v1/log", "/v1/log", "/v1/log", "/v1/page"]);
      expect(seen.requests.every((r) => r.cookie === undefined)).toBe(true);
      expect(await context.cookies()).toEqual([]);
      expect(await page.evaluate(() => document.cookie)).toBe("");
    });
  });

  test("a data-event click on a link that leaves the page still arrives, over a slow network; elements added later are tracked too", async () => {
    // Signalboard reached through a slow network: requests go to the origin the script came from.
    const slow = startSlowProxy(server.url, 1000);
    site.set(
      "/links.js",
      snippet(`window.ls("setConfig", ${JSON.stringify(token)}, "shop");\nwindow.ls("setUserId", "user-7");`),
    );
    site.set(
      "/links",
      html(
        `<script src="/links.js"></script><script async src="${slow.origin}/web/ls.js"></script>`,
        `<a id="upgrade" href="/bye" data-event="Upgraded plan" data-channel="billing" data-icon=":moneybag:" data-description="From the pricing table"
            data-tag-plan="Pro" data-tag-trial="false" data-tag-annual="true" data-tag-price="9.99" data-tag-seat_count="3">Upgrade <strong>to Pro</strong></a>
         <button id="menu" data-event="Opened menu" data-user-id="menu-user">Menu</button>`,
      ),
      { csp: strictCsp(slow.origin) },
    );
    site.set("/bye", html("", "<p>Thanks for upgrading</p>"));
    await withPage(browser, "tracker-click-away", async (page) => {
      await page.goto(`${site.origin}/links`);
      await loaded(page);
      await arrived("user_id=user-7&channel=pageviews", 1);
      // A button without data-channel goes to the default channel; data-user-id overrides setUserId.
      await page.click("#menu");
      // Added after the tracker loaded, clicked on a child element.
      await page.evaluate(() => {
        const later = document.createElement("div");
        later.setAttribute("data-event", "Added later");
        later.setAttribute("data-tag-source", "js");
        later.append(Object.assign(document.createElement("span"), { id: "later", textContent: "Later" }));
        document.body.append(later);
      });
      await page.click("#later");
      // The click on the inner <strong> starts the navigation at once: only keepalive lets the event through.
      await page.click("#upgrade strong");
      await page.waitForURL(`${site.origin}/bye`);
      await page.getByText("Thanks for upgrading").waitFor();
      // Waited for here: closing the browser would end the requests it still carries for the page it left.
      await arrived("channel=billing", 1);
      await arrived("channel=clicks", 2);
    });
    await slow.close();
    const [upgraded] = await arrived("channel=billing", 1);
    expect(upgraded).toMatchObject({
      event: "Upgraded plan",
      icon: "💰",
      description: "From the pricing table",
      user_id: "user-7",
      notify: false,
    });
    // "true"/"false" become booleans, numbers stay text, names are lowercased with "_" made "-".
    expect(upgraded!.tags).toEqual({ plan: "Pro", trial: false, annual: true, price: "9.99", "seat-count": "3" });
    expect(slow.dropped).toEqual([]);
    const clicks = await arrived("channel=clicks", 2);
    expect(clicks.map((e) => [e.event, e.user_id, e.tags])).toEqual([
      ["Opened menu", "menu-user", {}],
      ["Added later", "user-7", { source: "js" }],
    ]);
  });

  test("page views in a history-routed app: none before setUserId, one per path, the first one's referrer host", async () => {
    site.set("/app.js", snippet(`window.ls("setConfig", ${JSON.stringify(token)}, "shop");`));
    // The site's router: links move with pushState and set the title, as single-page apps do.
    site.set(
      "/router.js",
      `document.addEventListener("click", (event) => {
  const link = event.target.closest("a[data-route]");
  if (!link) return;
  event.preventDefault();
  history.pushState({}, "", link.getAttribute("href"));
  document.title = link.textContent;
});
addEventListener("popstate", () => (document.title = location.pathname === "/app/docs" ? "Docs" : "Pricing"));`,
    );
    site.set(
      "/app/",
      html(
        `<script src="/app.js"></script><script src="/router.js"></script>${tracker()}`,
        `<nav><a data-route href="/app/pricing">Pricing</a> <a data-route href="/app/docs">Docs</a></nav>`,
      ),
    );
    await withPage(browser, "tracker-history", async (page) => {
      const seen = watch(page);
      await page.goto(`${site.origin}/app/home`, { referer: "https://news.example.com/item?id=7" });
      await loaded(page);
      await page.click("text=Pricing");
      await page.waitForURL(`${site.origin}/app/pricing`);
      await Bun.sleep(100);
      expect(seen.requests.filter((r) => r.path === "/v1/page")).toEqual([]);
      await page.evaluate(() => (window as any).ls("setUserId", "user-spa")); // signs in on /app/pricing
      await arrived("user_id=user-spa", 1);
      await page.click("text=Docs");
      await arrived("user_id=user-spa", 2);
      // Another query on the same path is the same page.
      await page.evaluate(() => history.replaceState({}, "", "/app/docs?tab=2"));
      await page.goBack(); // popstate, back to /app/pricing
      await arrived("user_id=user-spa", 3);
      // Signed out: no more page views.
      await page.evaluate(() => (window as any).ls("clearUserId"));
      await page.goForward();
      await page.click("text=Pricing");
      await Bun.sleep(200);
    });
    const views = await arrived("user_id=user-spa", 3);
    expect(views.map((e) => [e.channel, e.event, e.description, e.tags.referrer])).toEqual([
      ["pageviews", "/app/pricing", "Pricing", "news.example.com"],
      ["pageviews", "/app/docs", "Docs", new URL(site.origin).host],
      ["pageviews", "/app/pricing", "Pricing", new URL(site.origin).host],
    ]);
    expect(await events("channel=pageviews&q=home")).toEqual([]);
  });

  test("nothing is sent before setConfig; what was asked meanwhile goes once it comes", async () => {
    site.set(
      "/late.js",
      snippet(`window.ls("setUserId", "user-late");\nwindow.ls("track", { channel: "app", event: "Before config" });`),
    );
    site.set("/late", html(`<script src="/late.js"></script>${tracker()}`, "<p>Late</p>"));
    await withPage(browser, "tracker-late-config", async (page) => {
      const seen = watch(page);
      await page.goto(`${site.origin}/late`);
      await loaded(page);
      await page.evaluate(() => (window as any).ls("identify", { properties: { early: true } }));
      await Bun.sleep(300);
      expect(seen.requests.filter((r) => r.path.startsWith("/v1/"))).toEqual([]);
      await page.evaluate((t) => (window as any).ls("setConfig", t, "shop"), token);
      const sent = await arrived("user_id=user-late", 2);
      expect(sent.map((e) => `${e.channel} ${e.event}`).sort()).toEqual(["app Before config", "pageviews /late"]);
    });
  });

  test("a call that cannot be sent (a value JSON cannot hold) while waiting for setConfig loses only itself", async () => {
    site.set(
      "/odd.js",
      snippet(`window.ls("setUserId", "user-odd");
window.ls("track", { channel: "app", event: "Unsendable", tags: { big: 10n } });
window.ls("track", { channel: "app", event: "Sendable" });`),
    );
    site.set("/odd", html(`<script src="/odd.js"></script>${tracker()}`, "<p>Odd</p>"));
    await withPage(browser, "tracker-odd-held", async (page) => {
      await page.goto(`${site.origin}/odd`);
      await loaded(page);
      await page.evaluate((t) => (window as any).ls("setConfig", t, "shop"), token);
      const sent = await arrived("user_id=user-odd", 2);
      expect(sent.map((e) => `${e.channel} ${e.event}`).sort()).toEqual(["app Sendable", "pageviews /odd"]);
    });
  });

  test("a revoked or wrong-project token: nothing thrown into the page, the error in the console with setDebug", async () => {
    const page = (name: string, t: string, project: string, debug: boolean) => {
      site.set(
        `/${name}.js`,
        snippet(`${debug ? 'window.ls("setDebug", true);\n' : ""}window.ls("setConfig", ${JSON.stringify(t)}, ${JSON.stringify(project)});
window.ls("setUserId", "user-${name}");
window.ls("track", { channel: "app", event: "Refused" });`),
      );
      site.set(`/${name}`, html(`<script src="/${name}.js"></script>${tracker()}`, `<p>${name}</p>`));
    };
    page("revoked", revoked, "shop", true);
    page("elsewhere", token, "other", true);
    page("quiet", revoked, "shop", false);
    const consoleOf = async (name: string, expected: number) => {
      let lines: string[] = [];
      await withPage(browser, `tracker-${name}`, async (p) => {
        lines = watch(p).lines;
        await p.goto(`${site.origin}/${name}`);
        await loaded(p);
        // Odd calls a page may make: none of them throws.
        await p.evaluate(() => {
          const ls = (window as any).ls;
          ls();
          ls("noSuchCommand");
          ls("track", null);
          ls("identify", { properties: { a: 1 } });
          ls("setConfig", 42);
        });
        if (expected)
          await eventually(() =>
            expect(lines.filter((l) => l.includes("answered")).length).toBeGreaterThanOrEqual(expected),
          );
        else await Bun.sleep(500);
      });
      return lines;
    };
    const revokedLines = await consoleOf("revoked", 2);
    expect(
      revokedLines.some((l) => l.startsWith("error: [Signalboard] /v1/log answered 401: This token was revoked")),
    ).toBe(true);
    expect(
      revokedLines.some((l) => l.startsWith("error: [Signalboard] /v1/page answered 401: This token was revoked")),
    ).toBe(true);
    expect(revokedLines.some((l) => l.includes('unknown command "noSuchCommand"'))).toBe(true);
    const elsewhere = await consoleOf("elsewhere", 2);
    expect(
      elsewhere.some((l) =>
        l.startsWith(
          'error: [Signalboard] /v1/log answered 403: This public token may only send to project "shop", not "other"',
        ),
      ),
    ).toBe(true);
    expect(await consoleOf("quiet", 0)).toEqual([]);
    expect(await events("q=refused")).toEqual([]);
  });
});
