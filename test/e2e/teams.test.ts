// Teams in real Chromium: the owner gives a role and projects in Settings → Members, a viewer
// limited to one project sees only it and is offered nothing to change, anyone changes their own
// password in Settings → Account (their other sessions end), the owner reads Settings → Audit,
// and a new token comes with a curl command and LogSnag's client set up for this server.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import {
  CHROMIUM,
  describeBrowser,
  launch,
  OWNER,
  path,
  serverPool,
  signIn,
  STEP_TIMEOUT,
  watchProblems,
  withPage,
} from "./browser.ts";

let browser: Browser;
beforeAll(async () => {
  if (existsSync(CHROMIUM)) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

/** A second person's page in a context of its own (its own cookies), watched for errors and CSP violations. */
async function otherPage(): Promise<{ page: Page; problems: string[]; close: () => Promise<void> }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  context.setDefaultTimeout(STEP_TIMEOUT);
  const page = await context.newPage();
  return { page, problems: watchProblems(page), close: () => context.close() };
}

describeBrowser("teams", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  test("the owner adds a viewer limited to one project and changes them; the viewer sees only it, and nothing to change", async () => {
    const server = await pool.withOwner();
    await server.services.projects.create("shop");
    const vera = { username: "vera", password: "vera's long password" };
    await withPage(browser, "teams-members", async (page) => {
      await signIn(page, server);
      await page.goto(server.url + "/settings/members");
      await page.fill("#member-username", vera.username);
      await page.fill("#member-password", vera.password);
      await page.selectOption("#member-role", "viewer");
      // Ticking a project chooses "only these".
      await page.locator("#member-form").getByLabel("shop").check();
      expect(await page.locator("#member-form input[name=reach][value=some]").isChecked()).toBe(true);
      await Promise.all([page.waitForEvent("load"), page.click("#member-form button[type=submit]")]);
      expect(await page.locator("[data-testid=role-vera]").textContent()).toBe("viewer");
      expect(await page.locator("[data-testid=projects-vera]").textContent()).toBe("shop");

      const other = await otherPage();
      try {
        await signIn(other.page, server, vera);
        expect(path(other.page)).toBe("/p/shop");
        expect(await other.page.locator("#project-list a").allTextContents()).toEqual(["shop"]);
        // Nothing to change is offered: no new project or channel, no project settings, no arranging.
        for (const id of ["new-project", "new-channel", "project-settings", "arrange", "new-chart"])
          expect({ id, visible: await other.page.locator(`[data-testid=${id}]`).isVisible() }).toEqual({
            id,
            visible: false,
          });
        // Another project does not exist for her.
        const hidden = await other.page.goto(server.url + "/p/default");
        expect(hidden?.status()).toBe(404);
        await other.page.getByText('Project "default" does not exist, or is not one of yours.').waitFor();
        await other.page.goto(server.url + "/settings");
        expect(path(other.page)).toBe("/settings/account");
        expect(
          await other.page.getByRole("navigation", { name: "Settings" }).getByRole("link").allTextContents(),
        ).toEqual(["Account", "Notifications"]);
        await other.page.getByText("viewer: sees pages, searches and charts; changes nothing").waitFor();

        // The owner makes her a member of every project; her next page shows it.
        await page.click("[data-testid=change-vera]");
        const change = page.locator("details.member-change[open] form");
        await change.getByLabel("Role").selectOption("member");
        await change.getByLabel("Every project, including new ones").check();
        expect(await change.getByLabel("shop").isChecked()).toBe(false);
        await Promise.all([page.waitForEvent("load"), change.getByRole("button", { name: "Save" }).click()]);
        await page.locator("[data-testid=member-saved]").waitFor();
        expect(await page.locator("[data-testid=member-saved]").textContent()).toContain(
          "vera is a member and sees every project",
        );
        expect(await page.locator("[data-testid=role-vera]").textContent()).toBe("member");

        await other.page.goto(server.url + "/p/shop");
        expect(await other.page.locator("#project-list a").allTextContents()).toEqual(["default", "shop"]);
        expect(await other.page.locator("[data-testid=project-settings]").isVisible()).toBe(true);
        expect(other.problems).toEqual([]);
      } finally {
        await other.close();
      }
    });
  });

  test("Settings → Account changes one's password: a mistake is shown by its field, the other sessions end, this one stays", async () => {
    const server = await pool.withOwner();
    const elsewhere = await otherPage();
    try {
      await signIn(elsewhere.page, server);
      await withPage(browser, "teams-password", async (page) => {
        await signIn(page, server);
        await page.goto(server.url + "/settings/account");
        await page.fill("#current-password", OWNER.password);
        await page.fill("#new-password", "a brand new passphrase");
        await page.fill("#confirm-password", "a brand new passphrase!");
        await page.click("#password-form button[type=submit]");
        await page.locator("#confirm-error").waitFor();
        expect(await page.locator("#confirm-error").textContent()).toBe("the two new passwords differ");
        expect(await page.locator("#confirm-password").getAttribute("aria-invalid")).toBe("true");
        await page.fill("#current-password", OWNER.password);
        await page.fill("#new-password", "a brand new passphrase");
        await page.fill("#confirm-password", "a brand new passphrase");
        await page.click("#password-form button[type=submit]");
        await page.locator("[data-testid=password-changed]").waitFor();
        // This session stays; the other one is signed out.
        await page.goto(server.url + "/p/default");
        expect(path(page)).toBe("/p/default");
        await elsewhere.page.reload();
        expect(path(elsewhere.page)).toBe("/login");
        await signIn(elsewhere.page, server, { username: OWNER.username, password: "a brand new passphrase" });
        expect(path(elsewhere.page)).toBe("/p/default");
      });
      expect(elsewhere.problems).toEqual([]);
    } finally {
      await elsewhere.close();
    }
  });

  test("Settings → Audit lists sign-ins (failed ones too), tokens and members: who, what, when, from where", async () => {
    const server = await pool.withOwner();
    await server.services.accounts.login(OWNER.username, "not the password", "203.0.113.5");
    await withPage(browser, "teams-audit", async (page) => {
      await signIn(page, server);
      await page.goto(server.url + "/settings/audit");
      const rows = page.locator("[data-testid=audit-row]");
      expect(await rows.first().locator("td").nth(2).textContent()).toContain("Signed in");
      const failed = page.locator("tr.audit-sign_in-failed");
      expect(await failed.locator("td").nth(1).textContent()).toBe("owner");
      expect(await failed.locator("td").nth(3).textContent()).toBe("wrong password");
      expect(await failed.locator("td").nth(4).textContent()).toBe("203.0.113.5");
      expect(await page.locator("tr.audit-owner-created").count()).toBe(1);
    });
  });

  test("a new token comes with a curl command and LogSnag's client for this server, each with a copy button; the header says “API docs”", async () => {
    const server = await pool.withOwner({ "base-url": "https://signalboard.example.com" });
    await withPage(browser, "teams-token-snippets", async (page, context) => {
      await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
      await signIn(page, server);
      expect(
        await page.locator(".topbar").getByRole("link", { name: "API docs", exact: true }).getAttribute("href"),
      ).toBe("/docs");
      await page.goto(server.url + "/settings/api");
      await page.fill("#token-name", "laptop");
      await page.click("#token-create button[type=submit]");
      const token = await page.locator("[data-testid=new-token-value]").inputValue();
      const curl = await page.locator("[data-testid=snippet-curl]").textContent();
      expect(curl).toContain("curl https://signalboard.example.com/v1/log \\\n");
      expect(curl).toContain(`-H "Authorization: Bearer ${token}"`);
      const sdk = await page.locator("[data-testid=snippet-sdk]").textContent();
      expect(sdk).toContain('import { LogSnag } from "@logsnag/node";');
      expect(sdk).toContain('.replace("https://api.logsnag.com", "https://signalboard.example.com")');
      expect(sdk).toContain(`new LogSnag({ token: "${token}", project: "default" })`);
      await page.locator(".snippet-box", { hasText: "Try it with curl" }).getByRole("button", { name: "Copy" }).click();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(curl!);

      // The same name again is refused, with what to do.
      await page.fill("#token-name", "laptop");
      await page.click("#token-create button[type=submit]");
      await page.locator("[data-testid=token-error]").waitFor();
      expect(await page.locator("[data-testid=token-error]").textContent()).toContain(
        'A token named "laptop" already exists',
      );
      expect(await page.locator("table.tokens tbody tr", { hasText: "laptop" }).count()).toBe(1);
    });
  });

  test("375 px: Settings → Account, Members (a person's change form open) and Audit fit the screen", async () => {
    const server = await pool.withOwner();
    await server.services.accounts.createUser(
      { username: "a-rather-long-username-for-a-phone", password: "long enough password" },
      "viewer",
      { projects: ["default"] },
    );
    await server.services.accounts.login(
      "someone-who-typed-a-very-long-name-indeed",
      "wrong",
      "2001:db8:85a3:0000:0000:8a2e:0370:7334",
    );
    await withPage(
      browser,
      "teams-phone",
      async (page) => {
        await signIn(page, server);
        const fits = async (what: string) =>
          expect({ what, width: await page.evaluate(() => document.documentElement.scrollWidth) }).toEqual({
            what,
            width: 375,
          });
        for (const path of ["/settings/account", "/settings/members", "/settings/audit"]) {
          await page.goto(server.url + path);
          await fits(path);
        }
        await page.goto(server.url + "/settings/members");
        await page.click("[data-testid=change-a-rather-long-username-for-a-phone]");
        await page.locator("details.member-change[open] form").waitFor();
        await fits("the change form");
      },
      { viewport: { width: 375, height: 800 } },
    );
  });
});
