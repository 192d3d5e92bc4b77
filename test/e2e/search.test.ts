// Searching on the project page in a real browser: with a query the search bar and a count of the
// results come first (the metrics and the chart fold away), the shared URL carries only what was
// filled in, and a date that is not one is said next to its field instead of being ignored.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { call, eventually, type TestServer } from "../helpers.ts";
import {
  CHROMIUM,
  describeBrowser,
  launch,
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

const PHONE = { width: 375, height: 700 };
const feedNames = (page: Page) =>
  page.$$eval("#events > li.event .event-name", (els) => els.map((el) => el.textContent ?? ""));
/** Waits until the search index (filled a moment after an event is stored) finds `count` events for `q`. */
const indexed = (server: TestServer, q: string, count: number) =>
  eventually(
    async () =>
      expect(
        (await call(server, { path: `/v1/events?project=default&q=${encodeURIComponent(q)}` })).json.events,
      ).toHaveLength(count),
    30_000,
  );
const top = async (page: Page, selector: string) => (await page.locator(selector).first().boundingBox())!.y;

describeBrowser("search first", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  test("with a query, the search bar, the count and Clear come first and the results start on screen; the metrics and chart fold", async () => {
    const server = await pool.withOwner();
    for (const title of ["Revenue", "Signups", "Churn", "Active users", "Trials", "Refunds"])
      await ok(sendMetric(server, { title, value: 42 }));
    for (const [name, plan] of [
      ["Signup Ann", "pro"],
      ["Signup Bob", "free"],
      ["Signup Cid", "pro"],
    ])
      await ok(sendEvent(server, { project: "default", channel: "signups", event: name!, tags: { plan: plan! } }));
    await withPage(
      browser,
      "search-first",
      async (page) => {
        await signIn(page, server);
        // Without a query: the overview first, then the search bar.
        await page.goto(`${server.url}/p/default`);
        await page.locator(".metric", { hasText: "Revenue" }).waitFor();
        expect(await top(page, ".metrics")).toBeLessThan(await top(page, "form.filters"));
        expect(await page.locator("[data-testid=result-summary]").count()).toBe(0);

        await page.fill("#q", "plan:pro");
        await page.press("#q", "Enter");
        await page.waitForURL((url) => url.searchParams.get("q") === "plan:pro");
        const summary = page.locator("[data-testid=result-summary]");
        expect(await summary.locator(".result-count").textContent()).toBe("2 events match");
        expect(await feedNames(page)).toEqual(["Signup Cid", "Signup Ann"]);
        // Order on the page: search bar, summary, the folded overview, the results.
        const [form, count, overview, results] = [
          await top(page, "form.filters"),
          await top(page, "[data-testid=result-summary]"),
          await top(page, "details.overview"),
          await top(page, "#events > li.event"),
        ];
        expect(form).toBeLessThan(count);
        expect(count).toBeLessThan(overview);
        expect(overview).toBeLessThan(results);
        expect(results).toBeLessThan(PHONE.height - 60); // the first result is above the fold
        expect(await page.locator(".metric", { hasText: "Revenue" }).isVisible()).toBe(false);
        expect(await page.locator(".chart-card").isVisible()).toBe(false);

        // Unfolded: the metrics and the chart, drawn at the width they have.
        await page.locator("details.overview > summary").click();
        await page.locator(".metric", { hasText: "Revenue" }).waitFor({ state: "visible" });
        await page.waitForFunction(() => {
          const canvas = document.querySelector(".chart-card .chart canvas");
          const chart = document.querySelector(".chart-card .chart");
          return canvas && chart && Math.abs(canvas.getBoundingClientRect().width - chart.clientWidth) < 2;
        });

        // Clear: back to the whole feed.
        await summary.getByRole("link", { name: "Clear" }).click();
        await page.waitForURL((url) => url.pathname === "/p/default" && url.search === "");
        expect(await feedNames(page)).toEqual(["Signup Cid", "Signup Bob", "Signup Ann"]);
        expect(await page.inputValue("#q")).toBe("");
      },
      { viewport: PHONE },
    );
  });

  test("the count is honest: every match counted, past the first page of results; none says so", async () => {
    const server = await pool.withOwner();
    for (let i = 0; i < 41; i++)
      await ok(sendEvent(server, { project: "default", channel: "bulk", event: `Bulk ${i}`, tags: { batch: "one" } }));
    await ok(sendEvent(server, { project: "default", channel: "other", event: "Lonely", tags: { batch: "two" } }));
    await withPage(browser, "search-count", async (page) => {
      await signIn(page, server);
      const count = page.locator("[data-testid=result-summary] .result-count");
      await page.goto(`${server.url}/p/default?q=batch:one`);
      expect(await count.textContent()).toBe("41 events match");
      await page.goto(`${server.url}/p/default?q=batch:two`);
      expect(await count.textContent()).toBe("1 event matches");
      await page.goto(`${server.url}/p/default?q=nothing-like-this`);
      expect(await count.textContent()).toBe("No events match");
      await page.goto(`${server.url}/p/default?channel=other`);
      expect(await count.textContent()).toBe("1 event matches");
      expect(await feedNames(page)).toEqual(["Lonely"]);
    });
  });
});

describeBrowser("share URLs", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  test("submitting the form leaves out empty fields, and the time zone unless a date needs it", async () => {
    const server = await pool.withOwner();
    await ok(sendEvent(server, { project: "default", channel: "shop", event: "Bought foo" }));
    await indexed(server, "foo", 1);
    await withPage(
      browser,
      "share-urls",
      async (page) => {
        await signIn(page, server);
        await page.goto(`${server.url}/p/default`);
        await page.getByRole("button", { name: "More filters" }).click(); // the empty fields are in the form
        await page.fill("#q", "foo");
        await page.press("#q", "Enter");
        await page.waitForURL((url) => url.searchParams.get("q") === "foo");
        expect(new URL(page.url()).search).toBe("?q=foo");
        expect(await feedNames(page)).toEqual(["Bought foo"]);

        await page.getByRole("button", { name: "More filters" }).click();
        await page.fill("input[name=user]", "alice");
        await page.fill("input[name=from]", "2026-01-11");
        await page.getByRole("button", { name: "Search", exact: true }).click();
        await page.waitForURL((url) => url.searchParams.get("user") === "alice");
        expect(new URL(page.url()).search).toBe("?q=foo&user=alice&from=2026-01-11&tz=540");

        await page.fill("#q", "");
        await page.fill("input[name=user]", "");
        await page.fill("input[name=from]", "");
        await page.getByRole("button", { name: "Search", exact: true }).click();
        await page.waitForURL((url) => url.search === "");
        expect(await feedNames(page)).toEqual(["Bought foo"]);
      },
      { timezoneId: "Asia/Tokyo" },
    );
  });
});

describeBrowser("invalid dates", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  test("a date that is not one, or a range that ends before it starts, is said next to its field and in a summary; the rest still applies", async () => {
    const server = await pool.withOwner();
    await ok(sendEvent(server, { project: "default", channel: "shop", event: "Bought foo" }));
    await ok(sendEvent(server, { project: "default", channel: "shop", event: "Bought bar" }));
    await indexed(server, "foo", 1);
    await withPage(browser, "invalid-dates", async (page) => {
      await signIn(page, server);
      const response = await page.goto(`${server.url}/p/default?q=foo&from=2024-13-45`);
      expect(response!.status()).toBe(422);
      const from = page.locator("input[name=from]");
      expect(await from.getAttribute("aria-invalid")).toBe("true");
      const error = page.locator(`#${await from.getAttribute("aria-describedby")}`);
      expect(await error.textContent()).toContain("“2024-13-45” is not a date");
      expect(await error.isVisible()).toBe(true);
      // Next to its field: right below it.
      const [fieldBox, errorBox] = [await from.boundingBox(), await error.boundingBox()];
      expect(errorBox!.y).toBeGreaterThanOrEqual(fieldBox!.y + fieldBox!.height - 1);
      expect(errorBox!.y).toBeLessThan(fieldBox!.y + fieldBox!.height + 40);
      const summary = page.locator("#filter-errors");
      expect(await summary.getAttribute("role")).toBe("alert");
      expect(await summary.textContent()).toContain("“2024-13-45” is not a date");
      // The summary's link goes to the field.
      await summary.getByRole("link", { name: /From/ }).click();
      expect(await page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.name)).toBe("from");
      // The search ran without the bad date, and the live stream is connected.
      expect(await feedNames(page)).toEqual(["Bought foo"]);
      await page.waitForSelector(".live-status.live");
      await ok(sendEvent(server, { project: "default", channel: "shop", event: "Bought foo again" }));
      await page.waitForFunction(
        () => document.querySelector("#events > li.event .event-name")?.textContent === "Bought foo again",
      );

      const reversed = await page.goto(`${server.url}/p/default?from=2026-01-10&to=2026-01-05`);
      expect(reversed!.status()).toBe(422);
      const to = page.locator("input[name=to]");
      expect(await to.getAttribute("aria-invalid")).toBe("true");
      expect(await to.inputValue()).toBe("2026-01-05"); // kept, to be corrected
      expect(await page.locator(`#${await to.getAttribute("aria-describedby")}`).textContent()).toContain("before");
      expect(await page.locator("input[name=from]").getAttribute("aria-invalid")).toBeNull();

      const fine = await page.goto(`${server.url}/p/default?from=2026-01-05&to=2026-01-10`);
      expect(fine!.status()).toBe(200);
      expect(await page.locator("#filter-errors").count()).toBe(0);
      expect(await page.locator("input[aria-invalid]").count()).toBe(0);
    });
  });

  test("a bad date stays in view as typed; alone it filters nothing, so no count is shown; one Clear, level with the fields", async () => {
    const server = await pool.withOwner();
    for (const n of [1, 2, 3])
      await ok(sendEvent(server, { project: "default", channel: "shop", event: `Bought ${n}` }));
    await indexed(server, "bought", 3);
    await withPage(browser, "bad-date-alone", async (page) => {
      const warnings: string[] = [];
      page.on("console", (message) => {
        if (/does not conform/i.test(message.text())) warnings.push(message.text());
      });
      await signIn(page, server);
      const visibleClears = () =>
        page
          .getByRole("link", { name: "Clear", exact: true })
          .evaluateAll((links) => links.filter((a) => (a as HTMLElement).offsetParent !== null).length);

      expect((await page.goto(`${server.url}/p/default?from=2024-13-45`))!.status()).toBe(422);
      const from = page.locator("input[name=from]");
      expect(await from.inputValue()).toBe("2024-13-45"); // what was typed, on screen
      expect(await from.isVisible()).toBe(true);
      expect(await from.getAttribute("aria-invalid")).toBe("true");
      expect(warnings).toEqual([]);
      // Nothing is filtered: every event is listed, and no "N events match" claims a search.
      expect(await page.locator("[data-testid=result-summary]").count()).toBe(0);
      expect(await page.locator("body").innerText()).not.toContain("events match");
      expect(await feedNames(page)).toEqual(["Bought 3", "Bought 2", "Bought 1"]);
      // One Clear, on the row of the fields: its top level with theirs, as tall as they are.
      expect(await visibleClears()).toBe(1);
      const clear = (await page.locator(".filter-more").getByRole("link", { name: "Clear" }).boundingBox())!;
      const to = (await page.locator("input[name=to]").boundingBox())!;
      expect(Math.abs(clear.y - to.y)).toBeLessThanOrEqual(2);
      expect(Math.abs(clear.height - to.height)).toBeLessThanOrEqual(3);
      expect(clear.x).toBeGreaterThan(to.x + to.width - 1); // beside To, not on a line of its own
      await page.locator(".filter-more").getByRole("link", { name: "Clear" }).click();
      await page.waitForURL((url) => url.pathname === "/p/default" && url.search === "");

      // A filter that applies: the count and its Clear, and no second Clear in the filters.
      await page.goto(`${server.url}/p/default?q=bought&from=2024-13-45`);
      expect(await page.locator("[data-testid=result-summary]").innerText()).toContain("3 events match");
      expect(await page.locator("input[name=from]").inputValue()).toBe("2024-13-45");
      expect(await visibleClears()).toBe(1);
      expect(await page.locator(".filter-more").getByRole("link", { name: "Clear" }).count()).toBe(0);
      await page.goto(`${server.url}/p/default/c/shop?q=bought`);
      await page.getByRole("button", { name: "More filters" }).click();
      expect(await visibleClears()).toBe(1);
      expect(warnings).toEqual([]);
    });
  });
});

describeBrowser("tag values as search terms", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  /** Values the search syntax gives a meaning to (quotes, backslashes, spaces, colons), none at all, and other scripts. */
  const VALUES = [
    'say "hi"',
    '"a" b',
    '"',
    "",
    "pro plus",
    "C:\\dir\\",
    'back\\slash \\"x',
    "a:b:c",
    "ünï cödé 🚀",
    "tab\there",
    "two\nlines",
    "  padded  ",
    3,
    true,
  ];

  /** The feed's result: its names, once the page says how many match. */
  async function results(page: Page): Promise<string[]> {
    await page.locator("[data-testid=result-summary]").waitFor();
    return feedNames(page);
  }

  test("every value reads back: the event page's Filter link, its chip in the feed and the search box each find its event, and only it", async () => {
    const server = await pool.withOwner();
    const names = VALUES.map((_, i) => `Value ${i}`) as string[];
    const ids: number[] = [];
    for (const [i, v] of VALUES.entries())
      ids.push(
        (await ok(sendEvent(server, { project: "default", channel: `c${i % 3}`, event: names[i]!, tags: { v } }))).id,
      );
    // A decoy that differs by what an escape might lose.
    await ok(sendEvent(server, { project: "default", channel: "c0", event: "Decoy", tags: { v: "say hi" } }));
    await withPage(browser, "tag-values-round-trip", async (page) => {
      await signIn(page, server);
      for (const [i, v] of VALUES.entries()) {
        const label = JSON.stringify(v);
        // The event page's Filter link.
        await page.goto(`${server.url}/p/default/events/${ids[i]}`);
        await page.locator(".tag-table a", { hasText: "Filter" }).click();
        await page.waitForURL((url) => url.pathname === "/p/default");
        expect(await results(page), `Filter ${label}`).toEqual([names[i]!]);
        // The search box holds the term; sent again as it is, it finds the same.
        const typed = await page.inputValue("#q");
        await page.fill("#q", "");
        await page.fill("#q", typed);
        await page.press("#q", "Enter");
        await page.waitForURL((url) => url.searchParams.get("q") === typed);
        expect(await results(page), `search box ${label}: ${typed}`).toEqual([names[i]!]);
        // The chip in the project's feed.
        await page.goto(`${server.url}/p/default`);
        await page.locator(`#event-${ids[i]} a.tag`).click();
        await page.waitForURL((url) => url.searchParams.has("q"));
        expect(await results(page), `chip ${label}`).toEqual([names[i]!]);
      }
    });
  }); // each value three ways round, a page load or two each: minutes on a busy machine

  test("a chip in a channel's feed searches that channel, for events on the page and for those that arrive live", async () => {
    const server = await pool.withOwner();
    await ok(sendEvent(server, { project: "default", channel: "alpha", event: "Alpha pro", tags: { plan: "pro" } }));
    await ok(sendEvent(server, { project: "default", channel: "beta", event: "Beta pro", tags: { plan: "pro" } }));
    await withPage(browser, "channel-chip", async (page) => {
      await signIn(page, server);
      await page.goto(`${server.url}/p/default/c/alpha`);
      await page.locator("#events a.tag").first().click();
      await page.waitForURL((url) => url.pathname === "/p/default/c/alpha" && url.searchParams.get("q") === "plan:pro");
      expect(await results(page)).toEqual(["Alpha pro"]);

      // An event that arrives while the channel page is open links the same way.
      await page.goto(`${server.url}/p/default/c/alpha`);
      await page.locator(".live-status.live").waitFor();
      await ok(
        sendEvent(server, { project: "default", channel: "alpha", event: "Alpha live", tags: { plan: "pro plus" } }),
      );
      const live = page.locator("#events li.event", { hasText: "Alpha live" }).locator("a.tag");
      await live.waitFor();
      await live.click();
      await page.waitForURL(
        (url) => url.pathname === "/p/default/c/alpha" && url.searchParams.get("q") === 'plan:"pro plus"',
      );
      expect(await results(page)).toEqual(["Alpha live"]);

      // On the project's page, a chip searches the whole project, as before.
      await page.goto(`${server.url}/p/default`);
      await page.locator("#events li.event", { hasText: "Beta pro" }).locator("a.tag").click();
      await page.waitForURL((url) => url.pathname === "/p/default" && url.searchParams.get("q") === "plan:pro");
      expect(await results(page)).toEqual(["Beta pro", "Alpha pro"]);
    });
  });

  test("the search box keeps what was typed in the order it was typed", async () => {
    const server = await pool.withOwner();
    await ok(
      sendEvent(server, {
        project: "default",
        channel: "ops",
        event: "Deploy now",
        tags: { plan: "pro", env: "eu west" },
      }),
    );
    await indexed(server, "deploy", 1);
    await withPage(browser, "search-order", async (page) => {
      await signIn(page, server);
      const typed = 'plan:pro deploy env:"eu west" now';
      for (const at of ["/p/default", "/p/default/c/ops"]) {
        await page.goto(server.url + at);
        await page.fill("#q", typed);
        await page.press("#q", "Enter");
        await page.waitForURL((url) => url.searchParams.get("q") === typed);
        expect(await results(page)).toEqual(["Deploy now"]);
        expect(await page.inputValue("#q")).toBe(typed);
      }
    });
  });
});
