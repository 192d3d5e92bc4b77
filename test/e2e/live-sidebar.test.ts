// The sidebar follows new channels on every page of a project, as the rest of the dashboard is
// live: the Alerts page (where a rule that fires makes the alerts channel, and its Notices link
// shows), a page without a stream of its own (the charts), a metric's page, and the feed.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import {
  CHROMIUM,
  describeBrowser,
  launch,
  ok,
  sendEvent,
  sendMetric,
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

/** The sidebar's channels, as listed. */
const sidebar = (page: Page) =>
  page.$$eval("#channel-list li", (items) => items.map((li) => (li.textContent ?? "").trim()));

/** Marks the page, so a test can tell it was not reloaded. */
const mark = (page: Page) => page.evaluate(() => ((window as any).__notReloaded = true));
const notReloaded = (page: Page) => page.evaluate(() => (window as any).__notReloaded === true);

describeBrowser("the sidebar, live", () => {
  const pool = serverPool({ "alert-interval": "3600" });
  afterAll(() => pool.closeAll());

  test("a rule that fires on the Alerts page: its state, its Notices and the alerts channel show without a reload", async () => {
    const server = await pool.withOwner();
    await ok(sendEvent(server, { project: "default", channel: "cron", event: "Backup done" }));
    await server.services.alerts.create({
      project: "default",
      name: "Nightly backup",
      kind: "absence",
      filter: { channel: "cron" },
      period: 60,
    });
    await withPage(browser, "live-alerts", async (page) => {
      await signIn(page, server);
      await page.goto(`${server.url}/p/default/alerts`);
      expect(await page.isVisible("[data-testid=notices]")).toBe(false);
      expect(await sidebar(page)).toEqual(["# cron"]);
      await page.locator("#channel-list[data-following]").waitFor();
      await mark(page);

      const rule = (await server.services.alerts.list("default"))[0]!;
      await server.services.alerts.runner.round(rule.since + 2 * 60_000);
      await page.locator("#channel-list li", { hasText: "# alerts" }).waitFor();
      expect(await sidebar(page)).toEqual(["# alerts", "# cron"]);
      await page.locator("[data-testid=notices]").waitFor({ state: "visible" });
      // The list is asked again every 10 seconds.
      await page.locator("[data-testid=alert-row][data-state=firing]").waitFor({ timeout: 25_000 });
      expect(await notReloaded(page)).toBe(true);
      await page.click("[data-testid=notices]");
      await page.waitForURL((url) => url.pathname === "/p/default/c/alerts");
      expect(await page.locator("#events .event").first().textContent()).toContain("Nightly backup: no event for");
    });
  });

  test("a channel made by an event appears in its place on a page without a stream, a metric's page and the feed", async () => {
    const server = await pool.withOwner();
    await ok(sendEvent(server, { project: "default", channel: "billing", event: "Paid" }));
    await ok(sendEvent(server, { project: "default", channel: "web", event: "Visit" }));
    await ok(sendMetric(server, { project: "default", title: "Queue", value: 1 }));
    await withPage(browser, "live-sidebar", async (page) => {
      await signIn(page, server);
      // The charts: no stream of their own, so the sidebar opens one for new channels.
      await page.goto(`${server.url}/p/default/charts`);
      await page.locator("#channel-list[data-following]").waitFor();
      await mark(page);
      await ok(sendEvent(server, { project: "default", channel: "deploys", event: "Deployed" }));
      await page.locator("#channel-list li", { hasText: "# deploys" }).waitFor();
      expect(await sidebar(page)).toEqual(["# billing", "# deploys", "# web"]);
      expect(await notReloaded(page)).toBe(true);

      // A metric's page hears of channels on its own stream (it is following once a new value shows).
      await page.goto(`${server.url}/p/default/metrics/Queue`);
      await mark(page);
      for (let value = 2; ; value++) {
        await ok(sendMetric(server, { project: "default", title: "Queue", value }));
        const shown = await page
          .waitForFunction(
            (v) => document.querySelector("[data-testid=metric-value]")?.textContent === String(v),
            value,
            { timeout: 1000 },
          )
          .then(() => true)
          .catch(() => false);
        if (shown) break;
        if (value > 2 + STEP_TIMEOUT / 1000) throw new Error("the metric's page never followed its metric");
      }
      expect(await page.locator("#channel-list[data-following]").count()).toBe(0); // one stream per page
      await ok(sendEvent(server, { project: "default", channel: "alpha", event: "First" }));
      await page.locator("#channel-list li", { hasText: "# alpha" }).waitFor();
      expect(await sidebar(page)).toEqual(["# alpha", "# billing", "# deploys", "# web"]);
      expect(await notReloaded(page)).toBe(true);

      // The feed, as before.
      await page.goto(`${server.url}/p/default`);
      await page.locator(".live-status", { hasText: "Live" }).waitFor();
      await mark(page);
      await ok(sendEvent(server, { project: "default", channel: "zulu", event: "Last" }));
      await page.locator("#channel-list li", { hasText: "# zulu" }).waitFor();
      expect(await sidebar(page)).toEqual(["# alpha", "# billing", "# deploys", "# web", "# zulu"]);
      expect(await page.locator("#channel-list[data-following]").count()).toBe(0);
      expect(await notReloaded(page)).toBe(true);
    });
  });
});
