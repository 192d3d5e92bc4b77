// Retention in a real browser: built in the chart builder (its preview the grid, with the numbers
// the test's events make), saved to the project's dashboard, and seen as a card and on its page at
// 1280 and 375 px, light and dark: every shaded cell's text readable against its shade (4.5:1),
// a period not begun yet unshaded, the grid scrolling sideways inside its card and never the page,
// and a card that follows new events keeping where it was scrolled to.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { eventually, type TestServer } from "../helpers.ts";
import { CHROMIUM, describeBrowser, launch, ok, path, sendEvent, serverPool, signIn, withPage } from "./browser.ts";

let browser: Browser;
beforeAll(async () => {
  if (existsSync(CHROMIUM)) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

const DAY = 86_400;
const B = Date.UTC(2026, 0, 5) / 1000; // a Monday

/**
 * Day 0: u0 … u9 sign up, and u{i} opens the app on days 0 … 9 - i, so day 0's cohort comes back
 * 100%, 90%, … 10%, 0% over days 0 … 10. Day 1: v signs up and comes back on day 3 only.
 */
async function seed(server: TestServer): Promise<void> {
  await server.services.projects.create("shop");
  const send = (event: string, user: string, day: number) =>
    ok(sendEvent(server, { project: "shop", channel: "web", event, user_id: user, timestamp: B + day * DAY + 43_200 }));
  for (let i = 0; i < 10; i++) {
    await send("Signed up", `u${i}`, 0);
    for (let day = 0; day <= 9 - i; day++) await send("Opened app", `u${i}`, day);
  }
  await send("Signed up", "v", 1);
  await send("Opened app", "v", 3);
}

const DAY0 = ["100%", "90%", "80%", "70%", "60%", "50%", "40%", "30%", "20%", "10%", "0%"];
const DAY1 = ["0%", "0%", "100%", ...Array(8).fill("0%")];
const EXPECTED = [
  { cohort: "5 Jan 2026", users: "10", cells: DAY0 },
  { cohort: "6 Jan 2026", users: "1", cells: DAY1 },
];

type Row = { cohort: string; users: string; cells: string[] };

/** The rows of the retention grid in `scope`: each cohort's date, its users and its cells' text. */
const gridOf = (page: Page, scope: string): Promise<Row[]> =>
  page.$$eval(`${scope} .retention-grid tbody tr`, (rows) =>
    rows.map((tr) => ({
      cohort: tr.querySelector("th")!.textContent!.trim(),
      users: tr.querySelector("td.cohort-users")!.textContent!.trim(),
      cells: [...tr.querySelectorAll("td:not(.cohort-users)")].map((td) => td.textContent!.trim()),
    })),
  );

/** Waits until what `read` gives passes `check` (the page updates on its own). */
const settles = <T>(read: () => Promise<T> | T, check: (value: T) => void, timeoutMs = 8000) =>
  eventually(async () => check(await read()), timeoutMs);

/**
 * How the grid in `scope` looks: each shaded cell's contrast (text on its shade, WCAG), how many
 * shades there are, the backgrounds of cells not begun yet, and whether it scrolls sideways in itself.
 */
function looks(page: Page, scope: string) {
  return page.$eval(`${scope} .retention-wrap`, (wrap) => {
    const rgb = (css: string) => {
      const [r, g, b, a] = css.match(/[\d.]+/g)!.map(Number);
      return { rgb: [r!, g!, b!], alpha: a ?? 1 };
    };
    const luminance = ([r, g, b]: number[]) => {
      const lin = (c: number) => (c / 255 <= 0.04045 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4);
      return 0.2126 * lin(r!) + 0.7152 * lin(g!) + 0.0722 * lin(b!);
    };
    const contrast = (a: number[], b: number[]) => {
      const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
      return (hi! + 0.05) / (lo! + 0.05);
    };
    const shaded = [...wrap.querySelectorAll("td[data-shade]")].map((td) => {
      const style = getComputedStyle(td);
      const background = rgb(style.backgroundColor);
      return {
        shade: Number((td as HTMLElement).dataset.shade),
        background: style.backgroundColor,
        opaque: background.alpha === 1,
        contrast: contrast(rgb(style.color).rgb, background.rgb),
      };
    });
    return {
      lowestContrast: Math.min(...shaded.map((s) => s.contrast)),
      allOpaque: shaded.every((s) => s.opaque),
      shades: new Set(shaded.map((s) => s.shade)).size,
      backgrounds: new Set(shaded.map((s) => s.background)).size,
      future: [...wrap.querySelectorAll("td.future")].map((td) => getComputedStyle(td).backgroundColor),
      scrollsInside: wrap.scrollWidth > wrap.clientWidth + 1,
    };
  });
}

const pageScrollsSideways = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);

const VIEWS = [
  { name: "1280 light", viewport: { width: 1280, height: 900 }, colorScheme: "light" },
  { name: "1280 dark", viewport: { width: 1280, height: 900 }, colorScheme: "dark" },
  { name: "375 light", viewport: { width: 375, height: 812 }, colorScheme: "light" },
  { name: "375 dark", viewport: { width: 375, height: 812 }, colorScheme: "dark" },
] as const;

describeBrowser("retention", () => {
  const pool = serverPool({ "card-refresh": "500ms" });
  afterAll(() => pool.closeAll());

  test("built in the builder: the preview is the grid of the events' cohorts, and saved it is a card of the dashboard, at 1280 and 375 px, light and dark", async () => {
    const server = await pool.withOwner();
    await seed(server);
    let chartPath = "";
    await withPage(browser, "retention-build", async (page) => {
      await signIn(page, server);
      await page.goto(`${server.url}/p/shop/charts`);
      await page.click("text=New retention");
      expect(path(page)).toBe("/p/shop/charts/new");
      expect(await page.locator("h1").textContent()).toBe("New retention");
      await page.fill("#chart-name", "Back after sign-up");
      await page.fill("#chart-start", "Signed up");
      await page.fill("#chart-return", "Opened app");
      await page.selectOption("#chart-range", "custom");
      await page.fill("#chart-from", "2026-01-05");
      await page.fill("#chart-to", "2026-01-06");
      await page.fill("#chart-periods", "10");
      await page.fill("#chart-tz", "UTC");
      await page.locator("#chart-tz").blur();
      await settles(
        () => gridOf(page, "#chart-preview"),
        (rows) => expect(rows).toEqual(EXPECTED),
      );
      expect(await page.locator("#chart-preview .retention-grid thead th").allTextContents()).toEqual([
        "Day",
        "Users",
        ...DAY0.map((_, k) => `Day ${k}`),
      ]);
      // Each cell's count is in its title.
      expect(await page.getAttribute("#chart-preview tbody tr:first-child td:nth-of-type(3)", "title")).toBe(
        "9 of 10 users (90%)",
      );
      // The address bar holds the question.
      await settles(
        () => new URL(page.url()).searchParams.get("kind"),
        (v) => expect(v).toBe("retention"),
      );
      await page.click("[data-testid=save-chart]");
      await page.waitForURL(/\/p\/shop\/charts\/\d+$/);
      chartPath = path(page);
      await settles(
        () => gridOf(page, "[data-testid=card-body]"),
        (rows) => expect(rows).toEqual(EXPECTED),
      );
      expect(await page.locator("[data-testid=pin]").textContent()).toContain("Remove from dashboard");
    });

    for (const view of VIEWS) {
      await withPage(
        browser,
        `retention-${view.name}`,
        async (page) => {
          await signIn(page, server);
          for (const [url, scope] of [
            ["/p/shop", "#dashboard-cards"],
            [chartPath, "[data-testid=card-body]"],
          ] as const) {
            await page.goto(server.url + url);
            await settles(
              () => gridOf(page, scope),
              (rows) => expect(rows).toEqual(EXPECTED),
            );
            const seen = await looks(page, scope);
            const narrow = view.viewport.width < 800;
            expect({ view: view.name, url, ...seen, sideways: await pageScrollsSideways(page) }).toEqual({
              view: view.name,
              url,
              lowestContrast: expect.any(Number),
              allOpaque: true,
              shades: 11, // 0% … 100%, each its own shade
              backgrounds: 11,
              future: [],
              scrollsInside: narrow, // at 375 px the grid scrolls inside its card; at 1280 it fits
              sideways: false,
            });
            expect({ view: view.name, url, contrast: seen.lowestContrast >= 4.5 }).toEqual({
              view: view.name,
              url,
              contrast: true,
            });
          }
          // On the dashboard, the card is the grid's, its name a link to its page.
          await page.goto(`${server.url}/p/shop`);
          expect(await page.locator("#dashboard-cards h2").allTextContents()).toContain("Back after sign-up");
        },
        { viewport: view.viewport, colorScheme: view.colorScheme },
      );
    }
  });

  test("a card follows new events, keeping where its grid was scrolled to; periods not begun yet are empty and unshaded", async () => {
    const server = await pool.withOwner();
    await server.services.projects.create("shop");
    await ok(
      fetch(`${server.url}/v1/charts`, {
        method: "POST",
        headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
        body: JSON.stringify({
          project: "shop",
          kind: "retention",
          name: "Today",
          definition: { start_event: "Joined", return_event: "Came back", last_days: 1, periods: 10, tz: "UTC" },
          position: 0,
        }),
      }),
    );
    await ok(sendEvent(server, { project: "shop", channel: "web", event: "Joined", user_id: "j1" }));
    await withPage(
      browser,
      "retention-live",
      async (page) => {
        await signIn(page, server);
        await page.goto(`${server.url}/p/shop`);
        const todays = async () => (await gridOf(page, "#dashboard-cards")).at(-1)!;
        await settles(todays, (row) =>
          expect(row).toEqual({ cohort: expect.any(String), users: "1", cells: ["0%", ...Array(10).fill("")] }),
        );
        const seen = await looks(page, "#dashboard-cards");
        // Today's ten days after have not begun: empty cells, no shade.
        expect(seen.future.length).toBeGreaterThanOrEqual(10);
        for (const background of seen.future) expect(background).toBe("rgba(0, 0, 0, 0)");
        expect(seen.scrollsInside).toBe(true);
        const wrap = page.locator("#dashboard-cards .retention-wrap");
        await wrap.evaluate((el) => {
          el.scrollLeft = el.scrollWidth;
        });
        const scrolled = await wrap.evaluate((el) => el.scrollLeft);
        expect(scrolled).toBeGreaterThan(0);
        // Cards are asked again at most every card-refresh while events arrive: the answer a refresh
        // gets may be from just before this event, so it is sent again until one shows it.
        await eventually(async () => {
          await ok(sendEvent(server, { project: "shop", channel: "web", event: "Came back", user_id: "j1" }));
          await settles(todays, (row) => expect(row.cells[0]).toBe("100%"), 2000);
        });
        expect(await wrap.evaluate((el) => el.scrollLeft)).toBe(scrolled);
        expect(await pageScrollsSideways(page)).toBe(false);
      },
      { viewport: { width: 375, height: 812 }, colorScheme: "dark" },
    );
  });
});
