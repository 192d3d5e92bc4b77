// Passkeys as people use them, in Chromium with its virtual authenticator (CDP's WebAuthn domain):
// one added in Settings → Account, then signing in with the password and the passkey, then with
// the passkey alone. WebAuthn refuses an IP address as the relying party, so the pages are opened
// at BASE_URL's origin, http://localhost:<port> (a secure context over http).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { CHROMIUM, describeBrowser, launch, OWNER, serverPool, withPage } from "./browser.ts";

let browser: Browser;
beforeAll(async () => {
  if (existsSync(CHROMIUM)) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

/** An authenticator built into this page's browser: discoverable credentials, verifying its user. */
async function virtualAuthenticator(page: Page): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      transport: "internal",
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
    },
  });
}

async function signOut(page: Page): Promise<void> {
  await page.context().clearCookies();
}

describeBrowser("passkeys in the browser", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  test("add a passkey, sign in with the password and the passkey, then with the passkey alone", async () => {
    const server = await pool.withOwner();
    const origin = server.services.config.baseUrl;
    expect(origin).toMatch(/^http:\/\/localhost:\d+$/);
    await withPage(browser, "passkeys", async (page) => {
      await virtualAuthenticator(page);
      await page.goto(`${origin}/login`);
      await page.fill("#username", OWNER.username);
      await page.fill("#password", OWNER.password);
      await page.click("form button[type=submit]");
      await page.waitForURL((url) => !url.pathname.startsWith("/login"));

      await page.goto(`${origin}/settings/account`);
      await page.fill('[data-testid="passkey-name"]', "This laptop");
      await page.click('[data-testid="passkey-add"]');
      await page.locator('[data-testid="passkey-item-name"]', { hasText: "This laptop" }).waitFor();

      await signOut(page);
      await page.goto(`${origin}/login`);
      await page.fill("#username", OWNER.username);
      await page.fill("#password", OWNER.password);
      await page.click("form button[type=submit]");
      await page.waitForURL((url) => url.pathname === "/login/second-factor");
      await page.click('[data-testid="passkey-step"]');
      await page.waitForURL((url) => !url.pathname.startsWith("/login"));
      expect((await page.context().cookies()).some((c) => c.name === "sb_session")).toBe(true);

      await signOut(page);
      await page.goto(`${origin}/login`);
      await page.click('[data-testid="passkey-sign-in"]');
      await page.waitForURL((url) => !url.pathname.startsWith("/login"));
      expect((await page.context().cookies()).some((c) => c.name === "sb_session")).toBe(true);
      await page.goto(`${origin}/settings/account`);
      await page.getByText("last used").waitFor();
    });
    const methods = (await server.services.audit.list()).filter((e) => e.action === "sign_in.succeeded");
    expect(methods.map((e) => e.detail)).toEqual(["passkey", "password + passkey", "password"]);
    expect((await server.services.audit.list()).find((e) => e.action === "second_factor.enabled")?.detail).toBe(
      'passkey "This laptop"',
    );
  });
});
