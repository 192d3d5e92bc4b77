// The Checks page in a real browser: a check added with the form, its ping URL copied with the copy
// button, pinged from the test as a crontab would (start, then success), and its row turning up and
// its run bar growing live, over the page's stream, without a reload; paused and deleted from the page.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import type { Browser } from "playwright-core";
import { CHROMIUM, describeBrowser, launch, serverPool, signIn, withPage } from "./browser.ts";

let browser: Browser;
beforeAll(async () => {
  if (existsSync(CHROMIUM)) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

describeBrowser("the Checks page", () => {
  const pool = serverPool({ "alert-interval": "3600", "rate-limit-ping": "0" });
  afterAll(() => pool.closeAll());

  test("a check added, its URL copied and pinged: the row turns up and the run bar grows live", async () => {
    const server = await pool.withOwner();
    await withPage(browser, "checks-page", async (page, context) => {
      await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
      await signIn(page, server);
      await page.goto(`${server.url}/p/default`);
      await page.click("[data-testid=project-checks]");
      await page.click("[data-testid=new-check]");
      await page.fill("#check-name", "Nightly backup");
      await page.fill("#check-period", "1d");
      await page.fill("#check-grace", "1h");
      await page.click("[data-testid=save-check]");
      await page.waitForURL((url) => url.pathname === "/p/default/checks");
      const row = page.locator("[data-testid=check-row]", { hasText: "Nightly backup" });
      expect(await row.locator("[data-testid=check-state]").textContent()).toBe("New");
      expect(await row.locator("[data-testid=run-bar]").getAttribute("data-runs")).toBe("0");
      // The page follows its stream before anything is pinged.
      await page.locator("[x-data=checksPage][data-following='1']").waitFor();

      await row.getByRole("button", { name: "Copy Ping URL of Nightly backup" }).click();
      const url = await page.evaluate(() => navigator.clipboard.readText());
      expect(url).toMatch(/\/ping\/[0-9a-f-]{36}$/);

      expect((await fetch(`${url}/start`)).status).toBe(200);
      await page.locator("[data-testid=check-row][data-state=started]").waitFor();
      expect((await fetch(url, { method: "POST", body: "12 files" })).status).toBe(200);
      await page.locator("[data-testid=check-row][data-state=up]").waitFor();
      await page.locator("[data-testid=check-row] [data-testid=run-bar][data-runs='1']").waitFor();
      expect((await fetch(`${url}/1`)).status).toBe(200);
      await page.locator("[data-testid=check-row][data-state=down]").waitFor();
      await page.locator("[data-testid=check-row] [data-testid=run-bar][data-runs='2']").waitFor();
      expect(await page.locator("[data-testid=check-row] [data-testid=check-state]").textContent()).toBe("Down");

      // A check made by its first ping (?create=1) turns up too.
      const key = await page.inputValue("#ping-key");
      expect((await fetch(`${server.url}/ping/${key}/made-by-ping?create=1`)).status).toBe(200);
      await page.locator("[data-testid=check-row][data-slug=made-by-ping][data-state=up]").waitFor();

      // Its ping log, with the body.
      await page.getByRole("link", { name: "Nightly backup", exact: true }).click();
      await page.locator("[data-testid=ping-log]", { hasText: "12 files" }).waitFor();
      await page.goBack();

      const first = page.locator("[data-testid=check-row]", { hasText: "Nightly backup" });
      await first.getByRole("button", { name: "Pause Nightly backup" }).click();
      await page.locator("[data-testid=check-row][data-state=paused]").waitFor();
      await page
        .locator("[data-testid=check-row]", { hasText: "Nightly backup" })
        .getByRole("button", { name: "Delete Nightly backup" })
        .click();
      await page.click("dialog [data-testid=confirm]");
      await page.waitForFunction(() => document.querySelectorAll("[data-testid=check-row]").length === 1);
    });
  });
  test("a check past its due time turns late on the open page, with no ping and no reload", async () => {
    const server = await pool.withOwner();
    const c = await server.services.checks.create({ project: "default", name: "Quick job", period: 5, grace: 3600 });
    await withPage(browser, "checks-page-late", async (page) => {
      await signIn(page, server);
      expect((await fetch(`${server.url}/ping/${c.uuid}`)).status).toBe(200);
      await page.goto(`${server.url}/p/default/checks`);
      await page.locator("[data-testid=check-row][data-state=up]").waitFor();
      await page.evaluate(() => Object.assign(window, { sameLoad: true }));
      // Five seconds after its ping it is due; nothing is sent to the page then, and it says so itself.
      await page.locator("[data-testid=check-row][data-state=late]").waitFor();
      expect(await page.locator("[data-testid=check-state]").textContent()).toBe("Late");
      expect(await page.evaluate(() => "sameLoad" in window)).toBe(true);
    });
  });
});
