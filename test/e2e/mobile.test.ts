// The dashboard on a phone (375 px) and the pieces that make it work there: the account menu of the
// top bar, metrics as a strip that scrolls inside itself, the project's settings page (retention,
// deleting), Settings tabs that show they overflow, and the "+" name forms closing on Escape.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { eventually } from "../helpers.ts";
import {
  CHROMIUM,
  describeBrowser,
  launch,
  ok,
  OWNER,
  path,
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

const PHONE = { viewport: { width: 375, height: 800 } } as const;

/** Whether the element is on screen: displayed, with a box inside the viewport's width. */
const onScreen = (page: Page, selector: string) =>
  page.evaluate((selector) => {
    const el = document.querySelector(selector);
    if (!el) return false;
    const box = el.getBoundingClientRect();
    return (
      getComputedStyle(el).visibility !== "hidden" &&
      box.width > 0 &&
      box.height > 0 &&
      box.left >= 0 &&
      box.right <= window.innerWidth
    );
  }, selector);

const focusedTestId = (page: Page) =>
  page.evaluate(() => document.activeElement?.getAttribute("data-testid") ?? document.activeElement?.tagName);

describeBrowser("the top bar on a phone", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  test("375 px: one compact row (☰, name, account button); API, Settings and Sign out are in the account menu", async () => {
    const server = await pool.withOwner();
    await withPage(
      browser,
      "mobile-account-menu",
      async (page) => {
        await signIn(page, server);
        const bar = await page.locator(".topbar").boundingBox();
        expect(bar!.height).toBeLessThanOrEqual(56);
        const account = page.getByRole("button", { name: `Account: ${OWNER.username}` });
        expect(await account.isVisible()).toBe(true);
        expect(await account.getAttribute("aria-expanded")).toBe("false");
        for (const name of ["API docs", "Settings"])
          expect(await page.locator(".topbar").getByRole("link", { name, exact: true }).isVisible()).toBe(false);
        expect(await page.getByRole("button", { name: /Sign out/ }).isVisible()).toBe(false);
        // Everything in the bar sits on its one row.
        const rows = await page.$$eval(".topbar > *", (els) =>
          els
            .filter((el) => el.getBoundingClientRect().height > 0)
            .map((el) => Math.round(el.getBoundingClientRect().top / 10)),
        );
        expect(new Set(rows).size).toBe(1);

        await account.click();
        expect(await account.getAttribute("aria-expanded")).toBe("true");
        await page.locator("#account-links").getByText(`Signed in as ${OWNER.username}`).waitFor();
        for (const selector of [
          "#account-links a[href='/docs']",
          "#account-links a[href='/settings']",
          "#account-links button[type=submit]",
        ])
          expect(await onScreen(page, selector)).toBe(true);

        // Escape closes it and gives the focus back to its button.
        await page.keyboard.press("Escape");
        await page.locator("#account-links").waitFor({ state: "hidden" });
        expect(await account.getAttribute("aria-expanded")).toBe("false");
        expect(await focusedTestId(page)).toBe("account-menu");

        // A click elsewhere closes it too; from the menu, Settings opens.
        await account.click();
        await page.locator("#account-links").waitFor({ state: "visible" });
        await page.locator("main h1").click({ position: { x: 2, y: 2 } });
        await page.locator("#account-links").waitFor({ state: "hidden" });
        await account.click();
        await page.locator("#account-links").getByRole("link", { name: "Settings" }).click();
        await page.waitForURL((url) => url.pathname === "/settings/api");

        // Sign out from the menu.
        await page.getByRole("button", { name: `Account: ${OWNER.username}` }).click();
        await page.getByRole("button", { name: /Sign out/ }).click();
        await page.waitForURL((url) => url.pathname === "/login");
      },
      PHONE,
    );
  });

  test("on a desktop the links stay in the bar and the account button is not shown", async () => {
    const server = await pool.withOwner();
    await withPage(browser, "desktop-account-links", async (page) => {
      await signIn(page, server);
      expect(await page.locator("[data-testid=account-menu]").isVisible()).toBe(false);
      expect(await page.locator(".topbar").getByRole("link", { name: "API docs", exact: true }).isVisible()).toBe(true);
      expect(await page.locator(".topbar").getByRole("link", { name: "Settings", exact: true }).isVisible()).toBe(true);
      expect(await page.getByRole("button", { name: /Sign out/ }).textContent()).toContain(OWNER.username);
    });
  });
});

describeBrowser("metrics on a phone", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  test("375 px: the metrics are one row that scrolls sideways inside itself, not the page; the feed follows close below", async () => {
    const server = await pool.withOwner();
    for (const [title, value] of [
      ["Signups", 42],
      ["Revenue", 1234.5],
      ["Churn", 3],
      ["Active users", 987],
      ["Errors", 0],
      ["Status", "green"],
    ] as const) {
      await ok(sendMetric(server, { title, value }));
    }
    await ok(sendEvent(server, { project: "default", channel: "signups", event: "New user" }));
    await withPage(
      browser,
      "mobile-metrics-strip",
      async (page) => {
        await signIn(page, server);
        await page.locator("#metrics .metric").nth(5).waitFor({ state: "attached" });
        const strip = await page.evaluate(() => {
          const list = document.getElementById("metrics")!;
          const tops = [...list.querySelectorAll(".metric")].map((el) => Math.round(el.getBoundingClientRect().top));
          return {
            rows: new Set(tops).size,
            count: tops.length,
            height: list.getBoundingClientRect().height,
            overflows: list.scrollWidth > list.clientWidth,
            scrolls: getComputedStyle(list).overflowX,
          };
        });
        expect(strip).toMatchObject({ rows: 1, count: 6, overflows: true, scrolls: "auto" });
        expect(strip.height).toBeLessThan(140);
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(375);

        // Swiping the strip moves the strip, not the page.
        const before = await page.evaluate(
          () => document.getElementById("metrics")!.querySelector(".metric:last-child")!.getBoundingClientRect().right,
        );
        expect(before).toBeGreaterThan(375);
        // The live stream's first frames redraw the metrics: the last one is scrolled to once it stays put.
        await page.waitForSelector(".live-status.live");
        await eventually(() => page.locator("#metrics .metric:last-child a").scrollIntoViewIfNeeded());
        await page.waitForFunction(() => document.getElementById("metrics")!.scrollLeft > 0);
        expect(await page.evaluate(() => window.scrollX)).toBe(0);
        expect(await onScreen(page, "#metrics .metric:last-child")).toBe(true);
      },
      PHONE,
    );
  });
});

describeBrowser("the project's settings page", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  test("retention and Delete project live on /p/PROJECT/settings, linked from the project's header, not on the project page", async () => {
    const server = await pool.withOwner();
    await server.services.projects.create("scratch");
    await ok(sendEvent(server, { project: "scratch", channel: "tries", event: "Try 1" }));
    await withPage(
      browser,
      "project-settings",
      async (page) => {
        await signIn(page, server);
        await page.goto(server.url + "/p/scratch");
        await page.locator("#events .event-name", { hasText: "Try 1" }).waitFor();
        expect(await page.locator("[data-testid=delete-project]").count()).toBe(0);
        expect(await page.locator("input[name=days]").count()).toBe(0);

        await page.getByRole("link", { name: "Project settings" }).click();
        await page.waitForURL((url) => url.pathname === "/p/scratch/settings");
        expect(await page.locator("h1").textContent()).toBe("Project settings");
        expect(await page.locator("#retention-now").textContent()).toBe("Events are kept forever.");
        await page.fill("#retention-days", "30");
        await page.getByRole("button", { name: "Save" }).click();
        await page.getByRole("status").filter({ hasText: "Saved." }).waitFor();
        expect(path(page)).toBe("/p/scratch/settings");
        expect(await page.locator("#retention-now").textContent()).toBe("Events older than 30 days are deleted.");
        expect((await server.services.projects.requireProject("scratch")).retentionDays).toBe(30);

        await page.click("[data-testid=delete-project]");
        const dialog = page.locator("dialog.dialog[open]");
        await dialog.waitFor();
        expect(await dialog.textContent()).toContain("1 event");
        await dialog.locator("[data-testid=confirm]").click();
        await page.waitForURL((url) => url.pathname === "/p/default");
        expect(await page.locator("#project-list a", { hasText: "scratch" }).count()).toBe(0);

        // The default project has the page too, without the delete button.
        await page.goto(server.url + "/p/default/settings");
        await page.getByText("The default project cannot be deleted.").waitFor();
        expect(await page.locator("[data-testid=delete-project]").count()).toBe(0);
      },
      PHONE,
    );
  });

  test("the retention field fits a number of days; the dialogs' buttons say what goes, not a count; the default project has no danger box", async () => {
    const server = await pool.withOwner();
    await server.services.projects.create("scratch");
    await ok(sendEvent(server, { project: "scratch", channel: "tries", event: "Try 1" }));
    await ok(sendEvent(server, { project: "scratch", channel: "tries", event: "Try 2" }));
    await withPage(browser, "project-settings-desktop", async (page) => {
      await signIn(page, server);
      await page.goto(server.url + "/p/scratch/settings");
      const field = (await page.locator("#retention-days").boundingBox())!;
      expect(field.width).toBeLessThan(200);
      expect(field.width).toBeGreaterThan(80);
      await page.fill("#retention-days", "36500");
      expect(
        await page.locator("#retention-days").evaluate((el: HTMLInputElement) => el.scrollWidth <= el.clientWidth),
      ).toBe(true);

      await page.click("[data-testid=delete-project]");
      const dialog = page.locator("dialog.dialog[open]");
      await dialog.waitFor();
      expect(await dialog.locator("[data-testid=confirm]").textContent()).toBe("Delete project");
      expect(await dialog.textContent()).toContain("2 events"); // the counts stay in the text
      expect(await dialog.textContent()).toContain("1 channel");
      await dialog.getByRole("button", { name: "Cancel" }).click();
      await dialog.waitFor({ state: "detached" });

      await page.goto(server.url + "/p/scratch/c/tries");
      await page.click("[data-testid=delete-channel]");
      await dialog.waitFor();
      expect(await dialog.locator("[data-testid=confirm]").textContent()).toBe("Delete channel");
      expect(await dialog.textContent()).toContain("2 events");
      await dialog.getByRole("button", { name: "Cancel" }).click();

      await page.goto(server.url + "/p/default/settings");
      await page.getByText("The default project cannot be deleted.").waitFor();
      expect(await page.locator(".danger-zone").count()).toBe(0);
      expect(await page.getByRole("heading", { name: "Delete project" }).count()).toBe(0);
    });
  });
});

describeBrowser("the Settings tabs on a phone", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  /** The opacity of the fade at each edge of the tab strip, and whether the strip snaps. */
  const hints = (page: Page) =>
    page.evaluate(() => {
      const wrap = document.querySelector(".tabs-wrap")!;
      const tabs = wrap.querySelector(".tabs")!;
      return {
        start: getComputedStyle(wrap, "::before").opacity,
        end: getComputedStyle(wrap, "::after").opacity,
        overflows: tabs.scrollWidth > tabs.clientWidth,
        snap: getComputedStyle(tabs).scrollSnapType,
      };
    });

  /** Waits until the fades have settled at these opacities (they fade in and out). */
  const fadesAre = (page: Page, start: string, end: string) =>
    page.waitForFunction(
      ([start, end]) => {
        const wrap = document.querySelector(".tabs-wrap");
        return (
          wrap !== null &&
          getComputedStyle(wrap, "::before").opacity === start &&
          getComputedStyle(wrap, "::after").opacity === end
        );
      },
      [start, end],
    );

  test("375 px: the tabs overflow; a fade shows the edge that hides more tabs, they snap, and the current tab is in view", async () => {
    const server = await pool.withOwner();
    await withPage(
      browser,
      "mobile-settings-tabs",
      async (page) => {
        await signIn(page, server);
        await page.goto(server.url + "/settings/api");
        await fadesAre(page, "0", "1");
        const first = await hints(page);
        expect(first).toMatchObject({ start: "0", end: "1", overflows: true });
        expect(first.snap).toStartWith("x");

        await page.evaluate(() => document.querySelector(".tabs")!.scrollTo({ left: 10_000 }));
        await fadesAre(page, "1", "0");
        expect(await hints(page)).toMatchObject({ start: "1", end: "0" });
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(375);

        // The last tab's page opens with its tab in view.
        await page.goto(server.url + "/settings/members");
        await fadesAre(page, "1", "0");
        expect(await onScreen(page, ".tabs a[aria-current=page]")).toBe(true);
      },
      PHONE,
    );
  });

  test("on a desktop every tab fits and no fade is shown", async () => {
    const server = await pool.withOwner();
    await withPage(browser, "desktop-settings-tabs", async (page) => {
      await signIn(page, server);
      await page.goto(server.url + "/settings/api");
      await page.locator(".tabs-wrap").waitFor();
      await page.waitForFunction(() => (window as any).Alpine !== undefined);
      expect(await hints(page)).toMatchObject({ start: "0", end: "0", overflows: false });
    });
  });

  test("375 px: the tokens, the members and /docs's tables hide no column: each row is a card, Revoke and Remove in view", async () => {
    const server = await pool.withOwner();
    await server.services.accounts.createUser({ username: "guest", password: "another fine password" }, "member");
    /** Cells of the page's tables that are cut off: outside the screen, or inside a box that scrolls to show them. */
    const hidden = (page: Page) =>
      page.$$eval("main td", (cells) =>
        cells
          .filter((td) => {
            const box = td.getBoundingClientRect();
            const wrap = td.closest(".table-wrap");
            return (
              box.width > 0 &&
              (box.right > window.innerWidth + 0.5 ||
                box.left < -0.5 ||
                (wrap !== null && wrap.scrollWidth > wrap.clientWidth + 1))
            );
          })
          .map((td) => (td.textContent ?? "").trim().slice(0, 40)),
      );
    await withPage(
      browser,
      "mobile-wide-tables",
      async (page) => {
        await signIn(page, server);
        await page.goto(server.url + "/settings/api");
        const row = page.locator("table.tokens tbody tr", { hasText: "test" });
        await row.waitFor();
        expect(await hidden(page)).toEqual([]);
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(375);
        // Each value is named (the column headings are out of sight in a card).
        const labels = await row
          .locator("td")
          .evaluateAll((cells) =>
            cells.map((td) => getComputedStyle(td, "::before").content).filter((c) => c !== "none"),
          );
        expect(labels).toEqual(['"Access"', '"Scope"', '"Notifies"', '"Prefix"', '"Created"', '"Last used"']);
        const revoke = page.getByTestId("revoke-test");
        expect(await revoke.isVisible()).toBe(true);
        expect(await onScreen(page, "[data-testid=revoke-test]")).toBe(true);
        await revoke.click();
        await page.locator("dialog.dialog[open]").waitFor();
        await page.getByRole("button", { name: "Cancel" }).click();

        await page.goto(server.url + "/settings/members");
        await page.getByTestId("remove-guest").waitFor();
        expect(await hidden(page)).toEqual([]);
        expect(await onScreen(page, "[data-testid=remove-guest]")).toBe(true);

        await page.goto(server.url + "/docs");
        await page.locator("main td").first().waitFor();
        expect(await hidden(page)).toEqual([]);
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(375);
      },
      PHONE,
    );
  });
});

describeBrowser("the “+” name forms", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  test("Escape closes the form and gives the focus back to the “+” button; in the ☰ drawer it leaves the drawer open", async () => {
    const server = await pool.withOwner();
    await withPage(browser, "plus-escape-desktop", async (page) => {
      await signIn(page, server);
      const plus = page.locator("[data-testid=new-project]");
      await plus.click();
      // The cursor goes into the form on the tick after it shows: wait for it, as a user would.
      await page.waitForFunction(() => document.activeElement?.id === "new-project-name");
      expect(await plus.getAttribute("aria-expanded")).toBe("true");
      await page.keyboard.type("half");
      await page.keyboard.press("Escape");
      await page.locator("#new-project-name").waitFor({ state: "hidden" });
      expect(await focusedTestId(page)).toBe("new-project");
      expect(await plus.getAttribute("aria-expanded")).toBe("false");

      const channelPlus = page.locator("[data-testid=new-channel]");
      await channelPlus.click();
      await page.locator("#new-channel-name").waitFor({ state: "visible" });
      await page.keyboard.press("Escape");
      await page.locator("#new-channel-name").waitFor({ state: "hidden" });
      expect(await focusedTestId(page)).toBe("new-channel");
    });

    await withPage(
      browser,
      "plus-escape-drawer",
      async (page) => {
        await signIn(page, server);
        const sidebarLeft = () => page.evaluate(() => document.getElementById("sidebar")!.getBoundingClientRect().left);
        await page.getByRole("button", { name: "Menu" }).click();
        await page.waitForFunction(() => document.getElementById("sidebar")!.getBoundingClientRect().left >= 0);
        await page.locator("[data-testid=new-project]").click();
        await page.locator("#new-project-name").waitFor({ state: "visible" });
        await page.keyboard.press("Escape");
        await page.locator("#new-project-name").waitFor({ state: "hidden" });
        expect(await focusedTestId(page)).toBe("new-project");
        expect(await sidebarLeft()).toBeGreaterThanOrEqual(0);
        // A second Escape closes the drawer.
        await page.keyboard.press("Escape");
        await page.waitForFunction(() => document.getElementById("sidebar")!.getBoundingClientRect().right <= 0);
      },
      PHONE,
    );
  });

  test("a channel that appears live takes its place in the sidebar by name, as after a reload", async () => {
    const server = await pool.withOwner();
    for (const channel of ["beta", "delta"])
      await ok(sendEvent(server, { project: "default", channel, event: "Hello" }));
    const channels = (page: Page) =>
      page.$$eval("#channel-list a", (links) => links.map((a) => (a.textContent ?? "").trim()));
    await withPage(browser, "live-channel-order", async (page) => {
      await signIn(page, server);
      await page.goto(server.url + "/p/default");
      await page.waitForSelector(".live-status.live");
      expect(await channels(page)).toEqual(["# beta", "# delta"]);
      for (const channel of ["charlie", "zulu", "alpha"]) {
        await ok(sendEvent(server, { project: "default", channel, event: "Hello" }));
        await page.locator("#channel-list a", { hasText: `# ${channel}` }).waitFor();
      }
      expect(await channels(page)).toEqual(["# alpha", "# beta", "# charlie", "# delta", "# zulu"]);
      await page.reload();
      expect(await channels(page)).toEqual(["# alpha", "# beta", "# charlie", "# delta", "# zulu"]);
    });
  });
});
