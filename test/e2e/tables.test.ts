// Every table of the dashboard on a desktop: each header cell stands above its column (the cells
// of a row line up under the headers), and no cell breaks inside a word that fits on its line.
// On a phone the wide tables become a card per row (mobile.test.ts); on a desktop they are tables.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
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

/**
 * What is wrong with the page's tables as drawn: a cell that is not under its column's header
 * (horizontally within 2 px of it, and below it), and a word broken over two lines although it
 * fits on one in its cell. How many tables and rows were looked at, so a test can tell it saw some.
 */
function tableProblems(page: Page): Promise<{ tables: number; rows: number; problems: string[] }> {
  return page.evaluate(() => {
    const problems: string[] = [];
    let tables = 0;
    let rows = 0;
    const shown = (el: Element) => el.getBoundingClientRect().width > 0;
    // Words as the language has them: "127.0.0.1" is one; "write-only" and "^[a-z0-9-]" break between theirs, as text does.
    const words = new Intl.Segmenter("en", { granularity: "word" });
    for (const table of document.querySelectorAll("main table")) {
      if (!shown(table)) continue;
      tables++;
      const name = `${table.className || "table"} (${table.closest("[id]")?.id ?? ""})`;
      const heads = [...table.querySelectorAll(":scope > thead > tr > th")];
      for (const tr of table.querySelectorAll(":scope > tbody > tr")) {
        const cells = [...tr.children];
        if (cells.length !== heads.length) continue;
        rows++;
        cells.forEach((cell, i) => {
          const head = heads[i]!.getBoundingClientRect();
          const box = cell.getBoundingClientRect();
          if (Math.abs(box.left - head.left) > 2 || Math.abs(box.right - head.right) > 2 || box.top < head.bottom - 1)
            problems.push(
              `${name}: column ${i + 1} ("${heads[i]!.textContent?.trim()}") spans ${Math.round(head.left)}-${Math.round(head.right)}, its cell "${cell.textContent?.trim().slice(0, 30)}" ${Math.round(box.left)}-${Math.round(box.right)} at ${Math.round(box.top)} (header at ${Math.round(head.top)})`,
            );
        });
      }
      for (const cell of table.querySelectorAll("th, td")) {
        const style = getComputedStyle(cell);
        const room = cell.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
        const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          const text = node.textContent ?? "";
          for (const word of words.segment(text)) {
            if (!word.isWordLike) continue;
            const range = document.createRange();
            range.setStart(node, word.index);
            range.setEnd(node, word.index + word.segment.length);
            const rects = [...range.getClientRects()].filter((r) => r.width > 0);
            const lines = new Set(rects.map((r) => Math.round(r.top)));
            const width = rects.reduce((sum, r) => sum + r.width, 0);
            if (lines.size > 1 && width <= room)
              problems.push(
                `${name}: "${word.segment}" is broken over ${lines.size} lines, though it is ${Math.round(width)} px and its cell has ${Math.round(room)}`,
              );
          }
        }
      }
    }
    return { tables, rows, problems };
  });
}

describeBrowser("tables on a desktop", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  test("tokens, members, audit, /docs, an event's tags and a metric's history: headers above their columns, no word broken", async () => {
    const server = await pool.withOwner();
    await server.services.accounts.createUser({ username: "bea", password: "another long password" }, "member");
    await server.services.tokens.create({ name: "website", kind: "public", project: "default" });
    await server.services.tokens.create({
      name: "the nightly import job on the old reporting server, until the new one takes over in spring",
    });
    // Failed sign-ins from documentation addresses: the audit trail's "From" column has addresses to keep whole.
    await server.services.accounts.login("bea", "not her password", "203.0.113.5");
    await server.services.accounts.login("bea", "not her password", "2001:db8:85a3::8a2e:370:7334");
    const event = await ok(
      sendEvent(server, {
        project: "default",
        channel: "payments",
        event: "Paid",
        tags: { plan: "pro", region: "eu-west-1", amount: 1299 },
      }),
    );
    // A metric of words has its history as a table (numbers are a chart).
    await ok(sendMetric(server, { project: "default", title: "Status", value: "green" }));
    const pages = [
      "/settings/api",
      "/settings/members",
      "/settings/audit",
      "/docs",
      `/p/default/events/${event.id}`,
      "/p/default/metrics/Status",
    ];
    for (const width of [1280, 1600])
      await withPage(
        browser,
        `tables-${width}`,
        async (page) => {
          await signIn(page, server);
          const found: Record<string, string[]> = {};
          for (const at of pages) {
            await page.goto(server.url + at);
            const { tables, rows, problems } = await tableProblems(page);
            expect(tables, `tables on ${at}`).toBeGreaterThan(0);
            expect(rows, `rows on ${at}`).toBeGreaterThan(0);
            found[at] = problems;
          }
          expect(found).toEqual(Object.fromEntries(pages.map((at) => [at, []])));
        },
        { viewport: { width, height: 900 } },
      );
  });
});
