// Shared pages in Chromium: a shared dashboard's card follows new events live (no sign-in), a
// status page in the kiosk view follows the system's dark mode and fills the screen, and axe-core
// finds no serious or critical violation on either (as test/e2e/a11y.test.ts checks the dashboard).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Browser, Page } from "playwright-core";
import { call, startTestServer, type TestServer } from "../helpers.ts";
import { CHROMIUM, describeBrowser, launch, OWNER, sendEvent, signIn, withPage } from "./browser.ts";

let browser: Browser;
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ "alert-interval": "3600", "card-refresh": "1s" });
  await server.services.projects.create("shop");
  if (existsSync(CHROMIUM)) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
  await server.close();
});

const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

async function serious(page: Page): Promise<{ id: string; targets: string[] }[]> {
  await page.evaluate(AXE);
  const found = await page.evaluate(async () => {
    const result = await (window as any).axe.run(document, { resultTypes: ["violations"] });
    return result.violations.map((v: any) => ({
      id: v.id,
      impact: v.impact,
      targets: v.nodes.map((n: any) => String(n.target)).slice(0, 5),
    }));
  });
  return (found as { id: string; impact: string; targets: string[] }[]).filter(
    (v) => v.impact === "serious" || v.impact === "critical",
  );
}

describeBrowser("shared pages", () => {
  test("a shared dashboard follows new events live, without sign-in, and passes axe", async () => {
    const chart = await server.services.charts.create({
      project: "shop",
      kind: "series",
      name: "Orders",
      definition: { event: "order", last_days: 7 },
    });
    const made = await call(server, {
      path: "/v1/shares",
      body: { project: "shop", kind: "dashboard", charts: [chart.id] },
    });
    expect(made.status).toBe(200);
    await withPage(browser, "shared-dashboard-live", async (page) => {
      await page.goto(made.json.url.replace(server.services.config.baseUrl, server.url));
      const total = page.locator('[data-testid="chart-total"]');
      await total.waitFor();
      expect(await total.textContent()).toContain("No events");
      await page.locator(".shared-foot", { hasText: "(connected)" }).waitFor();
      await sendEvent(server, { project: "shop", channel: "sales", event: "order" });
      await page.locator('[data-testid="chart-total"]', { hasText: "1 event" }).waitFor();
      expect(await serious(page)).toEqual([]);
    });
    // On a wall screen one chosen card takes the whole width, and its chart a third of the height.
    await withPage(
      browser,
      "shared-dashboard-kiosk",
      async (page) => {
        await page.goto(`${made.json.url.replace(server.services.config.baseUrl, server.url)}?kiosk=1`);
        await page.locator(".chart canvas").first().waitFor();
        const card = (await page.locator(".chart-card").first().boundingBox())!;
        const chart = (await page.locator(".chart canvas").first().boundingBox())!;
        expect(card.width).toBeGreaterThan(1920 * 0.9);
        expect(chart.height).toBeGreaterThanOrEqual(1080 / 3 - 40);
      },
      { viewport: { width: 1920, height: 1080 } },
    );
  });

  test("a status page in the kiosk view follows dark mode, fills the screen, and passes axe", async () => {
    const check = await server.services.checks.create({ project: "shop", name: "Nightly export", period: 86400 });
    const another = await server.services.checks.create({ project: "shop", name: "Hourly sync", period: 3600 });
    const rule = await server.services.alerts.create({
      project: "shop",
      name: "Orders keep coming",
      kind: "absence",
      period: 3600,
    });
    await call(server, { path: "/v1/insight", body: { project: "shop", title: "Queue", value: 3 } });
    const made = await call(server, {
      path: "/v1/shares",
      body: {
        project: "shop",
        kind: "status",
        checks: [check.id, another.id],
        alerts: [rule.id],
        metrics: ["Queue"],
        title: "Shop status",
      },
    });
    expect(made.status).toBe(200);
    await withPage(
      browser,
      "shared-status-kiosk-dark",
      async (page) => {
        await page.goto(`${made.json.url.replace(server.services.config.baseUrl, server.url)}?kiosk=1`);
        await page.locator('[data-testid="status-item"]').first().waitFor();
        const look = await page.evaluate(() => ({
          background: getComputedStyle(document.body).backgroundColor,
          mainHeight: document.querySelector("main")!.getBoundingClientRect().height,
          bodyFont: Number.parseFloat(getComputedStyle(document.body).fontSize),
        }));
        expect(look.background).toBe("rgb(16, 18, 22)"); // the dark theme's --bg
        expect(look.mainHeight).toBeGreaterThanOrEqual(1080);
        expect(look.bodyFont).toBeGreaterThan(15);
        // The page's answer (all well, something down) is what a wall is read from: no smaller than a check's name.
        const size = (selector: string) =>
          page
            .locator(selector)
            .first()
            .evaluate((el) => Number.parseFloat(getComputedStyle(el).fontSize));
        expect(await size('[data-testid="status-overall"]')).toBeGreaterThanOrEqual(await size(".status-name"));
        expect(await page.locator('[data-testid="status-item"]').count()).toBe(3);
        // A wall cannot scroll: three checks and rules and a metric fit on the screen.
        await page.locator('[data-testid="status-metric"]').waitFor();
        expect(await page.evaluate(() => document.documentElement.scrollHeight)).toBeLessThanOrEqual(1080);
        expect(await serious(page)).toEqual([]);
      },
      { colorScheme: "dark", viewport: { width: 1920, height: 1080 } },
    );
  });
  test("an open page whose link is revoked says so across its top, in the kiosk view too", async () => {
    await call(server, { path: "/v1/insight", body: { project: "shop", title: "Revoked queue", value: 1 } });
    const made = await call(server, {
      path: "/v1/shares",
      body: { project: "shop", kind: "status", metrics: ["Revoked queue"], title: "Soon gone" },
    });
    expect(made.status).toBe(200);
    await withPage(
      browser,
      "shared-status-revoked",
      async (page) => {
        await page.goto(`${made.json.url.replace(server.services.config.baseUrl, server.url)}?kiosk=1`);
        const banner = page.locator('[data-testid="share-revoked"]');
        await page.locator('[data-testid="metric-value"]').first().waitFor();
        await page.waitForFunction(() => document.querySelector(".shared-foot")?.textContent?.includes("(connected)"));
        expect(await banner.isVisible()).toBe(false);
        expect((await call(server, { method: "DELETE", path: `/v1/shares/${made.json.id}` })).status).toBe(200);
        await banner.waitFor({ state: "visible" });
        expect(await banner.textContent()).toContain("revoked");
      },
      { viewport: { width: 1600, height: 900 } },
    );
  });
  test("the settings' share forms put each checkbox beside its name", async () => {
    await server.services.accounts.createUser(OWNER, "owner");
    await server.services.checks.create({ project: "shop", name: "Beside its box", period: 3600 });
    await withPage(browser, "share-form-checkboxes", async (page) => {
      await signIn(page, server);
      await page.goto(`${server.url}/p/shop/settings#shares`);
      const label = page.locator(".share-choices label", { hasText: "Beside its box" });
      const box = await label.locator("input[type=checkbox]").boundingBox();
      const text = await label.boundingBox();
      expect(box!.height).toBeLessThan(30);
      // One line: the box and its name side by side, not the box above its name.
      expect(text!.height).toBeLessThan(box!.height * 2.5);
      expect(box!.x).toBeLessThan(text!.x + 40);
    });
  });
});
