// Single sign-on in Chromium against a real OpenID provider on 127.0.0.1: the sign-in page's
// button, the provider's own login page, back signed in, and signing out at both ends.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import type { Browser } from "playwright-core";
import { startOidcProvider, type TestProvider } from "../oidc-provider.ts";
import { CHROMIUM, describeBrowser, launch, serverPool, withPage } from "./browser.ts";

let browser: Browser;
let provider: TestProvider;
beforeAll(async () => {
  if (existsSync(CHROMIUM)) browser = await launch();
  provider = await startOidcProvider({ redirectUri: "http://unused.test/cb", afterSignOut: "http://unused.test/" });
  provider.people.set("dana-sub", { email: "dana@example.com", preferred_username: "dana", groups: ["sb-team"] });
});
afterAll(async () => {
  await browser?.close();
  await provider?.close();
});

describeBrowser("single sign-on", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  test("Sign in with the provider, land where the person was going, with the role their group gives; sign out at both ends", async () => {
    const server = await pool.withOwner({
      "outbound-allow": "127.0.0.1",
      "oidc-issuer": provider.issuer,
      "oidc-client-id": provider.clientId,
      "oidc-client-secret": provider.clientSecret,
      "oidc-scopes": "openid profile email groups",
      "oidc-name": "Test SSO",
      "oidc-roles-claim": "groups",
      "oidc-role-map": "sb-team=member",
    });
    // The browser goes where the provider sends it back: BASE_URL (http://localhost:PORT).
    const base = server.services.config.baseUrl;
    provider.allowRedirect(base);
    await withPage(browser, "oidc-sign-in", async (page) => {
      await page.goto(`${base}/settings/account`);
      await page.waitForURL((url) => url.pathname === "/login");
      await page.getByRole("link", { name: "Sign in with Test SSO" }).click();
      await page.waitForURL((url) => url.href.startsWith(provider.issuer));
      await page.getByLabel("Who are you?").fill("dana-sub");
      await page.getByRole("button", { name: "Continue" }).click();
      await page.waitForURL((url) => url.href === `${base}/settings/account`);
      expect(await page.textContent("body")).toContain("dana");
      const dana = (await server.services.accounts.list()).find((u) => u.username === "dana")!;
      expect(dana.role).toBe("member");

      await page.locator("form[action='/logout'] button").first().click();
      await page.waitForURL((url) => url.href.startsWith(`${provider.issuer}/session/end`));
      const cookies = await page.context().cookies(base);
      expect(cookies.find((c) => c.name === "sb_session")).toBeUndefined();
    });
  });
});
