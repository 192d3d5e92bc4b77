import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import type { TestServer } from "../helpers.ts";
import { describeBrowser, launch, sendEvent, serverWithOwner, signIn, withPage } from "./browser.ts";

describeBrowser("smoke", () => {
  let browser: Browser;
  let server: TestServer;
  beforeAll(async () => {
    browser = await launch();
    server = await serverWithOwner();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  test("an event sent over HTTP appears live", async () => {
    await withPage(browser, "smoke-live", async (page) => {
      await signIn(page, server);
      await page.goto(`${server.url}/p/default`);
      await page.waitForSelector(".live-status.live");
      await sendEvent(server, { project: "default", channel: "smoke", event: "Hello from smoke" });
      await page.waitForSelector("text=Hello from smoke", { timeout: 3000 });
      expect(await page.locator(".event").count()).toBe(1);
    });
  }, 30_000);
});
