// The users page in a real browser: reached from the project page, long ids and property values
// wrap at 375 px without sideways scrolling, the next page comes in below, a row leads to the
// user's journey, the search narrows the list, and first seen reads the same on the list and the
// user's page.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { searchIndexed } from "../helpers.ts";
import { CHROMIUM, describeBrowser, launch, ok, path, sendEvent, serverPool, signIn, withPage } from "./browser.ts";

let browser: Browser;
beforeAll(async () => {
  if (existsSync(CHROMIUM)) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

/** A 64-character hashed user id, as apps send to keep emails out of their analytics. */
const hashed = (seed: string) => createHash("sha256").update(seed).digest("hex");

const userIds = (page: Page) => page.$$eval("#users .user-id", (els) => els.map((el) => el.textContent ?? ""));
const noSidewaysScroll = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);

describeBrowser("the users page", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  test("at 375 px: a 64-character id and long property values wrap, more users load below, and a row leads to the journey", async () => {
    const server = await pool.withOwner();
    const now = Math.floor(Date.now() / 1000);
    const long = hashed("ann@example.com");
    expect(long).toHaveLength(64);
    await server.services.projects.create("shop");
    // 55 users with events, oldest first, so the long id (the newest) heads the list and a second page exists.
    for (let i = 0; i < 54; i++)
      await ok(
        sendEvent(server, {
          project: "shop",
          channel: "app",
          event: "Visited",
          user_id: `visitor-${i}`,
          timestamp: now - 3600 - (54 - i) * 60,
        }),
      );
    await ok(
      sendEvent(server, { project: "shop", channel: "app", event: "Signed up", user_id: long, timestamp: now - 600 }),
    );
    await ok(
      sendEvent(server, { project: "shop", channel: "app", event: "Paid", user_id: long, timestamp: now - 300 }),
    );
    await ok(
      fetch(`${server.url}/v1/identify`, {
        method: "POST",
        headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
        body: JSON.stringify({
          project: "shop",
          user_id: long,
          properties: { name: "Ann ".repeat(40).trim(), email: `ann.${"x".repeat(120)}@example.com` },
        }),
      }),
    );

    await withPage(
      browser,
      "users-375",
      async (page) => {
        await signIn(page, server);
        await page.goto(`${server.url}/p/shop`);
        await page.getByRole("link", { name: "Users" }).click();
        await page.waitForURL((url) => url.pathname === "/p/shop/users");
        await page.getByRole("heading", { name: "Users" }).waitFor();

        const ids = await userIds(page);
        expect(ids).toHaveLength(50);
        expect(ids[0]).toBe(long);
        const row = page.locator("#users .user-row").first();
        expect(await row.locator(".user-props").innerText()).toContain("ann.xxxx");
        expect(await row.locator("[data-testid=user-events]").innerText()).toBe("2");
        // The id wraps inside the row instead of widening the page.
        const box = (await row.locator(".user-id").boundingBox())!;
        expect(box.x + box.width).toBeLessThanOrEqual(375);
        expect(box.height).toBeGreaterThan(30);
        expect(await noSidewaysScroll(page)).toBe(true);

        await page.getByTestId("more-users").click();
        await page.waitForFunction(() => document.querySelectorAll("#users .user-row").length === 55);
        expect(await page.getByTestId("more-users").count()).toBe(0);
        expect((await userIds(page)).at(-1)).toBe("visitor-0");
        expect(await noSidewaysScroll(page)).toBe(true);

        await page.locator("#users .user-id").first().click();
        await page.waitForURL((url) => url.pathname === `/p/shop/users/${long}`);
        await page.locator("#events .event-name", { hasText: "Paid" }).waitFor();
        expect(await page.locator("#events .event-name").allInnerTexts()).toEqual(["Paid", "Signed up"]);
        expect(await noSidewaysScroll(page)).toBe(true);
      },
      { viewport: { width: 375, height: 800 } },
    );
  });

  test("the search narrows the list by id or property and keeps what was typed; the crumbs lead back", async () => {
    const server = await pool.withOwner();
    await server.services.projects.create("site");
    await ok(sendEvent(server, { project: "site", channel: "web", event: "Visited", user_id: "guest-1" }));
    await ok(sendEvent(server, { project: "site", channel: "web", event: "Visited", user_id: "member-7" }));
    await ok(
      fetch(`${server.url}/v1/identify`, {
        method: "POST",
        headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
        body: JSON.stringify({ project: "site", user_id: "member-7", properties: { email: "zoe@corp.example" } }),
      }),
    );
    // The search sees what its index holds: on SQLite, a moment after it was stored.
    await searchIndexed(server);
    await withPage(browser, "users-search", async (page) => {
      await signIn(page, server);
      await page.goto(`${server.url}/p/site/c/web`);
      await page.locator(".page-header").getByRole("link", { name: "Users" }).click();
      await page.waitForURL((url) => url.pathname === "/p/site/users");
      expect((await userIds(page)).sort()).toEqual(["guest-1", "member-7"]);

      await page.getByRole("searchbox", { name: "Search users" }).fill("email:zoe@");
      await page.getByRole("button", { name: "Search" }).click();
      await page.waitForURL((url) => url.searchParams.get("q") === "email:zoe@");
      expect(await userIds(page)).toEqual(["member-7"]);
      expect(await page.getByRole("searchbox", { name: "Search users" }).inputValue()).toBe("email:zoe@");

      await page.getByRole("searchbox", { name: "Search users" }).fill("nobody");
      await page.getByRole("button", { name: "Search" }).click();
      await page.locator("#users-empty").waitFor();
      expect(await page.locator("#users-empty").innerText()).toContain("No users match");

      await page.locator(".crumbs").getByRole("link", { name: "site" }).click();
      await page.waitForURL((url) => url.pathname === "/p/site");
      expect(path(page)).toBe("/p/site");
    });
  });

  test("first seen reads the same on the list and on the user's page: the earlier of the first event and the first identify", async () => {
    const server = await pool.withOwner();
    const identify = (user_id: string) =>
      ok(
        fetch(`${server.url}/v1/identify`, {
          method: "POST",
          headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
          body: JSON.stringify({ project: "default", user_id, properties: { plan: "pro" } }),
        }),
      );
    const now = Math.floor(Date.now() / 1000);
    // ann: identified, then active; ben: identified now, with an event dated ten days back.
    await identify("ann");
    await ok(sendEvent(server, { project: "default", channel: "web", event: "Signed in", user_id: "ann" }));
    await identify("ben");
    await ok(
      sendEvent(server, {
        project: "default",
        channel: "web",
        event: "Imported",
        user_id: "ben",
        timestamp: now - 10 * 86_400,
      }),
    );
    await searchIndexed(server);
    await withPage(browser, "users-first-seen", async (page) => {
      await signIn(page, server);
      /** First seen as the page shows it: the text and the date and time on hover. */
      const shown = (stats: string) =>
        page
          .locator(`${stats} > div`, { hasText: "First seen" })
          .locator("time")
          .evaluate((t) => ({ text: t.textContent, title: t.getAttribute("title"), at: t.getAttribute("datetime") }));
      for (const id of ["ann", "ben"]) {
        await page.goto(`${server.url}/p/default/users?q=${id}`);
        await page.waitForFunction(() => document.querySelector("time[data-local]"));
        const onList = await shown(".user-row .user-stats");
        await page.goto(`${server.url}/p/default/users/${id}`);
        await page.waitForFunction(() => document.querySelector("time[data-local]"));
        expect(await shown("dl[data-testid=user-summary]"), id).toEqual(onList);
        if (id === "ben") expect(onList.text).toBe("10 d ago");
      }
    });
  });
});
