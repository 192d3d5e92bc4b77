// Accessibility: axe-core on every page of the dashboard, desktop and 375 px, light and dark. A page
// passes with no serious or critical violation. axe runs inside the page (evaluated by the test
// driver, which the page's Content-Security-Policy does not restrict).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Browser, Page } from "playwright-core";
import { Secret, TOTP } from "otpauth";
import { startTestServer, type TestServer } from "../helpers.ts";
import {
  CHROMIUM,
  describeBrowser,
  launch,
  OWNER,
  ok,
  sendEvent,
  sendMetric,
  serverPool,
  signIn,
  withPage,
} from "./browser.ts";

let browser: Browser;
beforeAll(async () => {
  if (existsSync(CHROMIUM)) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

type Found = { id: string; impact: string; help: string; targets: string[] };

/** The serious and critical violations axe finds on the page as it is now. */
async function audit(page: Page): Promise<Found[]> {
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const result = await (window as any).axe.run(document, { resultTypes: ["violations"] });
    return result.violations.map((v: any) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.map((n: any) => String(n.target)).slice(0, 5),
    }));
  });
  return (violations as Found[]).filter((v) => v.impact === "serious" || v.impact === "critical");
}

const VIEWS = [
  { name: "desktop light", viewport: { width: 1280, height: 900 }, colorScheme: "light" },
  { name: "desktop dark", viewport: { width: 1280, height: 900 }, colorScheme: "dark" },
  { name: "375 px light", viewport: { width: 375, height: 800 }, colorScheme: "light" },
  { name: "375 px dark", viewport: { width: 375, height: 800 }, colorScheme: "dark" },
] as const;

/** Content on every page: events (markdown with links, a quote and a blocked link; a historical one), tags, a user, metrics, an integration, a chart of each kind. */
async function seed(server: TestServer): Promise<{ eventId: number }> {
  const first = await ok(
    sendEvent(server, {
      project: "default",
      channel: "payments",
      event: "Payment received",
      icon: "💰",
      parser: "markdown",
      description:
        "Paid by **Acme**, see [the invoice](https://billing.example.com/i/1) and [this](javascript:alert(1)).\n\n> Thanks for the quick turnaround.",
      tags: { plan: "pro", seats: 5 },
      user_id: "alice@example.com",
      notify: false,
    }),
  );
  await ok(
    sendEvent(server, {
      project: "default",
      channel: "deploys",
      event: "Deployed",
      description: "v1.2.3 to production",
    }),
  );
  // A historical event: its mark is on the feeds too.
  await ok(
    sendEvent(server, {
      project: "default",
      channel: "deploys",
      event: "Backfilled",
      tags: { env: "prod" },
      timestamp: Math.floor(Date.now() / 1000) - 3600,
    }),
  );
  await ok(sendMetric(server, { title: "Signups", value: 42, icon: "📈" }));
  await ok(sendMetric(server, { title: "Status", value: "green" }));
  await server.services.integrations.create({
    project: "default",
    kind: "webhook",
    name: "ops",
    config: { url: "http://192.168.1.20:9/hook" }, // never sent to: no event of this seed notifies
  });
  await server.services.charts.create({
    project: "default",
    kind: "series",
    name: "Payments by plan",
    definition: { group_by: "tag:plan", last_days: 7 },
    position: 1,
  });
  await server.services.charts.create({
    project: "default",
    kind: "funnel",
    name: "Pay then deploy",
    definition: { steps: ["Payment received", "Deployed"], last_days: 7 },
    position: 2,
  });
  // Ten users sign up on one day and come back fewer each day after: a retention grid with every shade.
  const day = Date.UTC(2026, 0, 5) / 1000;
  for (let i = 0; i < 10; i++)
    for (const [event, days] of [
      ["Signed up", [0]],
      ["Opened app", Array.from({ length: 10 - i }, (_, d) => d)],
    ] as const)
      for (const d of days)
        await ok(
          sendEvent(server, {
            project: "default",
            channel: "signups",
            event,
            user_id: `user-${i}`,
            timestamp: day + d * 86_400 + 43_200,
          }),
        );
  await server.services.charts.create({
    project: "default",
    kind: "retention",
    name: "Back after sign-up",
    definition: { start_event: "Signed up", return_event: "Opened app", from: day, to: day + 2 * 86_400, periods: 10 },
    position: 3,
  });
  await server.services.alerts.create({
    project: "default",
    name: "Payments stopped",
    kind: "absence",
    filter: { channel: "payments" },
    period: 3600,
  });
  // A check that ran twice (a success with its start, a failure), for the Checks page and its ping log.
  const check = await server.services.checks.create({ project: "default", name: "Nightly backup", period: 86400 });
  for (const action of ["/start", "", "/fail"])
    await fetch(`${server.url}/ping/${check.uuid}${action}`, { method: "POST", body: "backup: 12 files" });
  // Someone with a role and a project, for Settings → Members (and a failed sign-in for Settings → Audit).
  await server.services.accounts.createUser({ username: "vera", password: "vera's long password" }, "viewer", {
    projects: ["default"],
  });
  await server.services.accounts.login("vera", "not her password", "203.0.113.5");
  return { eventId: first.id };
}

describeBrowser("accessibility (axe-core)", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  // One server with content for the four views; each view is a test of its own, so each has the
  // whole time limit for its thirty pages, however busy the machine.
  let server: TestServer;
  let paths: string[];
  beforeAll(async () => {
    server = await pool.withOwner();
    const { eventId } = await seed(server);
    paths = [
      "/p/default",
      "/p/default/settings",
      "/p/default/c/payments",
      `/p/default/events/${eventId}`,
      "/p/default/users",
      `/p/default/users/${encodeURIComponent("alice@example.com")}`,
      "/p/default/metrics/Signups",
      "/p/default/metrics/Status",
      "/p/default/charts",
      "/p/default/charts/new",
      "/p/default/charts/new?kind=funnel",
      "/p/default/charts/new?kind=metric",
      "/p/default/charts/1",
      "/p/default/charts/2",
      "/p/default/charts/1/edit",
      "/p/default/charts/new?kind=retention",
      "/p/default/charts/3",
      "/p/default/charts/3/edit",
      "/p/default/funnel/dropped?step=Payment+received&step=Deployed&at=2&range=7",
      "/p/default/alerts",
      "/p/default/alerts/new",
      "/p/default/alerts/1",
      "/p/default/checks",
      "/p/default/checks/1",
      "/settings/api",
      "/settings/notifications",
      "/settings/integrations",
      "/settings/members",
      "/settings/account",
      "/settings/audit",
      "/docs",
    ];
  });

  for (const view of VIEWS)
    test(`no serious or critical violation on any signed-in page, ${view.name}`, async () => {
      const found: Record<string, Found[]> = {};
      await withPage(
        browser,
        `a11y-${view.name}`,
        async (page) => {
          await signIn(page, server);
          for (const path of paths) {
            const response = await page.goto(server.url + path);
            expect({ path, status: response?.status() }).toEqual({ path, status: 200 });
            await page.waitForLoadState("load");
            // Cards and previews load after the page: audit them as they are shown.
            await page.waitForFunction(
              () => ![...document.querySelectorAll(".card-body")].some((el) => el.textContent?.includes("Loading…")),
            );
            const violations = await audit(page);
            if (violations.length) found[`${view.name} ${path}`] = violations;
          }
          // What opens on a page: the "+" name form with a refused name, the account menu (on a phone), a dialog.
          await page.goto(server.url + "/p/default/settings");
          if (view.viewport.width < 800) {
            await page.getByRole("button", { name: /^Account/ }).click();
            await page.locator("#account-links").waitFor({ state: "visible" });
            const menu = await audit(page);
            if (menu.length) found[`${view.name} account menu`] = menu;
            await page.keyboard.press("Escape");
            await page.getByRole("button", { name: "Menu" }).click();
          }
          await page.click("[data-testid=new-project]");
          await page.fill("#new-project-name", "Not A Name");
          await page.locator("#new-project-name-hint.error").waitFor();
          const form = await audit(page);
          if (form.length) found[`${view.name} new project form`] = form;
          await page.goto(server.url + "/settings/api");
          await page.click("[data-testid=revoke-test]");
          await page.locator("dialog.dialog[open]").waitFor();
          const dialog = await audit(page);
          if (dialog.length) found[`${view.name} revoke dialog`] = dialog;
          // A new token with its examples; a person's role and projects opened for a change; a password form with its mistakes.
          await page.goto(server.url + "/settings/api");
          await page.fill("#token-name", `examples ${view.name}`);
          await page.click("#token-create button[type=submit]");
          await page.locator("[data-testid=snippet-sdk]").waitFor();
          const created = await audit(page);
          if (created.length) found[`${view.name} new token`] = created;
          await page.goto(server.url + "/settings/members");
          await page.click("[data-testid=change-vera]");
          await page.locator("details.member-change[open] form").waitFor();
          const change = await audit(page);
          if (change.length) found[`${view.name} member change`] = change;
          await page.goto(server.url + "/settings/account");
          await page.fill("#current-password", "wrong");
          await page.fill("#new-password", "long enough 1");
          await page.fill("#confirm-password", "long enough 2");
          await page.click("#password-form button[type=submit]");
          await page.locator("#current-error").waitFor();
          const password = await audit(page);
          if (password.length) found[`${view.name} password mistakes`] = password;
        },
        { viewport: view.viewport, colorScheme: view.colorScheme },
      );
      expect(found).toEqual({});
    });

  test("no serious or critical violation before sign-in: sign-in, set-up, a stale set-up link, /docs", async () => {
    const fresh = pool.track(await startTestServer());
    const code = await fresh.services.accounts.setupCode();
    const owned = await pool.withOwner();
    const pages = [
      { server: owned, path: "/login" },
      { server: owned, path: "/docs" },
      { server: owned, path: "/setup?code=stale" },
      { server: fresh, path: `/setup?code=${code}` },
      { server: fresh, path: "/setup" },
    ];
    const found: Record<string, Found[]> = {};
    for (const view of VIEWS) {
      await withPage(
        browser,
        `a11y-public-${view.name}`,
        async (page) => {
          for (const { server, path } of pages) {
            await page.goto(server.url + path);
            const violations = await audit(page);
            if (violations.length) found[`${view.name} ${path}`] = violations;
          }
        },
        { viewport: view.viewport, colorScheme: view.colorScheme },
      );
    }
    expect(found).toEqual({});
  });

  test("no serious or critical violation on the sign-in methods' pages: a sign-in link, the second step, an authenticator offered", async () => {
    const server = await pool.withOwner();
    const tess = await server.services.accounts.createUser(
      { username: "tess", password: "tess's long password" },
      "member",
    );
    const secret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";
    const code = new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: server.clock.now() });
    await server.services.secondFactor.enable(tess, secret, code, { userId: tess.id, name: "tess", ip: null });
    const found: Record<string, Found[]> = {};
    for (const view of VIEWS) {
      const link = await server.services.accounts.signInLink(OWNER.username);
      await withPage(
        browser,
        `a11y-sign-in-${view.name}`,
        async (page) => {
          const look = async (name: string) => {
            const violations = await audit(page);
            if (violations.length) found[`${view.name} ${name}`] = violations;
          };
          await page.goto(`${server.url}/login/link?code=${link.token}`);
          await look("sign-in link");
          await page.goto(`${server.url}/login/link?code=used`);
          await look("a used sign-in link");
          await page.goto(`${server.url}/login`);
          await page.fill("#username", "tess");
          await page.fill("#password", "tess's long password");
          await page.click("form button[type=submit]");
          await page.waitForURL((url) => url.pathname === "/login/second-factor");
          await look("second step");
          await page.fill("#code", "000000");
          await page.click("form button[type=submit]");
          await page.getByRole("alert").waitFor();
          await look("second step, a wrong code");
          await signIn(page, server);
          await page.goto(`${server.url}/settings/account`);
          await page.click('[data-testid="totp-start"]');
          await page.locator('[data-testid="totp-qr"] svg').waitFor();
          await look("an authenticator offered");
        },
        { viewport: view.viewport, colorScheme: view.colorScheme },
      );
    }
    expect(found).toEqual({});
  });
});
