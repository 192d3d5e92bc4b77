// A second factor as people use it: set up in Settings → Account and signed in with, in Chromium
// (the QR code drawn inline, the key read off the page, the code computed by otpauth as an
// authenticator app would), and `signalboard user reset-2fa` for a lost phone.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { Secret, TOTP } from "otpauth";
import type { Browser } from "playwright-core";
import { Agent, signedIn, startTestServer } from "../helpers.ts";
import { CHROMIUM, describeBrowser, launch, OWNER, path, serverPool, signIn, withPage } from "./browser.ts";
import { PROGRAM, run } from "./process.ts";

const codeAt = (secret: string, at: number) =>
  new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: "SHA1" }).generate({ timestamp: at });

let browser: Browser;
beforeAll(async () => {
  if (existsSync(CHROMIUM)) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

describeBrowser("two-step sign-in in the browser", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  test("turn on an authenticator from its QR code's key, then sign in with the password and a code", async () => {
    const server = await pool.withOwner();
    let secret = "";
    await withPage(browser, "totp-setup", async (page) => {
      await signIn(page, server);
      await page.goto(`${server.url}/settings/account`);
      await page.click('[data-testid="totp-start"]');
      const qr = page.locator('[data-testid="totp-qr"] svg');
      await qr.waitFor();
      expect((await qr.boundingBox())!.width).toBeGreaterThan(100);
      secret = (await page.textContent('[data-testid="totp-key"]'))!.replace(/\s+/g, "");
      await page.fill("#code", codeAt(secret, server.clock.now()));
      await page.click('[data-testid="totp-confirm"]');
      await page.locator('[data-testid="recovery-codes"] li').nth(9).waitFor();
    });
    await server.clock.advance(30_000); // a new step: the code that turned it on is spent
    await withPage(browser, "totp-sign-in", async (page) => {
      await page.goto(`${server.url}/login`);
      await page.fill("#username", OWNER.username);
      await page.fill("#password", OWNER.password);
      await page.click("form button[type=submit]");
      await page.waitForURL((url) => url.pathname === "/login/second-factor");
      await page.fill("#code", "000000");
      await page.click("form button[type=submit]");
      await page.getByRole("alert").waitFor();
      expect(path(page)).toBe("/login/second-factor");
      await page.fill("#code", codeAt(secret, server.clock.now()));
      await page.click("form button[type=submit]");
      await page.waitForURL((url) => !url.pathname.startsWith("/login"));
      expect((await page.context().cookies()).some((c) => c.name === "sb_session")).toBe(true);
    });
    const methods = (await server.services.audit.list()).filter((e) => e.action === "sign_in.succeeded");
    expect(methods.map((e) => e.detail)).toEqual(["password + totp", "password"]);
  });
});

test("signalboard user reset-2fa NAME removes a lost authenticator, in the audit trail; an unknown name exits 1", async () => {
  const server = await startTestServer();
  try {
    const { accounts, secondFactor, audit } = server.services;
    const ann = await accounts.createUser({ username: "ann", password: "ann password 1" }, "member");
    const secret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";
    await secondFactor.enable(ann, secret, codeAt(secret, server.clock.now()), {
      userId: ann.id,
      name: "ann",
      ip: null,
    });
    const cli = (...args: string[]) => run(PROGRAM, [...args, "--data-dir", server.dataDir]);
    const reset = await cli("user", "reset-2fa", "Ann");
    expect(reset.code).toBe(0);
    expect(reset.stdout).toContain(`Removed from "ann": their authenticator and its recovery codes`);
    expect(await secondFactor.status(ann.id)).toEqual({ enabled: false, recoveryLeft: 0 });
    expect((await audit.list())[0]).toMatchObject({
      action: "second_factor.reset",
      actor: "command line",
      subject: "user ann",
    });
    // The password alone signs in again.
    const agent = await signedIn(server, { username: "ann", password: "ann password 1" });
    expect(agent).toBeInstanceOf(Agent);
    expect((await cli("user", "reset-2fa", "ann")).stdout).toContain("has no second factor");
    expect((await cli("user", "reset-2fa", "nobody")).code).toBe(1);
  } finally {
    await server.close();
  }
});
