// The dashboard's charts in a real browser: a metric's history over the chosen window (and live),
// its axis labels whole, its legend and value now as stored, and the project's activity chart
// (stacked bars per channel per day up to today, its legend, tooltip, range, the feed's filters, a
// phone's width and dark mode).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import type { TestServer } from "../helpers.ts";
import {
  CHROMIUM,
  describeBrowser,
  launch,
  ok,
  sendEvent,
  sendMetric,
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

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Stores a metric's value as if it had been sent at `at` (Unix ms): its history then starts there. */
async function metricAt(server: TestServer, title: string, value: number, at: number): Promise<void> {
  const project = (await server.store.projects.findByName("default"))!;
  await server.store.metrics.save({ projectId: project.id, title, value, icon: null, now: at });
}

/** The window the metric chart draws, as uPlot's x scale has it (Unix ms). */
async function shownWindow(page: Page): Promise<{ from: number; to: number }> {
  await page.waitForSelector(".chart[data-shown-from] canvas");
  return page.$eval(".chart", (el) => ({
    from: Number((el as HTMLElement).dataset.shownFrom),
    to: Number((el as HTMLElement).dataset.shownTo),
  }));
}

/** Moves the mouse over the plot at `fraction` of its width and returns what uPlot's legend says the value there is. */
async function valueAt(page: Page, fraction: number): Promise<string> {
  const box = (await page.locator(".chart .u-over").boundingBox())!;
  await page.mouse.move(box.x + Math.max(1, Math.min(box.width - 1, box.width * fraction)), box.y + box.height / 2);
  return (await page.locator(".chart .u-legend .u-series").nth(1).locator(".u-value").textContent()) ?? "";
}

describeBrowser("a metric's history", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  test("the x-axis is exactly the chosen window, and a value set before it is carried in from the left", async () => {
    const server = await pool.withOwner();
    const now = Date.now();
    await metricAt(server, "Temperature", 10, now - 3 * DAY);
    await metricAt(server, "Temperature", 20, now - 2 * HOUR);
    await metricAt(server, "Flat", 7, now - 10 * DAY);
    await withPage(browser, "metric-window", async (page) => {
      await signIn(page, server);
      await page.goto(`${server.url}/p/default/metrics/Temperature?days=1`);
      const day = await shownWindow(page);
      expect(day.to - day.from).toBeGreaterThan(DAY - 2 * 60_000);
      expect(day.to - day.from).toBeLessThan(DAY + 2 * 60_000);
      expect(Math.abs(day.to - now)).toBeLessThan(5 * 60_000);
      // 10 held since three days ago: the line comes in from the left at 10, then steps to 20.
      expect(await valueAt(page, 0.01)).toBe("10");
      expect(await valueAt(page, 0.3)).toBe("10"); // (the legend shows the nearest change's value)
      expect(await valueAt(page, 0.99)).toBe("20");

      await page.getByRole("link", { name: "7 days" }).click();
      await page.waitForURL((url) => url.search === "?days=7");
      const week = await shownWindow(page);
      expect(Math.round((week.to - week.from) / DAY)).toBe(7);
      expect(Math.abs(week.to - now)).toBeLessThan(5 * 60_000);

      await page.goto(`${server.url}/p/default/metrics/Temperature?days=90`);
      const quarter = await shownWindow(page);
      expect(Math.round((quarter.to - quarter.from) / DAY)).toBe(90);

      // No change in the window: flat across it, at the value now.
      await page.goto(`${server.url}/p/default/metrics/Flat?days=1`);
      const flat = await shownWindow(page);
      expect(Math.round((flat.to - flat.from) / HOUR)).toBe(24);
      expect(await valueAt(page, 0.01)).toBe("7");
      expect(await valueAt(page, 0.99)).toBe("7");
      expect(await page.locator("[data-testid=metric-value]").textContent()).toBe("7");
    });
  });

  test("the value now and the chart follow a change without a reload", async () => {
    const server = await pool.withOwner();
    await metricAt(server, "Queue", 5, Date.now() - 2 * DAY);
    await withPage(browser, "metric-live", async (page) => {
      await signIn(page, server);
      await page.goto(`${server.url}/p/default/metrics/Queue?days=1`);
      await shownWindow(page);
      expect(await valueAt(page, 0.99)).toBe("5");
      await page.evaluate(() => ((window as any).__notReloaded = true));
      // The page is following once the stream is open: the server's first metric frame has come.
      await ok(sendMetric(server, { title: "Queue", value: 1259 }));
      await page.waitForFunction(
        () => document.querySelector("[data-testid=metric-value]")?.textContent === "1,259",
        null,
        { timeout: STEP_TIMEOUT },
      );
      expect(await valueAt(page, 0.995)).toBe("1,259");
      expect(await valueAt(page, 0.01)).toBe("5");
      await ok(sendMetric(server, { title: "Queue", value: 3 }));
      await page.waitForFunction(
        () => document.querySelector("[data-testid=metric-value]")?.textContent === "3",
        null,
        { timeout: STEP_TIMEOUT },
      );
      expect(await valueAt(page, 0.995)).toBe("3");
      // Another metric of the project changes nothing here.
      await ok(sendMetric(server, { title: "Other", value: 99 }));
      await ok(sendMetric(server, { title: "Queue", value: 4 }));
      await page.waitForFunction(
        () => document.querySelector("[data-testid=metric-value]")?.textContent === "4",
        null,
        { timeout: STEP_TIMEOUT },
      );
      expect(await page.evaluate(() => (window as any).__notReloaded)).toBe(true);
      expect(await page.locator(".metric").count()).toBe(1);
    });
  });

  test("a value set once (or a few times in one minute) is a visible point with its line on to now, and the legend gives it", async () => {
    const server = await pool.withOwner();
    await ok(sendMetric(server, { title: "Active users", value: 3 }));
    await ok(sendMetric(server, { title: "Signups", value: 1 }));
    await ok(sendMetric(server, { title: "Signups", value: 2 }));
    await withPage(browser, "metric-once", async (page) => {
      await signIn(page, server);
      for (const [title, value] of [
        ["Active users", "3"],
        ["Signups", "2"],
      ] as const) {
        for (const days of [1, 7]) {
          await page.goto(`${server.url}/p/default/metrics/${encodeURIComponent(title)}?days=${days}`);
          await shownWindow(page);
          // The line's colour, drawn solid: a dot of several pixels across, not a hairline at the edge.
          const drawn = await accentPixels(page);
          expect(drawn.count, `${title} over ${days} days`).toBeGreaterThan(40);
          expect(drawn.height, `${title} over ${days} days`).toBeGreaterThanOrEqual(6);
          expect(await page.locator(".chart .u-legend .u-series").nth(1).locator(".u-value").textContent()).toBe(value);
        }
      }
    });
  });
});

/** Pixels drawn in the chart canvas's first two columns beside the plot: a label cut at the chart's left edge. */
function inkAtLeftEdge(page: Page): Promise<number> {
  return page.$eval(".chart canvas", (canvas) => {
    const c = canvas as HTMLCanvasElement;
    const over = c.parentElement!.querySelector(".u-over")!.getBoundingClientRect();
    const box = c.getBoundingClientRect();
    const [top, bottom] = [over.top - box.top, over.bottom - box.top].map((y) => Math.round(y * devicePixelRatio));
    const { data } = c.getContext("2d")!.getImageData(0, top!, 2, bottom! - top!);
    let ink = 0;
    for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) ink++;
    return ink;
  });
}

/**
 * How a value is laid out on screen: the lines its text takes, the lines each of its words takes
 * (more than one: broken inside it), whether it shows whole (nothing overflows its box or the page), and
 * whether what overflows is cut with "…".
 */
function valueLayout(page: Page, selector: string) {
  return page.$$eval(selector, (els) =>
    els.map((el) => {
      const text = el.firstChild as Text;
      const lines = (from: number, to: number) => {
        const range = document.createRange();
        range.setStart(text, from);
        range.setEnd(text, to);
        return new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top))).size;
      };
      const words = [...text.data.matchAll(/\S+/g)].map((m) => ({
        word: m[0],
        lines: lines(m.index!, m.index! + m[0].length),
      }));
      const box = el.getBoundingClientRect();
      const style = getComputedStyle(el);
      const ellipsis = style.overflowX === "hidden" && style.textOverflow === "ellipsis";
      return {
        text: text.data,
        lines: lines(0, text.data.length),
        words,
        whole: el.scrollWidth <= el.clientWidth && box.right <= document.documentElement.clientWidth,
        ellipsis,
      };
    }),
  );
}

describeBrowser("a metric's numbers", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  test("the y-axis labels are short and whole, the x-axis says days and times as pages do, and the legend gives values as stored", async () => {
    const server = await pool.withOwner();
    const now = Date.now();
    await metricAt(server, "Revenue", 18_420, now - 3 * DAY);
    await metricAt(server, "Revenue", 1_250_000, now - 2 * HOUR);
    await metricAt(server, "Steady", 18_420, now - 3 * DAY);
    await metricAt(server, "Rate", 0.0374, now - 2 * HOUR);
    await metricAt(server, "Third", 1 / 3, now - 2 * HOUR);
    for (const viewport of [
      { width: 1280, height: 900 },
      { width: 375, height: 800 },
    ]) {
      await withPage(
        browser,
        `metric-labels-${viewport.width}`,
        async (page) => {
          await signIn(page, server);
          for (const [title, days, value] of [
            ["Revenue", 7, "1,250,000"],
            ["Steady", 7, "18,420"],
            ["Rate", 1, "0.0374"],
            ["Third", 1, "0.333333333333333"],
          ] as const) {
            await page.goto(`${server.url}/p/default/metrics/${title}?days=${days}`);
            await shownWindow(page);
            expect(await inkAtLeftEdge(page), `${title} at ${viewport.width} px`).toBe(0);
            const labels: string[] = JSON.parse((await page.locator(".chart").getAttribute("data-y-labels"))!);
            expect(new Set(labels).size, `${title}: ${labels}`).toBe(labels.length);
            for (const label of labels) expect(label.length, `${title}: ${labels}`).toBeLessThanOrEqual(6);
            expect(await valueAt(page, 0.995)).toBe(value);
            expect(await page.locator("[data-testid=metric-value]").textContent()).toBe(value);
            const times: string[] = JSON.parse((await page.locator(".chart").getAttribute("data-x-labels"))!);
            for (const label of times)
              expect(label).toMatch(/^([A-Z][a-z]{2} \d{1,2}|\d{1,2}(:\d{2})? [AP]M(\n[A-Z][a-z]{2} \d{1,2})?)$/);
          }
          const revenue: string[] = JSON.parse(
            (await page.goto(`${server.url}/p/default/metrics/Revenue?days=7`),
            await shownWindow(page),
            await page.locator(".chart").getAttribute("data-y-labels"))!,
          );
          expect(revenue).toContain("1M");
        },
        { viewport },
      );
    }
  });

  test("the value now keeps a number on one line and breaks text only between words, on the metric's page and the project's", async () => {
    const server = await pool.withOwner();
    const values: Record<string, number | string> = {
      Revenue: 1_250_000,
      Ledger: 1_234_567_890_123.5,
      Status: "operational",
      Summary: "all systems operational in every region",
      Word: "supercalifragilisticexpialidocious",
    };
    for (const [title, value] of Object.entries(values)) await ok(sendMetric(server, { title, value }));
    for (const viewport of [
      { width: 1280, height: 900 },
      { width: 375, height: 800 },
    ]) {
      await withPage(
        browser,
        `metric-now-${viewport.width}`,
        async (page) => {
          await signIn(page, server);
          const check = async (where: string) => {
            for (const v of await valueLayout(page, "[data-testid=metric-value]")) {
              const label = `${where} at ${viewport.width} px: ${v.text}`;
              expect(
                v.words.filter((w) => w.lines > 1),
                label,
              ).toEqual([]);
              if (/^[\d,.]+$/.test(v.text)) {
                expect(v.lines, label).toBe(1);
                expect(v.whole, label).toBe(true);
              } else expect(v.whole || v.ellipsis, label).toBe(true); // a word too long even when smaller ends in "…"
            }
            expect(await page.evaluate(() => document.documentElement.scrollWidth), where).toBeLessThanOrEqual(
              viewport.width,
            );
          };
          for (const title of Object.keys(values)) {
            await page.goto(`${server.url}/p/default/metrics/${title}`);
            await page.locator("[data-testid=metric-value]").waitFor();
            await page.waitForLoadState("load");
            await check(title);
          }
          await page.goto(`${server.url}/p/default`);
          await page.locator(".metric", { hasText: "Ledger" }).waitFor();
          await page.waitForLoadState("load");
          await check("the project page");
        },
        { viewport },
      );
    }
  });
});

/** The chart's pixels in the line's colour (opaque): how many, and how tall the patch they make is. */
function accentPixels(page: Page): Promise<{ count: number; height: number }> {
  return page.$eval(".chart canvas", (canvas) => {
    const c = canvas as HTMLCanvasElement;
    const accent = getComputedStyle(document.documentElement).getPropertyValue("--accent").trim();
    const [r, g, b] = [1, 3, 5].map((i) => parseInt(accent.slice(i, i + 2), 16));
    const { data, width } = c.getContext("2d")!.getImageData(0, 0, c.width, c.height);
    let count = 0;
    let top = Infinity;
    let bottom = -1;
    for (let i = 0; i < data.length; i += 4) {
      if (
        data[i + 3]! > 200 &&
        Math.abs(data[i]! - r!) < 24 &&
        Math.abs(data[i + 1]! - g!) < 24 &&
        Math.abs(data[i + 2]! - b!) < 24
      ) {
        count++;
        const y = Math.floor(i / 4 / width);
        top = Math.min(top, y);
        bottom = Math.max(bottom, y);
      }
    }
    return { count, height: bottom < 0 ? 0 : (bottom - top + 1) / devicePixelRatio };
  });
}

/** The legend as a user reads it: name and total per entry, in order. */
const legend = (page: Page) =>
  page.$$eval(".chart-legend li", (items) =>
    items.map(
      (li) => `${li.querySelector(".legend-name")!.textContent} ${li.querySelector(".legend-total")!.textContent}`,
    ),
  );

/** The colour of a legend entry's swatch. */
const swatchOf = (page: Page, label: string) =>
  page.$$eval(
    ".chart-legend li",
    (items, name) => {
      const item = items.find((li) => li.querySelector(".legend-name")!.textContent === name);
      return item ? getComputedStyle(item.querySelector(".swatch")!).backgroundColor : null;
    },
    label,
  );

async function openProject(page: Page, server: TestServer, at = "/p/default"): Promise<void> {
  await page.goto(server.url + at);
  await page.waitForSelector(".chart-card .chart canvas");
}

/** Hovers the plot at `fraction` of its width; the tooltip's heading and rows. */
async function tooltipAt(page: Page, fraction: number): Promise<{ day: string; rows: string[] }> {
  const box = (await page.locator(".chart-card .u-over").boundingBox())!;
  await page.mouse.move(box.x + box.width * fraction, box.y + box.height / 2);
  await page.waitForSelector(".chart-tip:not([hidden])");
  return page.$eval(".chart-tip", (tip) => ({
    day: tip.querySelector("strong")!.textContent ?? "",
    rows: [...tip.querySelectorAll("li")].map((li) => li.textContent ?? ""),
  }));
}

/** How the page writes a day (midday of the day `daysAgo` days before today, local time). */
const dayLabel = (page: Page, daysAgo: number) =>
  page.evaluate((ago) => {
    const d = new Date();
    d.setHours(12, 0, 0, 0);
    d.setDate(d.getDate() - ago);
    return d.toLocaleDateString(undefined, { weekday: "short", year: "numeric", month: "short", day: "numeric" });
  }, daysAgo);

/** Hovers the plot at `fraction` of its width until the tooltip names `day` (the chart is redrawn after a range change). */
async function tipSays(page: Page, fraction: number, day: string): Promise<void> {
  const deadline = Date.now() + STEP_TIMEOUT;
  let seen: string | null = null;
  for (let nudge = 0; Date.now() < deadline; nudge ^= 1) {
    const box = await page.locator(".chart-card .u-over").boundingBox();
    if (box) await page.mouse.move(box.x + box.width * fraction + nudge, box.y + box.height / 2);
    seen = await page
      .locator(".chart-tip:not([hidden]) strong")
      .textContent({ timeout: 200 })
      .catch(() => null);
    if (seen === day) return;
  }
  throw new Error(`the tooltip says ${JSON.stringify(seen)}, not ${JSON.stringify(day)}`);
}

describeBrowser("the activity chart", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  /** 20 channels: ch01 with 20 events today, down to ch20 with 1; and 2 events in ch01 five days ago. */
  async function twentyChannels(server: TestServer): Promise<void> {
    for (let c = 1; c <= 20; c++) {
      const name = `ch${String(c).padStart(2, "0")}`;
      await Promise.all(
        Array.from({ length: 21 - c }, (_, i) =>
          ok(
            sendEvent(server, {
              project: "default",
              channel: name,
              event: `e${i}`,
              tags: { plan: c % 2 ? "pro" : "free" },
            }),
          ),
        ),
      );
    }
    const fiveDaysAgo = Math.floor(Date.now() / 1000) - 5 * 86_400;
    for (const i of [1, 2])
      await ok(sendEvent(server, { project: "default", channel: "ch01", event: `old${i}`, timestamp: fiveDaysAgo }));
  }

  test("20 channels: the top 6 and other, a legend with totals, colours that stay with their channel, a tooltip per day", async () => {
    const server = await pool.withOwner();
    await twentyChannels(server);
    await withPage(browser, "activity-top", async (page) => {
      await signIn(page, server);
      await openProject(page, server);
      expect(await legend(page)).toEqual([
        "#ch01 22",
        "#ch02 19",
        "#ch03 18",
        "#ch04 17",
        "#ch05 16",
        "#ch06 15",
        "other (14 channels) 105",
      ]);
      // No uPlot legend: the page's own.
      expect(await page.locator(".chart-card .u-legend").count()).toBe(0);
      const colours = await Promise.all(["#ch01", "#ch02", "#ch03"].map((name) => swatchOf(page, name)));
      expect(new Set(colours).size).toBe(3);

      // Today's bar: the day and each channel's count.
      const today = await tooltipAt(page, 0.995);
      expect(today.day).toBe(await dayLabel(page, 0));
      expect(today.rows).toEqual([
        "#ch0120",
        "#ch0219",
        "#ch0318",
        "#ch0417",
        "#ch0516",
        "#ch0615",
        "other (14 channels)105",
      ]);
      // The range is the whole window: the leftmost bar is 29 days ago, and five days ago has ch01's two.
      expect((await tooltipAt(page, 0.005)).day).toBe(await dayLabel(page, 29));
      const fiveAgo = await tooltipAt(page, 24.5 / 30);
      expect(fiveAgo.day).toBe(await dayLabel(page, 5));
      expect(fiveAgo.rows[0]).toBe("#ch012");

      await page.selectOption("select[aria-label='Chart range']", "7");
      await tipSays(page, 0.005, await dayLabel(page, 6));
      await page.selectOption("select[aria-label='Chart range']", "90");
      await tipSays(page, 0.002, await dayLabel(page, 89));

      // A new channel with the most events takes the first place; the others keep their colours.
      await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          ok(sendEvent(server, { project: "default", channel: "aaa-new", event: `n${i}` })),
        ),
      );
      await openProject(page, server);
      expect((await legend(page))[0]).toBe("#aaa-new 30");
      expect(await Promise.all(["#ch01", "#ch02", "#ch03"].map((name) => swatchOf(page, name)))).toEqual(colours);
    });
  });

  test("the x-axis ends at today: its last label is today's, under today's bar, and none is for tomorrow", async () => {
    const server = await pool.withOwner();
    await ok(sendEvent(server, { project: "default", channel: "today", event: "Now" }));
    for (const timezoneId of ["Asia/Tokyo", "America/Los_Angeles"]) {
      await withPage(
        browser,
        `activity-ends-today-${timezoneId}`,
        async (page) => {
          await signIn(page, server);
          await openProject(page, server);
          for (const range of ["7", "90", "30"]) {
            // The ticks of the chart drawn for this range (the one before said its own).
            await page.$eval(".chart-card .chart", (el) => delete (el as HTMLElement).dataset.xTicks);
            await page.selectOption("select[aria-label='Chart range']", range);
            await page.waitForFunction(
              () => (document.querySelector(".chart-card .chart") as HTMLElement).dataset.xTicks !== undefined,
            );
            const { ticks, labels, today, tomorrow } = await page.$eval(".chart-card .chart", (el) => {
              const label = (d: Date) => d.toLocaleDateString(undefined, { month: "short", day: "numeric" });
              const midnight = new Date();
              midnight.setHours(24, 0, 0, 0);
              return {
                ticks: JSON.parse((el as HTMLElement).dataset.xTicks!) as number[],
                labels: JSON.parse((el as HTMLElement).dataset.xLabels!) as string[],
                today: label(new Date()),
                tomorrow: midnight.getTime() / 1000,
              };
            });
            expect(labels.at(-1), `${range} days in ${timezoneId}`).toBe(today);
            expect(Math.max(...ticks)).toBeLessThan(tomorrow);
            // Each label is its bar's: the tooltip at the last tick names today.
            expect((await tooltipAt(page, 0.995)).day).toBe(await dayLabel(page, 0));
          }
        },
        { timezoneId },
      );
    }
  });

  test("follows the feed's search: counts only matching events and says so", async () => {
    const server = await pool.withOwner();
    await twentyChannels(server);
    await withPage(browser, "activity-filtered", async (page) => {
      await signIn(page, server);
      await openProject(page, server);
      expect(await page.getByTestId("activity-filtered").count()).toBe(0);
      await page.fill("#q", "plan:pro");
      await page.click("form.filters button[type=submit]");
      await page.waitForURL((url) => url.search.includes("plan"));
      // With a search, the chart may be folded below the results: unfold it.
      const folded = page.locator("details:not([open]) > summary", {
        has: page.locator("xpath=..//*[contains(@class,'chart-card')]"),
      });
      if (await folded.count()) await folded.first().click();
      await page.waitForSelector(".chart-card .chart canvas");
      // Drawn while folded, it takes the card's width when shown.
      await page.waitForFunction(
        () =>
          Math.abs(
            document.querySelector(".chart-card canvas")!.getBoundingClientRect().width -
              document.querySelector(".chart-card .chart")!.getBoundingClientRect().width,
          ) < 2,
      );
      expect(await page.getByTestId("activity-filtered").textContent()).toBe(
        "Counts only the events that match the search.",
      );
      // Odd channels are plan:pro (ch01 without its two untagged older events); the even ones are gone.
      await page.waitForFunction(
        () => document.querySelector(".chart-legend li .legend-name")?.textContent === "#ch01",
      );
      expect(await legend(page)).toEqual([
        "#ch01 20",
        "#ch03 18",
        "#ch05 16",
        "#ch07 14",
        "#ch09 12",
        "#ch11 10",
        "other (4 channels) 20",
      ]);
    });
  });

  test("375 px wide, light and dark: no horizontal scroll, the legend wraps, colours suit the background", async () => {
    const server = await pool.withOwner();
    await twentyChannels(server);
    const colours: Record<string, string | null> = {};
    for (const colorScheme of ["light", "dark"] as const) {
      await withPage(
        browser,
        `activity-mobile-${colorScheme}`,
        async (page) => {
          await signIn(page, server);
          await openProject(page, server);
          expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
          const right = await page.$$eval(".chart-legend li, .chart-card canvas", (els) =>
            Math.max(...els.map((el) => el.getBoundingClientRect().right)),
          );
          expect(right).toBeLessThanOrEqual(375);
          colours[colorScheme] = await swatchOf(page, "#ch01");
        },
        { viewport: { width: 375, height: 800 }, colorScheme },
      );
    }
    // On a touch screen, a tap on a bar shows the day's counts, inside the screen.
    const context = await browser.newContext({ viewport: { width: 375, height: 800 }, hasTouch: true, isMobile: true });
    try {
      context.setDefaultTimeout(STEP_TIMEOUT);
      const page = await context.newPage();
      const problems = watchProblems(page);
      await signIn(page, server);
      await openProject(page, server);
      const box = (await page.locator(".chart-card .u-over").boundingBox())!;
      await page.touchscreen.tap(box.x + box.width - 3, box.y + box.height / 2);
      await page.waitForSelector(".chart-tip:not([hidden])");
      expect(await page.locator(".chart-tip strong").textContent()).toBe(await dayLabel(page, 0));
      expect(await page.locator(".chart-tip li").first().textContent()).toBe("#ch0120");
      const tip = (await page.locator(".chart-tip").boundingBox())!;
      expect(tip.x).toBeGreaterThanOrEqual(0);
      expect(tip.x + tip.width).toBeLessThanOrEqual(375);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
    // The same hue, lighter on the dark background.
    const lightness = (rgb: string | null) => {
      const [r, g, b] = (rgb ?? "").match(/\d+/g)!.map(Number);
      return (Math.max(r!, g!, b!) + Math.min(r!, g!, b!)) / 2;
    };
    expect(lightness(colours.dark!)).toBeGreaterThan(lightness(colours.light!) + 30);
  });
});
