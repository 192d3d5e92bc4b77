// The Alerts page in a real browser: a rule made with the form (its fields follow the kind chosen),
// listed with its state, paused and resumed, tested (a notice in the alerts channel, and a toast),
// shown firing once it does, changed and deleted; a form with mistakes says which field is wrong.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import type { Browser } from "playwright-core";
import { CHROMIUM, describeBrowser, launch, ok, path, sendEvent, serverPool, signIn, withPage } from "./browser.ts";

let browser: Browser;
beforeAll(async () => {
  if (existsSync(CHROMIUM)) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

describeBrowser("the Alerts page", () => {
  const pool = serverPool({ "alert-interval": "3600" });
  afterAll(() => pool.closeAll());

  test("a rule made, paused, resumed, tested, seen firing, changed and deleted", async () => {
    const server = await pool.withOwner();
    await ok(sendEvent(server, { project: "default", channel: "cron", event: "Backup done" }));
    await withPage(browser, "alerts-page", async (page) => {
      await signIn(page, server);
      await page.goto(`${server.url}/p/default`);
      await page.click("[data-testid=project-alerts]");
      await page.click("[data-testid=new-alert]");
      // Only the absence rule's fields show; choosing count shows its window instead.
      expect(await page.isVisible("#alert-period")).toBe(true);
      expect(await page.isVisible("#alert-window")).toBe(false);
      await page.selectOption("#alert-kind", "count");
      expect(await page.isVisible("#alert-window")).toBe(true);
      expect(await page.isVisible("#alert-period")).toBe(false);
      await page.selectOption("#alert-kind", "absence");
      await page.fill("#alert-name", "Nightly backup");
      await page.fill("#alert-channel", "cron");
      await page.fill("#alert-event", "Backup done");
      await page.fill("#alert-period", "1m");
      await page.fill("#alert-grace", "10s");
      await page.fill("#alert-repeat", "1h30m");
      await page.click("[data-testid=save-alert]");
      await page.waitForURL((url) => url.pathname === "/p/default/alerts");
      const row = page.locator("[data-testid=alert-row]", { hasText: "Nightly backup" });
      expect(await row.locator("[data-testid=alert-state]").textContent()).toBe("OK");
      // Durations as they were typed, not in seconds or spelled out.
      expect(await row.textContent()).toContain(
        "#cron “Backup done”: expected every 1m, grace 10s; repeats every 1h30m while firing",
      );

      await row.getByRole("button", { name: "Pause Nightly backup" }).click();
      await page.locator("[data-testid=alert-row][data-state=paused]").waitFor();
      await page.locator("[data-testid=alert-row]").getByRole("button", { name: "Resume Nightly backup" }).click();
      await page.locator("[data-testid=alert-row][data-state=ok]").waitFor();

      await page.locator("[data-testid=alert-row]").getByRole("button", { name: "Test Nightly backup" }).click();
      await page.locator(".toast", { hasText: "Sent a test notice of “Nightly backup”" }).waitFor();

      const rule = (await server.services.alerts.list("default"))[0]!;
      await server.services.alerts.runner.round(rule.since + 2 * 60_000);
      await page.reload();
      expect(await page.locator("[data-testid=alert-state]").textContent()).toBe("Firing");
      await page.click("text=Notices");
      expect(path(page)).toBe("/p/default/c/alerts");
      expect(await page.locator("#events .event").first().textContent()).toContain("Nightly backup: no event for");

      await page.goto(`${server.url}/p/default/alerts`);
      await page.locator("[data-testid=alert-row]").getByRole("link", { name: "Edit Nightly backup" }).click();
      expect(await page.inputValue("#alert-period")).toBe("1m");
      expect(await page.inputValue("#alert-grace")).toBe("10s");
      expect(await page.inputValue("#alert-repeat")).toBe("1h30m");
      await page.fill("#alert-name", "Backup of db1");
      await page.click("[data-testid=save-alert]");
      await page.locator("[data-testid=alert-row]", { hasText: "Backup of db1" }).waitFor();

      await page.locator("[data-testid=alert-row]").getByRole("button", { name: "Delete Backup of db1" }).click();
      await page.click("dialog [data-testid=confirm]");
      await page.locator("#alert-list", { hasText: "No alert rules yet" }).waitFor();
    });
  });

  test("a heartbeat for a job that has never reported names its channel: the channels there are offered, a new name is taken, a bad one refused", async () => {
    const server = await pool.withOwner();
    await ok(sendEvent(server, { project: "default", channel: "cron", event: "Backup done" }));
    await ok(sendEvent(server, { project: "default", channel: "deploys", event: "Deployed" }));
    await withPage(browser, "alerts-new-channel", async (page) => {
      await signIn(page, server);
      await page.goto(`${server.url}/p/default/alerts/new`);
      // The project's channels are suggested as you type.
      const offered = await page.$eval("#alert-channel", (input) =>
        [...((input as HTMLInputElement).list?.options ?? [])].map((o) => o.value),
      );
      expect(offered).toEqual(["cron", "deploys"]);
      await page.fill("#alert-name", "Nightly report");
      await page.fill("#alert-channel", "Nightly Report");
      await page.fill("#alert-period", "1d");
      await page.click("[data-testid=save-alert]");
      await page.locator(".error-summary").waitFor();
      expect(await page.textContent("#alert-channel-error")).toContain("lowercase letters, digits or dashes");
      expect(await page.inputValue("#alert-channel")).toBe("Nightly Report");
      expect(await page.getAttribute("#alert-channel", "aria-invalid")).toBe("true");

      await page.fill("#alert-channel", "nightly-report");
      await page.click("[data-testid=save-alert]");
      await page.waitForURL((url) => url.pathname === "/p/default/alerts");
      expect(await page.locator("[data-testid=alert-row]").textContent()).toContain("#nightly-report");
      const [rule] = await server.services.alerts.list("default");
      expect(rule!.filter.channel).toBe("nightly-report");
      // The edit form shows it as saved, though the channel still has no event.
      await page.locator("[data-testid=alert-row]").getByRole("link", { name: "Edit Nightly report" }).click();
      expect(await page.inputValue("#alert-channel")).toBe("nightly-report");
      // Emptied, the rule watches every channel.
      await page.fill("#alert-channel", "");
      await page.click("[data-testid=save-alert]");
      await page.waitForURL((url) => url.pathname === "/p/default/alerts");
      expect((await server.services.alerts.list("default"))[0]!.filter.channel).toBeUndefined();
    });
  });

  test("a form with mistakes names each, and keeps what was typed", async () => {
    const server = await pool.withOwner();
    await withPage(
      browser,
      "alerts-form-errors",
      async (page) => {
        await signIn(page, server);
        await page.goto(`${server.url}/p/default/alerts/new`);
        await page.selectOption("#alert-kind", "count");
        await page.fill("#alert-name", "Errors");
        await page.fill("#alert-window", "soon");
        await page.click("[data-testid=save-alert]");
        await page.locator(".error-summary").waitFor();
        expect(await page.textContent("#alert-window-error")).toContain("use seconds, or a duration");
        expect(await page.inputValue("#alert-window")).toBe("soon");
        await page.fill("#alert-window", "2");
        await page.click("[data-testid=save-alert]");
        expect(await page.textContent("#alert-window-error")).toContain("at least 5 seconds");
        await page.fill("#alert-window", "5m");
        await page.click("[data-testid=save-alert]");
        expect(await page.textContent("#alert-limit-error")).toContain("fires above or below a number");
        expect(await page.inputValue("#alert-window")).toBe("5m");
        expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
      },
      { viewport: { width: 375, height: 812 }, colorScheme: "dark" },
    );
  });

  test("maintenance windows are added (once, or on a schedule) and deleted in the page's own section", async () => {
    const server = await pool.withOwner();
    await withPage(browser, "alerts-maintenance", async (page) => {
      await signIn(page, server);
      await page.goto(`${server.url}/p/default/alerts`);
      await page.locator("[data-testid=no-maintenance]").waitFor();
      // The time zone starts as the browser's; the schedule's fields show when it is chosen.
      expect(await page.inputValue("#maintenance-tz")).not.toBe("");
      expect(await page.isVisible("#maintenance-cron")).toBe(false);
      await page.fill("#maintenance-name", "Upgrade");
      await page.fill("#maintenance-start", "2031-03-01T03:00");
      await page.fill("#maintenance-end", "2031-03-01T01:00");
      await page.fill("#maintenance-tz", "UTC");
      await page.click("[data-testid=add-maintenance]");
      expect(await page.locator("#maintenance-end-error").textContent()).toContain("must be after starts_at");
      await page.fill("#maintenance-end", "2031-03-01T05:00");
      await page.click("[data-testid=add-maintenance]");
      await page.locator("[data-testid=maintenance-row]", { hasText: "Upgrade" }).waitFor();
      await page.selectOption("#maintenance-kind", "cron");
      expect(await page.isVisible("#maintenance-start")).toBe(false);
      await page.fill("#maintenance-name", "Nightly");
      await page.fill("#maintenance-cron", "0 3 * * *");
      await page.fill("#maintenance-length", "1h");
      await page.click("[data-testid=add-maintenance]");
      await page.locator("[data-testid=maintenance-row]", { hasText: "Nightly" }).waitFor();
      expect(await page.locator("[data-testid=maintenance-row]").count()).toBe(2);
      await page.getByRole("button", { name: "Delete Upgrade" }).click();
      await page.locator("[data-testid=maintenance-row]", { hasText: "Upgrade" }).waitFor({ state: "detached" });
      expect((await server.services.maintenance.list("default")).map((w) => w.name)).toEqual(["Nightly"]);
    });
  });
});
