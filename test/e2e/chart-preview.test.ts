// The chart builder's live preview in a real browser, against the server run as a process with
// request logs on: the session's CSRF token stays out of every URL the preview asks (proxies and
// access logs keep URLs), and out of the server's request log lines.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, rmSync } from "node:fs";
import type { Browser } from "playwright-core";
import { eventually, tempDir } from "../helpers.ts";
import { CHROMIUM, describeBrowser, launch, OWNER, withPage } from "./browser.ts";
import { PROGRAM, newToken, run, type ServerProcess, serve } from "./process.ts";

let browser: Browser;
let server: ServerProcess;
let dataDir: string;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) return;
  browser = await launch();
  dataDir = tempDir();
  const token = await newToken(dataDir, "preview");
  const made = await run(PROGRAM, ["user", "create", OWNER.username, "--owner", "--password-stdin"], {
    stdin: OWNER.password,
    env: { DATA_DIR: dataDir },
  });
  expect(made.code).toBe(0);
  expect((await run(PROGRAM, ["project", "create", "shop", "--data-dir", dataDir])).code).toBe(0);
  server = await serve(PROGRAM, ["--data-dir", dataDir], { env: { SIGNALBOARD_LOG_LEVEL: "debug" } });
  const sent = await fetch(`${server.url}/v1/log`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ project: "shop", channel: "web", event: "Signed up" }),
  });
  expect(sent.status).toBe(200);
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describeBrowser("the chart builder's preview", () => {
  test("asks without the CSRF token in its URL, and the request log has no token either", async () => {
    await withPage(browser, "chart-preview-csrf", async (page) => {
      const asked: string[] = [];
      page.on("request", (request) => {
        if (new URL(request.url()).pathname.endsWith("/charts/preview")) asked.push(request.url());
      });
      await page.goto(`${server.url}/login`);
      await page.fill("#username", OWNER.username);
      await page.fill("#password", OWNER.password);
      await page.click("form button[type=submit]");
      await page.waitForURL((url) => !url.pathname.startsWith("/login"));
      await page.goto(`${server.url}/p/shop/charts/new`);
      const csrf = JSON.parse((await page.getAttribute("body", "hx-headers")) ?? "{}")["X-CSRF-Token"] as string;
      expect(csrf).toBeTruthy();
      await page.fill("#chart-event", "Signed up");
      await page.locator("#chart-event").blur();
      await page.locator("[data-testid=chart-total]", { hasText: "1 event in the range" }).waitFor();
      await page.selectOption("#chart-range", "7");
      await eventually(() => expect(asked.length).toBeGreaterThanOrEqual(2));
      for (const url of asked) {
        expect(new URL(url).searchParams.has("_csrf")).toBe(false);
        expect(url).not.toContain(csrf);
      }
      // The form still carries the token for its own POST, where it belongs.
      expect(await page.inputValue("#chart-form input[name=_csrf]")).toBe(csrf);
      // The address bar follows the question without it, too.
      expect(page.url()).not.toContain("_csrf");
      const logged = () =>
        server
          .logs()
          .split("\n")
          .filter((line) => line.includes('"msg":"request"') && line.includes("/charts/preview"));
      await eventually(() => expect(logged().length).toBeGreaterThanOrEqual(asked.length));
      for (const line of logged()) expect(line).not.toContain(csrf);
    });
  });
});
