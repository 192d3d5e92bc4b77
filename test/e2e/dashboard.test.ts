// The dashboard in a real browser, as a user sees it: set-up, sign-in, projects and channels, the
// live feed (SSE), search, tokens, members, hostile event content, small screens and the keyboard.
// Every test runs against a real server on an ephemeral port with its own data directory.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { startTestServer, type TestServer } from "../helpers.ts";
import {
  CHROMIUM,
  describeBrowser,
  launch,
  ok,
  OWNER,
  path,
  sendEvent,
  sendMetric,
  serverPool,
  signIn,
  STEP_TIMEOUT,
  watchProblems,
  withPage,
} from "./browser.ts";

let browser: Browser;
beforeAll(async () => {
  if (existsSync(CHROMIUM)) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

/** Event names in the feed, top to bottom. */
const feedNames = (page: Page) =>
  page.$$eval("#events > li.event .event-name", (els) => els.map((el) => el.textContent ?? ""));

/** Waits until the first event of the feed has this name. */
async function waitForFeedTop(page: Page, name: string, timeout = STEP_TIMEOUT): Promise<void> {
  await page.waitForFunction((n) => document.querySelector("#events > li.event .event-name")?.textContent === n, name, {
    timeout,
  });
}

/** Waits until an event with this name is in the feed. */
async function waitForEvent(page: Page, name: string, timeout = STEP_TIMEOUT): Promise<void> {
  await page.waitForFunction(
    (n) => [...document.querySelectorAll("#events .event-name")].some((el) => el.textContent === n),
    name,
    { timeout },
  );
}

async function openFeed(page: Page, server: TestServer, at = "/p/default"): Promise<void> {
  await page.goto(server.url + at);
  await page.waitForSelector(".live-status.live", { timeout: STEP_TIMEOUT });
}

/** A variable set on the page: still there later means the page was not reloaded. */
const markPage = (page: Page) => page.evaluate(() => ((window as any).__notReloaded = true));
const stillSamePage = (page: Page) => page.evaluate(() => (window as any).__notReloaded === true);

// ---------------------------------------------------------------------------------------------

describeBrowser("set-up of the owner", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  test("the set-up link with its one-time code creates the owner and signs them in; the link then stops working", async () => {
    const server = pool.track(await startTestServer());
    const code = await server.services.accounts.setupCode();
    expect(code).toBeTruthy();
    await withPage(browser, "setup-with-code", async (page, context) => {
      await page.goto(server.url + "/");
      expect(path(page)).toBe("/setup");
      await page.getByRole("heading", { name: "Set-up code needed" }).waitFor({ timeout: STEP_TIMEOUT });
      expect(await page.locator("#username").count()).toBe(0);

      const wrong = await page.goto(`${server.url}/setup?code=WRONG`);
      expect(wrong?.status()).toBe(403);
      await page.getByRole("heading", { name: "Set-up code needed" }).waitFor({ timeout: STEP_TIMEOUT });
      expect(await page.locator("form[action='/setup']").count()).toBe(0);

      await page.goto(`${server.url}/setup?code=${code}`);
      await page.getByRole("heading", { name: "Welcome to Signalboard" }).waitFor({ timeout: STEP_TIMEOUT });
      await page.fill("#username", "founder");
      await page.fill("#password", "a long enough password");
      await page.click("form button[type=submit]");
      await page.waitForURL((url) => url.pathname === "/p/default", { timeout: STEP_TIMEOUT });
      expect(await page.locator("h1").textContent()).toBe("default");
      expect(await page.getByRole("button", { name: /Sign out/ }).textContent()).toContain("founder");

      // Used once: signed out, the same link now leads to the sign-in page.
      await context.clearCookies();
      await page.goto(`${server.url}/setup?code=${code}`);
      expect(path(page)).toBe("/login");
      await page.getByRole("heading", { name: "Sign in" }).waitFor({ timeout: STEP_TIMEOUT });
      expect(await server.services.accounts.needsSetup()).toBe(false);
    });
  });
});

describeBrowser("sign-in and sign-out", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  test("a wrong password is refused, the right one signs in; sign out; sign-in returns to the page you wanted", async () => {
    const server = await pool.withOwner();
    await withPage(browser, "login-logout", async (page) => {
      await page.goto(server.url + "/login");
      await page.fill("#username", OWNER.username);
      await page.fill("#password", "not the password");
      await page.click("form button[type=submit]");
      await page.locator(".alert", { hasText: "Wrong username or password." }).waitFor({ timeout: STEP_TIMEOUT });
      expect(path(page)).toBe("/login");
      expect(await page.inputValue("#username")).toBe(OWNER.username);

      await page.fill("#password", OWNER.password);
      await page.click("form button[type=submit]");
      await page.waitForURL((url) => url.pathname === "/p/default", { timeout: STEP_TIMEOUT });
      expect(await page.locator("h1").textContent()).toBe("default");

      await page.getByRole("button", { name: /Sign out/ }).click();
      await page.waitForURL((url) => url.pathname === "/login", { timeout: STEP_TIMEOUT });
      await page.getByRole("heading", { name: "Sign in" }).waitFor({ timeout: STEP_TIMEOUT });

      await page.goto(server.url + "/p/default");
      expect(path(page)).toBe("/login");
      expect(new URL(page.url()).searchParams.get("next")).toBe("/p/default");

      // A page other than the landing page, so coming back to it is visible.
      await page.goto(`${server.url}/p/default?q=${encodeURIComponent("plan:pro")}`);
      expect(new URL(page.url()).searchParams.get("next")).toBe("/p/default?q=plan%3Apro");
      await page.fill("#username", OWNER.username);
      await page.fill("#password", OWNER.password);
      await page.click("form button[type=submit]");
      await page.waitForURL((url) => url.pathname === "/p/default" && url.searchParams.get("q") === "plan:pro", {
        timeout: STEP_TIMEOUT,
      });
      expect(await page.inputValue("#q")).toBe("plan:pro");
    });
  });
});

describeBrowser("projects and channels", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  test("the sidebar + creates a project: the name is checked as you type, a taken name is refused", async () => {
    const server = await pool.withOwner();
    await withPage(browser, "create-project", async (page) => {
      await signIn(page, server);
      await page.goto(server.url + "/p/default");
      await page.click("[data-testid=new-project]");
      const input = page.locator("#new-project-name");
      // The cursor goes into the form on the tick after it shows: wait for it, as a user would.
      await page.waitForFunction(() => document.activeElement?.id === "new-project-name", null, {
        timeout: STEP_TIMEOUT,
      });

      await input.pressSequentially("Bad Name", { delay: 20 });
      await page
        .locator("#new-project-name-hint.hint.error", { hasText: "lowercase letters, digits or dashes" })
        .waitFor({ timeout: STEP_TIMEOUT });

      await input.fill("");
      await input.pressSequentially("reports", { delay: 20 });
      await page
        .locator("#new-project-name-hint.hint.ok", { hasText: "“reports” is available." })
        .waitFor({ timeout: STEP_TIMEOUT });
      await input.press("Enter");
      await page.waitForURL((url) => url.pathname === "/p/reports", { timeout: STEP_TIMEOUT });
      expect(await page.locator("h1").textContent()).toBe("reports");
      await page
        .locator("#project-list a[href='/p/reports']", { hasText: "reports" })
        .waitFor({ timeout: STEP_TIMEOUT });

      // Again with the same name: the hint says so, and submitting anyway is refused.
      await page.click("[data-testid=new-project]");
      await page.waitForFunction(() => document.activeElement?.id === "new-project-name", null, {
        timeout: STEP_TIMEOUT,
      });
      await input.pressSequentially("reports", { delay: 20 });
      await page
        .locator("#new-project-name-hint.hint.error", { hasText: "already exists" })
        .waitFor({ timeout: STEP_TIMEOUT });
      const [refused] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith("/projects") && r.request().method() === "POST", {
          timeout: STEP_TIMEOUT,
        }),
        page.locator("form.name-form:has(#new-project-name) button[type=submit]").click(),
      ]);
      expect(refused.status()).toBe(422);
      await page
        .locator("#new-project-name-hint.hint.error", { hasText: "A project named “reports” already exists." })
        .waitFor({ timeout: STEP_TIMEOUT });
      expect(path(page)).toBe("/p/reports");
      expect(await page.locator("#project-list a", { hasText: "reports" }).count()).toBe(1);
    });
  });

  test("the channel + creates a channel and opens it", async () => {
    const server = await pool.withOwner();
    await withPage(browser, "create-channel", async (page) => {
      await signIn(page, server);
      await page.goto(server.url + "/p/default");
      expect(await page.locator("#channel-list li").count()).toBe(0);
      await page.click("[data-testid=new-channel]");
      const input = page.locator("#new-channel-name");
      await input.waitFor({ state: "visible", timeout: STEP_TIMEOUT });
      await input.pressSequentially("backups", { delay: 20 });
      await page.locator("#new-channel-name-hint.hint.ok", { hasText: "available" }).waitFor({ timeout: STEP_TIMEOUT });
      await page.locator("form.name-form:has(#new-channel-name) button[type=submit]").click();
      await page.waitForURL((url) => url.pathname === "/p/default/c/backups", { timeout: STEP_TIMEOUT });
      expect(await page.locator("h1").textContent()).toBe("# backups");
      const link = page.locator("#channel-list a", { hasText: "# backups" });
      await link.waitFor({ timeout: STEP_TIMEOUT });
      expect(await link.getAttribute("href")).toBe("/p/default/c/backups");
      expect(await link.getAttribute("aria-current")).toBe("page");
    });
  });

  test("deleting a channel asks first, says how many events go with it, and removes them", async () => {
    const server = await pool.withOwner();
    for (const n of [1, 2, 3])
      await ok(sendEvent(server, { project: "default", channel: "old-stuff", event: `Old stuff ${n}` }));
    await ok(sendEvent(server, { project: "default", channel: "keep", event: "Keep me" }));
    await withPage(browser, "delete-channel", async (page) => {
      await signIn(page, server);
      await page.goto(server.url + "/p/default/c/old-stuff");
      expect(await feedNames(page)).toEqual(["Old stuff 3", "Old stuff 2", "Old stuff 1"]);
      await page.click("[data-testid=delete-channel]");
      const dialog = page.locator("dialog.dialog[open]");
      await dialog.waitFor({ timeout: STEP_TIMEOUT });
      expect(await dialog.textContent()).toContain("3 events");
      expect(await dialog.locator("[data-testid=confirm]").textContent()).toBe("Delete channel");
      await dialog.locator("[data-testid=confirm]").click();
      await page.waitForURL((url) => url.pathname === "/p/default", { timeout: STEP_TIMEOUT });
      await page.waitForSelector("#events");
      expect(await page.locator("#channel-list a", { hasText: "# old-stuff" }).count()).toBe(0);
      expect(await page.locator("#channel-list a", { hasText: "# keep" }).count()).toBe(1);
      expect(await feedNames(page)).toEqual(["Keep me"]);
    });
  });

  test("deleting a project asks first, says how many events go with it; the default project cannot be deleted", async () => {
    const server = await pool.withOwner();
    await server.services.projects.create("scratch");
    await ok(sendEvent(server, { project: "scratch", channel: "tries", event: "Try 1" }));
    await ok(sendEvent(server, { project: "scratch", channel: "tries", event: "Try 2" }));
    await withPage(browser, "delete-project", async (page) => {
      await signIn(page, server);
      await page.goto(server.url + "/p/default/settings");
      expect(await page.locator("[data-testid=delete-project]").count()).toBe(0);
      await page.goto(server.url + "/p/scratch/settings");
      expect(await page.locator("#project-list a", { hasText: "scratch" }).count()).toBe(1);
      await page.click("[data-testid=delete-project]");
      const dialog = page.locator("dialog.dialog[open]");
      await dialog.waitFor({ timeout: STEP_TIMEOUT });
      const text = await dialog.textContent();
      expect(text).toContain("2 events");
      expect(text).toContain("1 channel");
      await dialog.locator("[data-testid=confirm]").click();
      await page.waitForURL((url) => url.pathname === "/p/default", { timeout: STEP_TIMEOUT });
      await page.waitForSelector("#project-list");
      expect(await page.locator("#project-list a", { hasText: "scratch" }).count()).toBe(0);
      expect((await page.goto(server.url + "/p/scratch"))?.status()).toBe(404);
    });
  });
});

describeBrowser("the live feed", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  test("an event sent over HTTP appears at the top live, on the project page and its channel's page only", async () => {
    const server = await pool.withOwner();
    await ok(sendEvent(server, { project: "default", channel: "orders", event: "Earlier order" }));
    await ok(sendEvent(server, { project: "default", channel: "signups", event: "Earlier signup" }));
    await withPage(browser, "live-event", async (page, context) => {
      await signIn(page, server);
      const channelPage = await context.newPage();
      const otherChannelPage = await context.newPage();
      const problems = [...[channelPage, otherChannelPage].map(watchProblems)];
      await openFeed(page, server, "/p/default");
      await openFeed(channelPage, server, "/p/default/c/orders");
      await openFeed(otherChannelPage, server, "/p/default/c/signups");
      await page.bringToFront();
      await markPage(page);

      const event = {
        project: "default",
        channel: "orders",
        event: "New order #1042",
        description: "2 × Kettle, paid by card",
        icon: "🛒",
        tags: { plan: "pro", items: 2 },
      };
      await ok(sendEvent(server, event));
      await waitForFeedTop(page, "New order #1042");
      expect(await stillSamePage(page)).toBe(true);
      const item = page.locator("#events > li.event").first();
      expect(await item.getAttribute("class")).toContain("fresh");
      expect(await item.locator(".event-icon").textContent()).toBe("🛒");
      expect(await item.locator(".event-description").textContent()).toBe("2 × Kettle, paid by card");
      expect(await item.locator(".channel-link").textContent()).toBe("#orders");
      expect(await item.locator(".channel-link").getAttribute("href")).toBe("/p/default/c/orders");
      const chips = await item
        .locator(".tag")
        .evaluateAll((els) =>
          els.map((el) => [el.querySelector(".tag-key")?.textContent, el.querySelector(".tag-value")?.textContent]),
        );
      expect(chips).toEqual([
        ["plan", "pro"],
        ["items", "2"],
      ]);
      expect(await feedNames(page)).toEqual(["New order #1042", "Earlier signup", "Earlier order"]);

      // The channel's own page gets it too (without the channel link, it is implied there)...
      await waitForFeedTop(channelPage, "New order #1042");
      expect(await feedNames(channelPage)).toEqual(["New order #1042", "Earlier order"]);
      expect(await channelPage.locator("#events .channel-link").count()).toBe(0);
      // ...another channel's page does not: it shows the next event of its own channel, and only that.
      await ok(sendEvent(server, { project: "default", channel: "signups", event: "New signup" }));
      await waitForFeedTop(otherChannelPage, "New signup");
      expect(await feedNames(otherChannelPage)).toEqual(["New signup", "Earlier signup"]);
      await waitForFeedTop(page, "New signup");
      expect(problems.flat()).toEqual([]);
    });
  });

  test("a metric increment updates its widget without a reload", async () => {
    const server = await pool.withOwner();
    await ok(sendMetric(server, { title: "Sessions", value: 1254, icon: "👥" }));
    await withPage(browser, "live-metric", async (page) => {
      await signIn(page, server);
      await openFeed(page, server);
      const value = page.locator(".metric", { hasText: "Sessions" }).locator("[data-testid=metric-value]");
      expect(await value.textContent()).toBe("1,254");
      await markPage(page);
      await ok(sendMetric(server, { title: "Sessions", value: 5, increment: true }));
      await page.waitForFunction(
        () => document.querySelector(".metric [data-testid=metric-value]")?.textContent === "1,259",
        null,
        { timeout: STEP_TIMEOUT },
      );
      expect(await value.textContent()).toBe("1,259");
      expect(await page.locator(".metric").count()).toBe(1);
      expect(await stillSamePage(page)).toBe(true);
    });
  });

  test("scrolled down, new events wait behind an “N new events” pill; clicking it shows them at the top", async () => {
    const server = await pool.withOwner();
    for (let n = 1; n <= 30; n++)
      await ok(
        sendEvent(server, {
          project: "default",
          channel: "jobs",
          event: `Old event ${n}`,
          description: "A line of text so that each event takes some room.",
        }),
      );
    await withPage(browser, "new-events-pill", async (page) => {
      await signIn(page, server);
      await openFeed(page, server);
      await page.evaluate(() => window.scrollTo(0, 2000));
      await page.waitForFunction(() => window.scrollY > 500, null, { timeout: STEP_TIMEOUT });
      const pill = page.locator("[data-testid=new-events-pill]");
      expect(await pill.isVisible()).toBe(false);

      await ok(sendEvent(server, { project: "default", channel: "jobs", event: "Pill event A" }));
      await ok(sendEvent(server, { project: "default", channel: "jobs", event: "Pill event B" }));
      await page.waitForFunction(
        () => document.querySelector("[data-testid=new-events-pill]")?.textContent?.includes("2 new events"),
        null,
        { timeout: STEP_TIMEOUT },
      );
      await pill.waitFor({ state: "visible", timeout: STEP_TIMEOUT }); // shown a frame after its count changes
      expect((await feedNames(page))[0]).toBe("Old event 30");
      expect(await page.locator("#events .event-name", { hasText: "Pill event" }).count()).toBe(0);
      expect(await page.evaluate(() => window.scrollY)).toBeGreaterThan(500);

      await pill.click();
      await waitForFeedTop(page, "Pill event B");
      expect((await feedNames(page)).slice(0, 3)).toEqual(["Pill event B", "Pill event A", "Old event 30"]);
      await pill.waitFor({ state: "hidden", timeout: STEP_TIMEOUT });

      // Now looking at the top of the feed (as the page's script counts it): the next event slides in directly, no pill.
      await page.waitForFunction(
        () => document.querySelector("[x-data=liveFeed]")!.getBoundingClientRect().top > -100,
        null,
        { timeout: STEP_TIMEOUT },
      );
      await ok(sendEvent(server, { project: "default", channel: "jobs", event: "Pill event C" }));
      await waitForFeedTop(page, "Pill event C");
      expect(await pill.isVisible()).toBe(false);

      // At the very top of the page (metrics, chart) with events waiting, the page stays put.
      await page.evaluate(() => window.scrollTo(0, 2000));
      await ok(sendEvent(server, { project: "default", channel: "jobs", event: "Pill event D" }));
      await page.waitForFunction(
        () => document.querySelector("[data-testid=new-events-pill]")?.textContent?.includes("1 new event"),
        null,
        { timeout: STEP_TIMEOUT },
      );
      await page.evaluate(() => window.scrollTo(0, 0));
      await waitForFeedTop(page, "Pill event D");
      // The marker: two frames rendered after the insertion, by which any scroll it caused is applied.
      await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
      expect(await page.evaluate(() => window.scrollY)).toBe(0);
    });
  });

  test("a burst: the page shows the newest events and a pill counting the others; clicking it loads the feed as it is", async () => {
    // Flushes 3 s apart: the burst's first event goes out at once, the rest at the next flush, capped,
    // however long a busy machine takes to send them.
    const server = await pool.withOwner({ "live-interval": "3s" });
    await ok(sendEvent(server, { project: "default", channel: "burst", event: "Before the burst" }));
    await withPage(browser, "burst-pill", async (page) => {
      await signIn(page, server);
      await openFeed(page, server);
      await Promise.all(
        Array.from({ length: 30 }, (_, n) =>
          ok(sendEvent(server, { project: "default", channel: "burst", event: `Burst ${String(n).padStart(2, "0")}` })),
        ),
      );
      const pill = page.locator("[data-testid=new-events-pill]");
      await pill.waitFor({ state: "visible", timeout: STEP_TIMEOUT });
      // Every event of the burst is on the page or counted by the pill.
      await page.waitForFunction(
        () => {
          const shown = [...document.querySelectorAll("#events .event-name")].filter((e) =>
            e.textContent?.startsWith("Burst"),
          ).length;
          const counted = Number(
            /(\d+) new event/.exec(document.querySelector("[data-testid=new-events-pill]")?.textContent ?? "")?.[1] ??
              0,
          );
          return shown + counted === 30;
        },
        null,
        { timeout: STEP_TIMEOUT },
      );
      expect(await page.locator("#events .event-name", { hasText: "Burst" }).count()).toBeLessThan(30);
      await pill.click();
      await page.waitForLoadState("load");
      await page.waitForFunction(
        () =>
          [...document.querySelectorAll("#events .event-name")].filter((e) => e.textContent?.startsWith("Burst"))
            .length === 30,
        null,
        { timeout: STEP_TIMEOUT },
      );
      expect(await pill.isVisible()).toBe(false);
    });
  });

  test("a historical event does not jump to the top live; after a reload it sits in event-time order", async () => {
    const server = await pool.withOwner();
    await ok(
      sendEvent(server, {
        project: "default",
        channel: "log",
        event: "Yesterday-ish",
        timestamp: Date.now() / 1000 - 86_400,
      }),
    );
    await withPage(browser, "historical-event", async (page) => {
      await signIn(page, server);
      await openFeed(page, server);
      await ok(sendEvent(server, { project: "default", channel: "log", event: "Newer 1" }));
      await ok(sendEvent(server, { project: "default", channel: "log", event: "Newer 2" }));
      await waitForFeedTop(page, "Newer 2");
      await ok(
        sendEvent(server, {
          project: "default",
          channel: "log",
          event: "Three days ago",
          timestamp: Math.floor(Date.now() / 1000) - 3 * 86_400,
        }),
      );
      // Sent after it on the same stream: once this arrived, the historical one would have too.
      await ok(sendEvent(server, { project: "default", channel: "log", event: "After the historical one" }));
      await waitForFeedTop(page, "After the historical one");
      expect(await feedNames(page)).toEqual(["After the historical one", "Newer 2", "Newer 1", "Yesterday-ish"]);

      await page.reload();
      await page.waitForSelector("#events > li.event");
      expect(await feedNames(page)).toEqual([
        "After the historical one",
        "Newer 2",
        "Newer 1",
        "Yesterday-ish",
        "Three days ago",
      ]);
      const historical = page.locator("#events > li.event", { hasText: "Three days ago" });
      expect(await historical.locator(".historical").innerText()).toContain("historical");
      expect(await historical.locator("time").textContent()).toBe("3 d ago");
    });
  });

  test("after a server restart the page reconnects by itself and shows what arrived meanwhile, once", async () => {
    const first = await pool.withOwner();
    await withPage(browser, "reconnect-after-restart", async (page) => {
      await signIn(page, first);
      await openFeed(page, first);
      await ok(sendEvent(first, { project: "default", channel: "deploys", event: "Before the restart" }));
      await waitForFeedTop(page, "Before the restart");
      await markPage(page);

      await first.stop();
      await page.waitForSelector(".live-status.down", { timeout: STEP_TIMEOUT });
      expect(await page.locator(".live-status").textContent()).toBe("Reconnecting…");
      const second = pool.track(await startTestServer({ port: String(first.port) }, first.dataDir));
      expect(second.url).toBe(first.url);
      await ok(sendEvent(second, { project: "default", channel: "deploys", event: "During reconnect 1" }));
      await ok(sendEvent(second, { project: "default", channel: "deploys", event: "During reconnect 2" }));

      await waitForEvent(page, "During reconnect 1");
      await waitForEvent(page, "During reconnect 2");
      await page.waitForSelector(".live-status.live", { timeout: STEP_TIMEOUT });
      await ok(sendEvent(second, { project: "default", channel: "deploys", event: "After reconnect" }));
      await waitForFeedTop(page, "After reconnect");
      expect(await feedNames(page)).toEqual([
        "After reconnect",
        "During reconnect 2",
        "During reconnect 1",
        "Before the restart",
      ]);
      expect(await stillSamePage(page)).toBe(true);
    });
  });
});

describeBrowser("search", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  test("the date filters are the viewer's days: the page sends its time zone's offset", async () => {
    const server = await pool.withOwner();
    await ok(
      sendEvent(server, {
        project: "default",
        channel: "days",
        event: "Late on the 10th UTC",
        timestamp: Date.parse("2026-01-10T20:00:00Z") / 1000,
      }),
    );
    await withPage(
      browser,
      "date-filter-tz",
      async (page) => {
        await signIn(page, server);
        await page.goto(server.url + "/p/default/c/days");
        await page.getByRole("button", { name: "More filters" }).click();
        await page.fill("input[name=from]", "2026-01-11");
        await page.fill("input[name=to]", "2026-01-11");
        await page.press("#q", "Enter");
        await page.waitForURL((url) => url.searchParams.get("from") === "2026-01-11", { timeout: STEP_TIMEOUT });
        expect(new URL(page.url()).searchParams.get("tz")).toBe("540");
        expect(await feedNames(page)).toEqual(["Late on the 10th UTC"]); // 05:00 on the 11th in Tokyo
      },
      { timezoneId: "Asia/Tokyo" },
    );
  });

  test("searching plan:pro lists only the pro events; clicking a tag chip filters by that tag", async () => {
    const server = await pool.withOwner();
    const sent: [string, string][] = [
      ["Signup Ann", "pro"],
      ["Signup Bob", "free"],
      ["Signup Cid", "pro"],
      ["Signup Dee", "free"],
      ["Signup Eve", "pro"],
    ];
    for (const [name, plan] of sent)
      await ok(sendEvent(server, { project: "default", channel: "signups", event: name, tags: { plan, seats: 3 } }));
    await withPage(browser, "search-by-tag", async (page) => {
      await signIn(page, server);
      await page.goto(server.url + "/p/default");
      expect(await feedNames(page)).toHaveLength(5);
      await page.fill("#q", "plan:pro");
      await page.press("#q", "Enter");
      await page.waitForURL((url) => url.searchParams.get("q") === "plan:pro", { timeout: STEP_TIMEOUT });
      expect(page.url()).toMatch(/[?&]q=plan(%3A|:)pro(&|$)/);
      expect(await feedNames(page)).toEqual(["Signup Eve", "Signup Cid", "Signup Ann"]);
      expect(await page.inputValue("#q")).toBe("plan:pro");

      await page.goto(server.url + "/p/default");
      await page.locator("#events > li.event", { hasText: "Signup Bob" }).locator(".tag", { hasText: "free" }).click();
      await page.waitForURL((url) => url.pathname === "/p/default" && url.searchParams.get("q") === "plan:free", {
        timeout: STEP_TIMEOUT,
      });
      expect(await feedNames(page)).toEqual(["Signup Dee", "Signup Bob"]);
      expect(await page.inputValue("#q")).toBe("plan:free");
    });
  });
});

describeBrowser("settings: API tokens", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  test("a public token: created in the form, shown once, limited to its project, listed with its prefix, revoked", async () => {
    const server = await pool.withOwner();
    await server.services.projects.create("shop");
    await withPage(browser, "public-token", async (page) => {
      await signIn(page, server);
      await page.goto(server.url + "/settings/api");
      await page.fill("#token-name", "website");
      await page.check("input[name=kind][value=public]");
      const projectSelect = page.locator("#token-create select[name=project]");
      await projectSelect.waitFor({ state: "visible", timeout: STEP_TIMEOUT });
      await projectSelect.selectOption("default");
      await page.click("#token-create button[type=submit]");

      const shown = page.locator("[data-testid=new-token-value]");
      await shown.waitFor({ timeout: STEP_TIMEOUT });
      const token = await shown.inputValue();
      expect(token).toMatch(/^sb_[A-Za-z0-9]{40}$/);
      await page.locator(".alert.success", { hasText: "shown only this once" }).waitFor({ timeout: STEP_TIMEOUT });

      // A second token created on the same visit replaces the first one's display.
      await page.fill("#token-name", "backend");
      await page.check("input[name=kind][value=full]");
      await page.click("#token-create button[type=submit]");
      await page.locator(".alert.success", { hasText: "backend" }).waitFor({ timeout: STEP_TIMEOUT });
      expect(await shown.count()).toBe(1);
      expect(await shown.inputValue()).not.toBe(token);
      expect(await page.locator("#token-create").count()).toBe(1);

      const log = (project: string) =>
        fetch(`${server.url}/v1/log`, {
          method: "POST",
          headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
          body: JSON.stringify({ project, channel: "web", event: "From the website" }),
        });
      expect((await log("default")).status).toBe(200);
      const other = await log("shop");
      expect(other.status).toBe(403);
      expect((await other.json()).error).toBe("forbidden");

      const row = page.locator("#token-table tr", { hasText: "website" });
      await row.waitFor({ timeout: STEP_TIMEOUT });
      const cells = await row.locator("td").allTextContents();
      expect(cells.slice(0, 3)).toEqual(["website", "public", "default"]);
      expect(cells[3]!.trim()).toStartWith("no"); // a new public token may not notify
      expect(cells[4]).toBe(`${token.slice(0, 11)}…`);
      expect(cells[5]).toContain("by owner");

      // Shown once: not on the page any more after a reload.
      await page.reload();
      await row.waitFor({ timeout: STEP_TIMEOUT });
      expect(await page.locator("[data-testid=new-token-value]").count()).toBe(0);
      expect(await page.content()).not.toContain(token);

      await page.click("[data-testid=revoke-website]");
      const dialog = page.locator("dialog.dialog[open]");
      await dialog.waitFor({ timeout: STEP_TIMEOUT });
      expect(await dialog.textContent()).toContain(token.slice(0, 11));
      await Promise.all([
        page.waitForEvent("load", { timeout: STEP_TIMEOUT }),
        dialog.locator("[data-testid=confirm]").click(),
      ]);
      expect(path(page)).toBe("/settings/api");
      expect(await page.locator("[data-testid=revoke-website]").count()).toBe(0);
      const refused = await log("default");
      expect(refused.status).toBe(401);
    });
  });
});

describeBrowser("hostile event content", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  const SCRIPT = "<script>window.__xss=1</script>";
  const IMG = `<img src=x onerror="window.__xss=1">`;
  const SVG = `"><svg onload=alert(1)>`;
  const MD_LINK = "[click](javascript:window.__xss=1)";
  const MD_RAW = `<b onmouseover="window.__xss=1">hi</b>`;
  const JS_URL = "javascript:window.__xss=1";
  const USER = `${SCRIPT}${IMG}`; // also has a "/", which must survive the user page's URL

  const payloads = (label: string) => [
    {
      project: "default",
      channel: "xss",
      event: `${SCRIPT} ${label}`,
      description: `${IMG} and ${SVG}`,
      tags: { payload: IMG, link: JS_URL },
      user_id: USER,
    },
    {
      project: "default",
      channel: "xss",
      event: `Markdown ${label}`,
      parser: "markdown",
      description: `${MD_LINK}\n\n${MD_RAW}\n\n${IMG}\n\n${SCRIPT}\n\n<${JS_URL}>\n\n![pic](${JS_URL})`,
      user_id: USER,
    },
    {
      project: "default",
      channel: "xss",
      event: `Plain URL ${label}`,
      description: `Open ${JS_URL} now`,
      tags: { url: JS_URL },
    },
  ];

  /** Nothing ran, nothing was injected: no element, handler or javascript: link came from event content. */
  async function expectInert(page: Page, dialogs: string[], scope: string): Promise<void> {
    const state = await page.evaluate((scope) => {
      const root = document.querySelector(scope);
      return {
        scopeFound: root !== null,
        xss: (window as any).__xss,
        injected: root ? root.querySelectorAll("img[src=x], script:not([src]), svg, b, iframe").length : -1,
        inlineScripts: document.querySelectorAll("img[src=x], script:not([src])").length,
        handlers: document.querySelectorAll("[onerror], [onload], [onmouseover], [onclick]").length,
        jsLinks: document.querySelectorAll('a[href^="javascript:" i], [src^="javascript:" i]').length,
      };
    }, scope);
    expect(state).toEqual({ scopeFound: true, xss: undefined, injected: 0, inlineScripts: 0, handlers: 0, jsLinks: 0 });
    expect(dialogs).toEqual([]);
  }

  test("event content with HTML, scripts and javascript: links shows as text, loaded and live, on every page", async () => {
    const server = await pool.withOwner();
    const loaded: number[] = [];
    for (const body of payloads("(loaded)")) loaded.push((await ok(sendEvent(server, body))).id);
    await withPage(browser, "xss-inert", async (page) => {
      const dialogs: string[] = [];
      page.on("dialog", (dialog) => {
        dialogs.push(dialog.message());
        void dialog.dismiss();
      });
      await signIn(page, server);
      await openFeed(page, server);
      expect(await page.locator("#events > li.event").count()).toBe(3);

      for (const body of payloads("(live)")) await ok(sendEvent(server, body));
      await waitForFeedTop(page, "Plain URL (live)");
      expect(await page.locator("#events > li.event").count()).toBe(6);

      for (const label of ["(loaded)", "(live)"]) {
        const scripted = page.locator("#events .event-name", { hasText: `${SCRIPT} ${label}` });
        expect(await scripted.textContent()).toBe(`${SCRIPT} ${label}`);
        expect(await scripted.isVisible()).toBe(true);
        const plain = page.locator("#events > li.event", { hasText: `${SCRIPT} ${label}` });
        expect(await plain.locator(".event-description").textContent()).toBe(`${IMG} and ${SVG}`);
        expect(await plain.locator(".user-link").textContent()).toBe(`👤 ${USER}`);
        expect(await plain.locator(".tag-value").allTextContents()).toEqual([IMG, JS_URL]);
        const markdown = page
          .locator("#events > li.event", { hasText: `Markdown ${label}` })
          .locator(".event-description");
        const text = (await markdown.textContent()) ?? "";
        for (const literal of [MD_RAW, IMG, SCRIPT]) expect(text).toContain(literal);
        await markdown.hover();
        expect(await markdown.locator("a", { hasText: "click" }).getAttribute("href")).toBeNull();
        expect(
          await page
            .locator("#events > li.event", { hasText: `Plain URL ${label}` })
            .locator(".event-description")
            .textContent(),
        ).toBe(`Open ${JS_URL} now`);
      }
      await expectInert(page, dialogs, "#events");

      // The event's own page, for the plain and the markdown event.
      await page.goto(`${server.url}/p/default/events/${loaded[0]}`);
      expect(await page.locator("h1").textContent()).toContain(`${SCRIPT} (loaded)`);
      expect(await page.locator(".event-description").textContent()).toBe(`${IMG} and ${SVG}`);
      expect(await page.locator(".tag-value").allTextContents()).toEqual([IMG, JS_URL]);
      await expectInert(page, dialogs, "main");
      await page.goto(`${server.url}/p/default/events/${loaded[1]}`);
      const detail = (await page.locator(".event-description").textContent()) ?? "";
      for (const literal of [MD_RAW, IMG, SCRIPT]) expect(detail).toContain(literal);
      await expectInert(page, dialogs, "main");

      // The user's page, reached by its link.
      await page.locator(".facts a", { hasText: USER }).click();
      await page.waitForURL((url) => url.pathname.startsWith("/p/default/users/"), { timeout: STEP_TIMEOUT });
      expect(await page.locator("h1").textContent()).toBe(`👤 ${USER}`);
      await page.waitForSelector("#events > li.event");
      expect(await page.locator("#events > li.event").count()).toBe(4);
      await expectInert(page, dialogs, "#events");
    });
  });
});

describeBrowser("small screens and dark mode", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  test("375 px wide, dark: no horizontal scroll, the ☰ menu opens the sidebar, the background is dark", async () => {
    const server = await pool.withOwner();
    await ok(sendMetric(server, { title: "Monthly recurring revenue", value: 1_234_567.89, icon: "💰" }));
    await ok(
      sendEvent(server, {
        project: "default",
        channel: "payments-and-subscriptions",
        event: "Subscription renewed for Acme Corporation International",
        description: `Invoice https://billing.example.com/invoices/2026/11/${"a1b2c3d4".repeat(12)} paid`,
        icon: "💰",
        tags: {
          plan: "enterprise-annual",
          customer: "acme-corporation-international-holdings",
          seats: 250,
          trial: false,
        },
        user_id: "someone.with.a.long.address@example-company.com",
      }),
    );
    await ok(
      sendEvent(server, {
        project: "default",
        channel: "deploys",
        event: "Deployed",
        parser: "markdown",
        description:
          "| a | b |\n|---|---|\n| `" + "x".repeat(80) + "` | y |\n\n```\n" + "long code line ".repeat(12) + "\n```",
      }),
    );
    await withPage(
      browser,
      "mobile-dark",
      async (page) => {
        await signIn(page, server);
        await openFeed(page, server);
        await page.waitForSelector(".chart-card .chart canvas", { timeout: STEP_TIMEOUT }); // the chart is drawn at its width
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);

        const sidebarRight = () =>
          page.evaluate(() => document.getElementById("sidebar")!.getBoundingClientRect().right);
        expect(await sidebarRight()).toBeLessThanOrEqual(0);
        const menu = page.getByRole("button", { name: "Menu" });
        expect(await menu.isVisible()).toBe(true);
        expect(await menu.getAttribute("aria-expanded")).toBe("false");
        await menu.click();
        await page.waitForFunction(() => document.getElementById("sidebar")!.getBoundingClientRect().left >= 0, null, {
          timeout: STEP_TIMEOUT,
        });
        expect(await menu.getAttribute("aria-expanded")).toBe("true");
        const projectLink = page.locator("#project-list a", { hasText: "default" });
        const box = await projectLink.boundingBox();
        expect(box && box.x >= 0 && box.x + box.width <= 375).toBe(true);
        // Escape closes the menu again, wherever the focus is.
        await page.keyboard.press("Escape");
        await page.waitForFunction(() => document.getElementById("sidebar")!.getBoundingClientRect().right <= 0, null, {
          timeout: STEP_TIMEOUT,
        });
        expect(await menu.getAttribute("aria-expanded")).toBe("false");

        // The settings pages fit too (their tabs and the token table scroll inside the page).
        await sendEvent(server, { project: "default", channel: "x", event: "x" });
        for (const path of [
          "/settings/account",
          "/settings/api",
          "/settings/notifications",
          "/settings/integrations",
          "/settings/members",
          "/settings/audit",
        ]) {
          await page.goto(server.url + path);
          expect({ path, width: await page.evaluate(() => document.documentElement.scrollWidth) }).toEqual({
            path,
            width: 375,
          });
        }
        await page.goto(server.url + "/p/default");

        const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
        const [r, g, b] = (background.match(/\d+/g) ?? []).map(Number);
        expect(Math.max(r!, g!, b!)).toBeLessThan(60);
      },
      { viewport: { width: 375, height: 800 }, colorScheme: "dark" },
    );
  });
});

describeBrowser("settings: members", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  test("the owner adds a member who can sign in but not manage members; removing them signs them out", async () => {
    const server = await pool.withOwner();
    const member = { username: "alice", password: "alice has a long password" };
    await withPage(browser, "members", async (page) => {
      await signIn(page, server);
      await page.goto(server.url + "/settings/members");
      await page.fill("#member-username", member.username);
      await page.fill("#member-password", member.password);
      await Promise.all([
        page.waitForEvent("load", { timeout: STEP_TIMEOUT }),
        page.click("#member-form button[type=submit]"),
      ]);
      const row = page.locator("table.members tr", { hasText: member.username });
      await row.waitFor({ timeout: STEP_TIMEOUT });
      expect(await row.locator("td").nth(1).textContent()).toBe("member");

      const memberContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      memberContext.setDefaultTimeout(STEP_TIMEOUT);
      try {
        const memberPage = await memberContext.newPage();
        const problems = watchProblems(memberPage);
        await signIn(memberPage, server, member);
        expect(path(memberPage)).toBe("/p/default");
        expect(await memberPage.locator("h1").textContent()).toBe("default");
        expect(await memberPage.getByRole("button", { name: /Sign out/ }).textContent()).toContain(member.username);
        // Managing members is for admins and the owner: a member is refused, and not offered the tab.
        const refused = await memberPage.goto(server.url + "/settings/members");
        expect(refused?.status()).toBe(403);
        await memberPage.getByText("Only admins and the owner can do this.").waitFor({ timeout: STEP_TIMEOUT });
        await memberPage.goto(server.url + "/settings/account");
        expect(
          await memberPage.getByRole("navigation", { name: "Settings" }).getByRole("link").allTextContents(),
        ).toEqual(["Account", "Notifications"]);

        await page.click(`[data-testid=remove-${member.username}]`);
        const dialog = page.locator("dialog.dialog[open]");
        await dialog.waitFor({ timeout: STEP_TIMEOUT });
        expect(await dialog.textContent()).toContain(`Remove ${member.username}?`);
        await Promise.all([
          page.waitForEvent("load", { timeout: STEP_TIMEOUT }),
          dialog.locator("[data-testid=confirm]").click(),
        ]);
        expect(await page.locator("table.members tr", { hasText: member.username }).count()).toBe(0);

        await memberPage.reload();
        expect(path(memberPage)).toBe("/login");
        expect(new URL(memberPage.url()).searchParams.get("next")).toBe("/settings/account");
        expect(problems).toEqual([]);
      } finally {
        await memberContext.close();
      }
    });
  });
});

describeBrowser("keyboard", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  test("“/” focuses the search box; Tab from the top reaches “Skip to content” first", async () => {
    const server = await pool.withOwner();
    await ok(sendEvent(server, { project: "default", channel: "keys", event: "Something" }));
    await withPage(browser, "keyboard", async (page) => {
      await signIn(page, server);
      await openFeed(page, server);
      expect(await page.evaluate(() => document.activeElement === document.body)).toBe(true);
      await page.keyboard.press("/");
      expect(await page.evaluate(() => document.activeElement?.id)).toBe("q");
      expect(await page.inputValue("#q")).toBe("");

      await page.reload();
      await page.waitForSelector(".live-status.live", { timeout: STEP_TIMEOUT });
      await page.keyboard.press("Tab");
      const focused = await page.evaluate(() => ({
        className: document.activeElement?.className,
        text: document.activeElement?.textContent,
      }));
      expect(focused).toEqual({ className: "skip-link", text: "Skip to content" });
      const box = await page.locator(".skip-link").boundingBox();
      expect(box && box.x >= 0).toBe(true);
      await page.keyboard.press("Enter");
      await page.waitForFunction(() => location.hash === "#main", null, { timeout: STEP_TIMEOUT });
      expect(await page.evaluate(() => document.activeElement?.id)).toBe("main");
    });
  });
});
