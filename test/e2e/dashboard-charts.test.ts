// Charts, funnels and the arranged dashboard in a real browser: a chart built in the builder (its
// preview follows the form, its URL is the question), saved, pinned, moved by keyboard, removed and
// added back; a funnel and the users who dropped at a step, each leading to their journey; a pinned
// card that grows as events arrive; a phone in dark mode. Counts are held to what the test sent.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { eventually, type TestServer } from "../helpers.ts";
import {
  CHROMIUM,
  describeBrowser,
  launch,
  ok,
  path,
  sendEvent,
  serverPool,
  signIn,
  STEP_TIMEOUT,
  withPage,
} from "./browser.ts";

let browser: Browser;
beforeAll(async () => {
  if (existsSync(CHROMIUM)) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

const HOUR = 3600;

/**
 * A shop's week: 12 users sign up, 7 of them start a checkout after, 4 of those pay; u2 pays
 * without checking out (so it drops at step 2 of sign-up → checkout → paid). Plans alternate.
 */
async function seedShop(server: TestServer): Promise<{ signups: number; byPlan: Record<string, number> }> {
  await server.services.projects.create("shop");
  const now = Math.floor(Date.now() / 1000);
  const byPlan: Record<string, number> = {};
  for (let i = 0; i < 12; i++) {
    const plan = i % 3 ? "pro" : "free";
    byPlan[plan] = (byPlan[plan] ?? 0) + 1;
    const t = now - 6 * 24 * HOUR + i * HOUR;
    await ok(
      sendEvent(server, {
        project: "shop",
        channel: "web",
        event: "Signed up",
        user_id: `u${i}`,
        tags: { plan },
        timestamp: t,
      }),
    );
    if (i < 7 && i !== 2)
      await ok(
        sendEvent(server, {
          project: "shop",
          channel: "web",
          event: "Checkout started",
          user_id: `u${i}`,
          timestamp: t + HOUR,
        }),
      );
    if (i < 4)
      await ok(
        sendEvent(server, {
          project: "shop",
          channel: "billing",
          event: "Paid",
          user_id: `u${i}`,
          timestamp: t + 2 * HOUR,
        }),
      );
  }
  return { signups: 12, byPlan };
}

/** Waits until what `read` gives passes `check` (the page updates on its own). */
const settles = <T>(read: () => Promise<T> | T, check: (value: T) => void, timeoutMs = STEP_TIMEOUT) =>
  eventually(async () => check(await read()), timeoutMs);

const cardNames = (page: Page) =>
  page.$$eval("#dashboard-cards > li", (items) => items.map((li) => li.querySelector("h2")?.textContent?.trim() ?? ""));

describeBrowser("charts and the dashboard", () => {
  const pool = serverPool({ "card-refresh": "500ms" });
  afterAll(() => pool.closeAll());

  test("a chart built in the builder: the preview follows the form, its URL asks the same question, and saved it is on the dashboard", async () => {
    const server = await pool.withOwner();
    const { signups, byPlan } = await seedShop(server);
    await withPage(browser, "charts-build", async (page, context) => {
      await signIn(page, server);
      await page.goto(`${server.url}/p/shop`);
      await page.click("[data-testid=project-charts]");
      expect(path(page)).toBe("/p/shop/charts");
      await page.click("text=New chart");
      await page.fill("#chart-name", "Sign-ups by plan");
      await page.fill("#chart-event", "Signed up");
      await page.locator("#chart-event").blur();
      await page.locator("[data-testid=chart-total]", { hasText: `${signups} events in the range` }).waitFor();
      await page.selectOption("#chart-range", "7");
      await page.selectOption("#chart-group", "tag");
      await page.fill("#chart-group-tag", "plan");
      await page.locator("#chart-group-tag").blur();
      const legend = page.locator("#chart-preview .chart-legend li");
      await legend.first().waitFor();
      await settles(
        () => legend.allTextContents(),
        (v) => expect(v).toEqual([`pro${byPlan.pro}`, `free${byPlan.free}`]),
      );
      // The address bar holds the question: opened elsewhere, it shows the same answer.
      await settles(
        () => new URL(page.url()).searchParams.get("group_tag"),
        (v) => expect(v).toBe("plan"),
      );
      const shared = await context.newPage();
      await shared.goto(page.url());
      await shared.locator("#chart-preview .chart-legend li").first().waitFor();
      expect(await shared.locator("#chart-preview .chart-legend li").allTextContents()).toEqual([
        `pro${byPlan.pro}`,
        `free${byPlan.free}`,
      ]);
      expect(await shared.inputValue("#chart-event")).toBe("Signed up");
      await shared.close();

      await page.click("[data-testid=save-chart]");
      await page.waitForURL(/\/p\/shop\/charts\/\d+$/);
      await page.locator("[data-testid=card-body] .chart-legend li").first().waitFor();
      expect(await page.locator("[data-testid=pin]").textContent()).toContain("Remove from dashboard");
      await page.goto(`${server.url}/p/shop`);
      expect(await cardNames(page)).toEqual(["Activity", "Sign-ups by plan"]);
      await page.locator("#dashboard-cards .chart-legend li").first().waitFor();
      expect(await page.locator("#card-activity canvas").count()).toBe(1);
    });
  });

  test("moved by keyboard to the end, a card keeps the focus on its own controls", async () => {
    const server = await pool.withOwner();
    await seedShop(server);
    const make = (name: string) =>
      ok(
        fetch(`${server.url}/v1/charts`, {
          method: "POST",
          headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
          body: JSON.stringify({ project: "shop", kind: "series", name, definition: { last_days: 7 }, position: 99 }),
        }),
      );
    await make("First");
    await make("Second");
    const focused = (page: Page) => page.evaluate(() => document.activeElement?.getAttribute("aria-label"));
    await withPage(browser, "charts-arrange-end", async (page) => {
      await signIn(page, server);
      await page.goto(`${server.url}/p/shop`);
      expect(await cardNames(page)).toEqual(["Activity", "First", "Second"]);
      // As on a loaded machine, a swap takes a while to settle: the control must not have the focus
      // before its form posts through htmx (an Enter then would reload the page and move nothing).
      await page.evaluate(() => {
        (window as unknown as { htmx: { config: { defaultSettleDelay: number } } }).htmx.config.defaultSettleDelay =
          500;
      });
      await page.click("[data-testid=arrange]");
      await page.getByRole("button", { name: "Move down: First" }).focus();
      await page.keyboard.press("Enter");
      await settles(
        () => cardNames(page),
        (v) => expect(v).toEqual(["Activity", "Second", "First"]),
      );
      // Its "Move down" is disabled at the end: its "Move up" has the focus, not another card's control.
      await settles(
        () => focused(page),
        (v) => expect(v).toBe("Move up: First"),
      );
      await page.keyboard.press("Enter");
      await settles(
        () => cardNames(page),
        (v) => expect(v).toEqual(["Activity", "First", "Second"]),
      );
      await settles(
        () => focused(page),
        (v) => expect(v).toBe("Move up: First"),
      );
      await page.keyboard.press("Enter");
      await settles(
        () => cardNames(page),
        (v) => expect(v).toEqual(["First", "Activity", "Second"]),
      );
      await settles(
        () => focused(page),
        (v) => expect(v).toBe("Move down: First"),
      );
    });
  });

  test("arranged by keyboard: moved up and down, removed and added back, as a reload shows it", async () => {
    const server = await pool.withOwner();
    await seedShop(server);
    const make = (name: string, definition: Record<string, unknown>) =>
      ok(
        fetch(`${server.url}/v1/charts`, {
          method: "POST",
          headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
          body: JSON.stringify({ project: "shop", kind: "series", name, definition, position: 99 }),
        }),
      );
    await make("Paid a day", { event: "Paid", last_days: 7 });
    await make("Users a day", { measure: "users", last_days: 7 });
    await withPage(browser, "charts-arrange", async (page) => {
      await signIn(page, server);
      await page.goto(`${server.url}/p/shop`);
      expect(await cardNames(page)).toEqual(["Activity", "Paid a day", "Users a day"]);
      await page.click("[data-testid=arrange]");
      expect(await page.getAttribute("[data-testid=arrange]", "aria-pressed")).toBe("true");
      await page.getByRole("button", { name: "Move up: Users a day" }).focus();
      await page.keyboard.press("Enter");
      await settles(
        () => cardNames(page),
        (v) => expect(v).toEqual(["Activity", "Users a day", "Paid a day"]),
      );
      // The moved card's control keeps the focus: once more goes on from there.
      await settles(
        () => page.evaluate(() => document.activeElement?.getAttribute("aria-label")),
        (v) => expect(v).toBe("Move up: Users a day"),
      );
      await page.keyboard.press("Enter");
      await settles(
        () => cardNames(page),
        (v) => expect(v).toEqual(["Users a day", "Activity", "Paid a day"]),
      );
      await page.getByRole("button", { name: "Remove from the dashboard: Activity" }).focus();
      await page.keyboard.press("Enter");
      await settles(
        () => cardNames(page),
        (v) => expect(v).toEqual(["Users a day", "Paid a day"]),
      );
      await page.selectOption("#add-card", "activity");
      await page.locator("[data-testid=add-card] button").press("Enter");
      await settles(
        () => cardNames(page),
        (v) => expect(v).toEqual(["Users a day", "Paid a day", "Activity"]),
      );
      await page.reload();
      expect(await cardNames(page)).toEqual(["Users a day", "Paid a day", "Activity"]);
      // The API sees the same places.
      const charts = (
        await ok(
          fetch(`${server.url}/v1/charts?project=shop`, { headers: { Authorization: `Bearer ${server.token}` } }),
        )
      ).charts;
      expect(charts.map((c: { name: string; position: number }) => [c.name, c.position])).toEqual([
        ["Users a day", 0],
        ["Paid a day", 1],
      ]);
    });
  });

  test("a funnel: each step's users, and those who dropped at a step listed, each leading to their journey", async () => {
    const server = await pool.withOwner();
    await seedShop(server);
    await withPage(browser, "charts-funnel", async (page) => {
      await signIn(page, server);
      await page.goto(`${server.url}/p/shop/charts/new?kind=funnel`);
      await page.fill("#chart-name", "Checkout");
      await page.fill("#step-1", "Signed up");
      await page.fill("#step-2", "Checkout started");
      await page.fill("#step-3", "Paid");
      await page.locator("#step-3").blur();
      const users = page.locator("#chart-preview [data-testid=step-users]");
      await settles(
        () => users.allTextContents(),
        (v) => expect(v).toEqual(["12 users", "6 users", "3 users"]),
      );
      await page.click("[data-testid=add-step]");
      expect(await page.locator("#step-4").isVisible()).toBe(true);
      await page.click("[data-testid=save-chart]");
      await page.waitForURL(/\/p\/shop\/charts\/\d+$/);
      await settles(
        () => page.locator("[data-testid=step-users]").allTextContents(),
        (v) => expect(v).toEqual(["12 users", "6 users", "3 users"]),
      );
      // Step 2 lost u2 and u7..u11 (u2 paid, but never started a checkout).
      await page.locator("[data-testid=dropped]").first().click();
      await page.waitForURL(/\/funnel\/dropped/);
      expect(await page.locator("[data-testid=dropped-users] a").allTextContents()).toEqual([
        "u10",
        "u11",
        "u2",
        "u7",
        "u8",
        "u9",
      ]);
      await page.click("[data-testid=dropped-users] >> text=u2");
      expect(path(page)).toBe("/p/shop/users/u2");
      expect(await page.locator("#events .event").count()).toBe(2);
    });
  });

  test("a pinned card grows when events arrive, without a reload", async () => {
    const server = await pool.withOwner();
    await seedShop(server);
    await ok(
      fetch(`${server.url}/v1/charts`, {
        method: "POST",
        headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
        body: JSON.stringify({
          project: "shop",
          kind: "series",
          name: "Paid",
          definition: { event: "Paid", last_days: 7 },
          position: 0,
        }),
      }),
    );
    await withPage(browser, "charts-live", async (page) => {
      await signIn(page, server);
      await page.goto(`${server.url}/p/shop`);
      const total = page.locator("#dashboard-cards [data-testid=chart-total]");
      await total.waitFor();
      expect(await total.textContent()).toBe("4 events in the range");
      for (let i = 0; i < 3; i++)
        await ok(sendEvent(server, { project: "shop", channel: "billing", event: "Paid", user_id: `late-${i}` }));
      await settles(
        () => total.textContent(),
        (v) => expect(v).toBe("7 events in the range"),
        8000,
      );
      // The activity card follows too: its legend counts the new events.
      await settles(
        () => page.locator("#card-activity .chart-legend").textContent(),
        (v) => expect(v).toContain("#billing7"),
        8000,
      );
    });
  });

  test("a search saved as a chart asks what the search shows", async () => {
    const server = await pool.withOwner();
    await seedShop(server);
    await withPage(browser, "charts-from-search", async (page) => {
      await signIn(page, server);
      await page.goto(`${server.url}/p/shop?q=${encodeURIComponent("plan:free")}&channel=web`);
      await page.click("[data-testid=save-as-chart]");
      expect(path(page)).toBe("/p/shop/charts/new");
      expect(await page.inputValue("#chart-tag")).toBe("plan:free");
      expect(await page.inputValue("#chart-channel")).toBe("web");
      // Four of the twelve sign-ups are on the free plan (u0, u3, u6, u9), all in #web.
      await page.locator("[data-testid=chart-total]", { hasText: "4 events in the range" }).waitFor();
    });
  });

  test("at 375 px in dark mode: cards stack, nothing scrolls sideways, and the feed is within a screen's scroll", async () => {
    const server = await pool.withOwner();
    await seedShop(server);
    await ok(
      fetch(`${server.url}/v1/charts`, {
        method: "POST",
        headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
        body: JSON.stringify({
          project: "shop",
          kind: "funnel",
          name: "Checkout",
          definition: { steps: ["Signed up", "Checkout started", "Paid"], last_days: 30 },
          position: 99,
        }),
      }),
    );
    await withPage(
      browser,
      "charts-phone",
      async (page) => {
        await signIn(page, server);
        await page.goto(`${server.url}/p/shop`);
        await page.locator("#dashboard-cards [data-testid=step-users]").first().waitFor();
        expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
        const boxes = await page.$$eval("#dashboard-cards > li", (items) =>
          items
            .map((li) => li.getBoundingClientRect())
            .map((r) => ({ x: Math.round(r.x), top: r.top, bottom: r.bottom })),
        );
        expect(boxes).toHaveLength(2);
        expect(boxes[0]!.x).toBe(boxes[1]!.x);
        expect(boxes[1]!.top).toBeGreaterThanOrEqual(boxes[0]!.bottom);
        const firstEvent = await page.locator("#events .event").first().boundingBox();
        expect(firstEvent!.y).toBeLessThan(2 * 812);
        // And one tap away from the top.
        await page.click("text=Skip to the feed");
        expect(await page.locator("#events .event").first().isVisible()).toBe(true);
        for (const url of [
          "/p/shop/charts",
          "/p/shop/charts/new",
          "/p/shop/charts/new?kind=funnel",
          "/p/shop/charts/1",
        ]) {
          await page.goto(server.url + url);
          await page.waitForLoadState("networkidle");
          expect({
            url,
            sideways: await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth),
          }).toEqual({ url, sideways: false });
        }
      },
      { viewport: { width: 375, height: 812 }, colorScheme: "dark" },
    );
  });
});
