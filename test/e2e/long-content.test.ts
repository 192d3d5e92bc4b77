// Long content and times in a real browser: 64-character hashed user ids and long tag keys and
// values wrap instead of pushing the page sideways on a phone, long tag values are never lost (a
// chip's tooltip, the event page's tag table with a copy button), and absolute times are in the
// viewer's time zone, written one way on every page.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { CHROMIUM, describeBrowser, launch, ok, serverPool, signIn, withPage } from "./browser.ts";

let browser: Browser;
beforeAll(async () => {
  if (existsSync(CHROMIUM)) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

const PHONE = { width: 375, height: 800 };
/** A SHA-256 in hex, as apps send for a user id they do not want to reveal. */
const HASHED_USER = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
const LONG_KEY = "customer-" + "segment-".repeat(6) + "x"; // 58 characters, one word
const LONG_VALUE = "https://example.com/" + "a1b2c3d4e5".repeat(12) + "?ref=campaign-autumn"; // 160 characters, no space
const PROPERTY_KEY = "k".repeat(64);
const PROPERTY_VALUE = "v".repeat(300);
const GROUP = "g".repeat(120);

async function post(server: { url: string; token: string }, path: string, body: unknown): Promise<any> {
  return ok(
    fetch(server.url + path, {
      method: "POST",
      headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    }),
  );
}

/** How far the page scrolls sideways (0: it fits). */
const sideways = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

describeBrowser("long content", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  test("375 px: a hashed user id and long tag keys and values wrap on the feed, the event page and the user page", async () => {
    const server = await pool.withOwner();
    const { id } = await post(server, "/v1/log", {
      project: "default",
      channel: "signups",
      event: "Signed up",
      user_id: HASHED_USER,
      tags: { [LONG_KEY]: LONG_VALUE, plan: "pro" },
    });
    await post(server, "/v1/identify", {
      project: "default",
      user_id: HASHED_USER,
      properties: { [PROPERTY_KEY]: PROPERTY_VALUE, plan: "pro" },
    });
    await post(server, "/v1/group", {
      project: "default",
      user_id: HASHED_USER,
      group_id: GROUP,
      properties: { [PROPERTY_KEY]: PROPERTY_VALUE },
    });
    await withPage(
      browser,
      "long-content-phone",
      async (page) => {
        await signIn(page, server);
        await page.goto(`${server.url}/p/default`);
        const item = page.locator("#events > li.event", { hasText: "Signed up" });
        await item.waitFor();
        expect(await item.locator(".user-link").textContent()).toBe(`👤 ${HASHED_USER}`);
        expect(await sideways(page)).toBe(0);
        const link = await item.locator(".user-link").boundingBox();
        expect(link!.x + link!.width).toBeLessThanOrEqual(PHONE.width);
        const chip = await item.locator(".tag", { hasText: "segment" }).boundingBox();
        expect(chip!.x + chip!.width).toBeLessThanOrEqual(PHONE.width);

        await page.goto(`${server.url}/p/default/events/${id}`);
        await page.locator("h1", { hasText: "Signed up" }).waitFor();
        expect(await sideways(page)).toBe(0);
        const value = page.locator(".tag-table tr", { hasText: LONG_KEY }).locator(".tag-value");
        expect(await value.textContent()).toBe(LONG_VALUE); // the whole value, not cut
        const box = await value.boundingBox();
        expect(box!.x + box!.width).toBeLessThanOrEqual(PHONE.width);
        expect(box!.height).toBeGreaterThan(40); // wrapped over lines rather than clipped

        await page.goto(`${server.url}/p/default/users/${HASHED_USER}`);
        await page.locator("h1", { hasText: HASHED_USER }).waitFor();
        await page.locator("#events > li.event", { hasText: "Signed up" }).waitFor();
        await page.getByText(GROUP).waitFor();
        expect(await sideways(page)).toBe(0);
        const property = await page.locator("dd", { hasText: PROPERTY_VALUE }).first().boundingBox();
        expect(property!.x + property!.width).toBeLessThanOrEqual(PHONE.width);
      },
      { viewport: PHONE },
    );
  });

  test("375 px: a saved chart's long name wraps in its card on the project's dashboard", async () => {
    const server = await pool.withOwner();
    const name = `Signups${"AndUpgrades".repeat(8)}`; // 95 characters, one word
    await post(server, "/v1/log", { project: "default", channel: "signups", event: "Signed up" });
    await post(server, "/v1/charts", {
      project: "default",
      kind: "series",
      name,
      definition: { event: "Signed up", last_days: 7 },
      position: 0,
    });
    await withPage(
      browser,
      "long-chart-name-phone",
      async (page) => {
        await signIn(page, server);
        await page.goto(`${server.url}/p/default`);
        const title = page.locator(".chart-card h2", { hasText: name });
        await title.waitFor();
        expect(await sideways(page)).toBe(0);
        const box = await title.boundingBox();
        expect(box!.x + box!.width).toBeLessThanOrEqual(PHONE.width);
      },
      { viewport: PHONE },
    );
  });

  test("a long tag value is cut in the feed's chip, with the whole key: value as its tooltip; the event page lists it whole, with a copy button", async () => {
    const server = await pool.withOwner();
    const { id } = await post(server, "/v1/log", {
      project: "default",
      channel: "signups",
      event: "Campaign visit",
      tags: { [LONG_KEY]: LONG_VALUE, plan: "pro" },
    });
    await withPage(browser, "long-tag-values", async (page, context) => {
      await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
      await signIn(page, server);
      await page.goto(`${server.url}/p/default`);
      const chip = page.locator("#events .tag", { hasText: LONG_KEY });
      await chip.waitFor();
      expect(await chip.getAttribute("title")).toBe(`${LONG_KEY}: ${LONG_VALUE}`);
      // It is cut on screen: the value's box is narrower than its text.
      expect(await chip.locator(".tag-value").evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true);
      expect(await page.locator("#events .tag", { hasText: "plan" }).getAttribute("title")).toBeNull(); // a short one is not cut

      await page.goto(`${server.url}/p/default/events/${id}`);
      const rows = page.locator(".tag-table tbody tr");
      expect(await rows.count()).toBe(2);
      const row = rows.filter({ hasText: LONG_KEY });
      expect(await row.locator(".tag-value").evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true); // not cut
      const copy = row.getByRole("button", { name: `Copy ${LONG_KEY}` });
      await copy.click();
      await row.getByRole("button", { name: `Copied ${LONG_KEY}` }).waitFor();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(LONG_VALUE);
      await rows.filter({ hasText: "plan" }).getByRole("button", { name: "Copy plan" }).click();
      await page.waitForFunction(() => navigator.clipboard.readText().then((t) => t === "pro"));

      // A row's filter link searches the project for that tag.
      await rows.filter({ hasText: "plan" }).getByRole("link", { name: "Filter by plan" }).click();
      await page.waitForURL((url) => url.pathname === "/p/default" && url.searchParams.get("q") === "plan:pro");
      await page.locator("#events .event-name", { hasText: "Campaign visit" }).waitFor();
    });
  });

  test("375 px: the event page stacks each tag, its key on a line, its value below at full width, Copy and Filter with it", async () => {
    const server = await pool.withOwner();
    const key = "k".repeat(64);
    const value = "v".repeat(200);
    const { id } = await post(server, "/v1/log", {
      project: "default",
      channel: "signups",
      event: "Tagged",
      tags: { [key]: value, plan: "pro" },
    });
    await withPage(
      browser,
      "tag-table-phone",
      async (page) => {
        await signIn(page, server);
        await page.goto(`${server.url}/p/default/events/${id}`);
        const row = page.locator(".tag-table tbody tr", { hasText: key });
        await row.waitFor();
        expect(await sideways(page)).toBe(0);
        const table = (await page.locator(".tag-table").boundingBox())!;
        const keyBox = (await row.locator(".tag-name").boundingBox())!;
        const valueBox = (await row.locator(".tag-value").boundingBox())!;
        const lineHeight = await row.locator(".tag-name").evaluate((el) => parseFloat(getComputedStyle(el).lineHeight));
        expect(keyBox.height).toBeLessThanOrEqual(3 * lineHeight + 1); // a 64-character key: a few lines, not a column of them
        expect(valueBox.width).toBeGreaterThan(table.width * 0.75); // the value has the row's width
        expect(valueBox.y).toBeGreaterThanOrEqual(keyBox.y + keyBox.height - 1); // below its key
        for (const control of [
          row.getByRole("button", { name: `Copy ${key}` }),
          row.getByRole("link", { name: `Filter by ${key}` }),
        ]) {
          const box = (await control.boundingBox())!;
          expect(await control.isVisible()).toBe(true);
          expect(box.x + box.width).toBeLessThanOrEqual(PHONE.width);
          expect(box.y).toBeGreaterThanOrEqual(keyBox.y); // with its tag, not in a column beside it
        }
      },
      { viewport: PHONE },
    );
  });
});

describeBrowser("times", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  test("the event page shows event and receive times in the viewer's time zone; without script, in UTC", async () => {
    const server = await pool.withOwner();
    const at = Date.parse("2026-01-15T12:00:00Z");
    const { id } = await post(server, "/v1/log", {
      project: "default",
      channel: "clock",
      event: "Old news",
      timestamp: at / 1000,
    });
    await withPage(
      browser,
      "times-local",
      async (page) => {
        await signIn(page, server);
        await page.goto(`${server.url}/p/default/events/${id}`);
        const eventTime = page.locator(".facts dt:text-is('Event time') + dd time[data-absolute]");
        await page.waitForFunction(() => !document.querySelector("time[data-absolute]")?.textContent?.includes("UTC"));
        const shown = (await eventTime.textContent()) ?? "";
        const expected = await page.evaluate(
          (ms) =>
            new Date(ms).toLocaleString(undefined, {
              dateStyle: "medium",
              timeStyle: "long",
              timeZone: "Asia/Kolkata",
            }),
          at,
        );
        expect(shown).toBe(expected);
        expect(shown).toMatch(/5:30:00\s?PM|17:30:00/); // 12:00 UTC is 17:30 in India
        expect(await eventTime.getAttribute("datetime")).toBe("2026-01-15T12:00:00.000Z");

        const received = page.locator(".facts dt:text-is('Received') + dd time[data-absolute]");
        const receivedAt = Date.parse((await received.getAttribute("datetime"))!);
        expect(Math.abs(receivedAt - Date.now())).toBeLessThan(60_000);
        expect(await received.textContent()).toBe(
          await page.evaluate(
            (ms) =>
              new Date(ms).toLocaleString(undefined, {
                dateStyle: "medium",
                timeStyle: "long",
                timeZone: "Asia/Kolkata",
              }),
            receivedAt,
          ),
        );

        // The relative time's tooltip is local too.
        const title =
          (await page.locator(".facts dt:text-is('Event time') + dd time[data-relative]").getAttribute("title")) ?? "";
        expect(title).toMatch(/5:30:00\s?PM|17:30:00/);

        // The page as sent, before any script runs: the same instants, said in UTC.
        const raw = await (await page.request.get(`${server.url}/p/default/events/${id}`)).text();
        expect(raw).toContain(
          `<time datetime="2026-01-15T12:00:00.000Z" data-absolute>Jan 15, 2026, 12:00:00 PM UTC</time>`,
        );
      },
      { timezoneId: "Asia/Kolkata" },
    );
  });

  test("every page writes a date and time one way: in the viewer's zone once the script ran, in UTC as sent", async () => {
    const server = await pool.withOwner();
    const now = Math.floor(Date.now() / 1000);
    await post(server, "/v1/log", {
      project: "default",
      channel: "clock",
      event: "Long ago",
      user_id: "bob",
      timestamp: now - 100 * 86_400,
    });
    const { id } = await post(server, "/v1/log", {
      project: "default",
      channel: "clock",
      event: "Just now",
      user_id: "alice",
    });
    await post(server, "/v1/identify", { project: "default", user_id: "alice", properties: { name: "Alice" } });
    await post(server, "/send-metric", { title: "Temperature", value: 21 });
    const pages = [
      "/p/default",
      "/p/default/c/clock",
      `/p/default/events/${id}`,
      "/p/default/users",
      "/p/default/users/alice",
      "/p/default/users/bob",
      "/p/default/metrics/Temperature",
      "/settings/api",
      "/settings/members",
    ];
    // The one format: a medium date and a long time (with its zone); a day alone where a time ago would be too long.
    const DATE_TIME = /^[A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d{2}:\d{2}\s[AP]M (GMT\+5:30|UTC)$/;
    const DAY = /^[A-Z][a-z]{2} \d{1,2}, \d{4}$/;
    const AGO = /^(just now|\d+ (min|h|d) ago)$/;
    await withPage(
      browser,
      "times-one-format",
      async (page) => {
        await signIn(page, server);
        let days = 0;
        for (const at of pages) {
          // As sent, before any script: UTC.
          const raw = await (await page.request.get(server.url + at)).text();
          const sent = [
            ...raw.matchAll(
              /<time datetime="([^"]+)"( title="([^"]+)")?( data-relative| data-absolute)>([^<]+)<\/time>/g,
            ),
          ];
          expect(sent.length, at).toBeGreaterThan(0);
          for (const [, , , title, kind, text] of sent) {
            if (kind === " data-absolute") expect(text, at).toMatch(/UTC$/);
            if (kind === " data-absolute") expect(text, at).toMatch(DATE_TIME);
            else {
              expect(title, at).toMatch(DATE_TIME);
              expect(title, at).toMatch(/UTC$/);
              expect(text, at).toMatch(new RegExp(`${AGO.source}|${DAY.source}`));
            }
          }
          // In the browser: the viewer's zone, the same format.
          await page.goto(server.url + at);
          await page.waitForFunction(() =>
            [...document.querySelectorAll("time")].every((t) => (t as HTMLElement).dataset.local),
          );
          const shown = await page.$$eval("time", (els) =>
            els.map((el) => {
              const ms = Date.parse(el.getAttribute("datetime")!);
              const local = new Date(ms).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "long" });
              return {
                absolute: el.hasAttribute("data-absolute"),
                text: el.textContent ?? "",
                title: el.getAttribute("title"),
                local,
                day: new Date(ms).toLocaleDateString(undefined, { dateStyle: "medium" }),
              };
            }),
          );
          for (const t of shown) {
            const when = t.absolute ? t.text : t.title!;
            expect(when, at).toMatch(DATE_TIME);
            expect(when, at).toBe(t.local);
            expect(when, at).toEndWith("GMT+5:30");
            if (!t.absolute && !AGO.test(t.text)) {
              expect(t.text, at).toBe(t.day);
              days++;
            }
          }
        }
        // Bob's event and first seen, a hundred days ago, are said as days.
        expect(days).toBeGreaterThan(2);
        // The metric's chart says its times the same way in its legend.
        await page.goto(`${server.url}/p/default/metrics/Temperature`);
        await page.waitForSelector(".chart canvas");
        const box = (await page.locator(".chart .u-over").boundingBox())!;
        await page.mouse.move(box.x + box.width - 2, box.y + box.height / 2);
        const legendTime =
          (await page.locator(".chart .u-legend .u-series").first().locator(".u-value").textContent()) ?? "";
        expect(legendTime).toMatch(DATE_TIME);
      },
      { timezoneId: "Asia/Kolkata" },
    );
  });
});
