// Real Chromium for dashboard tests: the system's /usr/bin/chromium through playwright-core.
// Without it these tests are skipped, unless SIGNALBOARD_REQUIRE_BROWSER=1 (as in CI), where a
// missing browser fails the run. A failing test leaves a screenshot in test-results/.
import { describe, expect, setDefaultTimeout } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { startTestServer, type TestServer } from "../helpers.ts";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const available = existsSync(CHROMIUM);
if (!available && process.env.SIGNALBOARD_REQUIRE_BROWSER === "1")
  throw new Error(`Chromium not found at ${CHROMIUM}; install it with: apt-get install -y chromium`);
if (!available)
  console.warn(
    `Chromium not found at ${CHROMIUM}: browser tests are skipped (apt-get install -y chromium to run them)`,
  );

/** describe() when Chromium is installed, describe.skip() otherwise. */
export const describeBrowser = available ? describe : describe.skip;

export const RESULTS = join(import.meta.dir, "../../test-results");

export function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-gpu",
      "--no-first-run",
      "--disable-sync",
    ],
  });
}

export const OWNER = { username: "owner", password: "correct horse battery staple" };

/** A server with an owner account already created (the set-up flow has its own test). */
export async function serverWithOwner(settings: Record<string, string> = {}): Promise<TestServer> {
  const server = await startTestServer(settings);
  await server.services.accounts.createUser(OWNER, "owner");
  return server;
}

/** Servers started by one describe block, with `defaults` for their settings; closeAll() stops them and deletes their data dirs. */
export function serverPool(defaults: Record<string, string> = {}) {
  const started: TestServer[] = [];
  const track = (server: TestServer) => {
    started.push(server);
    return server;
  };
  return {
    track,
    withOwner: async (settings: Record<string, string> = {}) =>
      track(await serverWithOwner({ ...defaults, ...settings })),
    // Newest first: a server restarted on an older one's data dir must stop before that dir goes.
    closeAll: async () => {
      for (const server of started.splice(0).reverse()) await server.close();
    },
  };
}

export async function signIn(page: Page, server: TestServer, user = OWNER): Promise<void> {
  await page.goto(`${server.url}/login`);
  await page.fill("#username", user.username);
  await page.fill("#password", user.password);
  await page.click("form button[type=submit]");
  await page.waitForURL((url) => !url.pathname.startsWith("/login"));
}

/**
 * Each browser action or locator gives up after this, so a failure names what it waited for. A
 * hang's limit: what appears in a few milliseconds here took more than 30 s beside two busy loops
 * (a chart's first read, its reader process starting at a lower priority than the busy work), and
 * a wait that is met costs only what it waited. How fast the dashboard follows is npm run bench's.
 */
export const STEP_TIMEOUT = 120_000;

/**
 * A browser test's own limit, for every test of a file that drives Chromium: a hang's, not a
 * speed's. Generous, because a test that runs out is stopped with what it started (Chromium among
 * them), and every test after it in the file fails with it.
 */
setDefaultTimeout(240_000);

/**
 * Runs `fn` with a fresh page (its own cookies). Collects page errors and CSP violations: a test
 * fails if the page threw or the policy blocked something. Saves a screenshot and the error when it fails.
 */
export async function withPage(
  browser: Browser,
  name: string,
  fn: (page: Page, context: BrowserContext) => Promise<void>,
  options: { viewport?: { width: number; height: number }; colorScheme?: "light" | "dark"; timezoneId?: string } = {},
): Promise<void> {
  const context = await browser.newContext({
    viewport: options.viewport ?? { width: 1280, height: 900 },
    colorScheme: options.colorScheme ?? "light",
    timezoneId: options.timezoneId,
  });
  context.setDefaultTimeout(STEP_TIMEOUT);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error" && /Content Security Policy|Refused to/i.test(message.text()))
      problems.push(`CSP: ${message.text()}`);
  });
  try {
    await fn(page, context);
    if (problems.length) throw new Error(problems.join("\n"));
  } catch (error) {
    mkdirSync(RESULTS, { recursive: true });
    const file = join(RESULTS, name.replace(/[^a-z0-9-]+/gi, "-"));
    await page.screenshot({ path: `${file}.png`, fullPage: true }).catch(() => {});
    writeFileSync(`${file}.txt`, `${page.url()}\n\n${error instanceof Error ? error.stack : String(error)}\n`);
    throw error;
  } finally {
    await context.close();
  }
}

/** The path of the page's URL. */
export const path = (page: Page) => new URL(page.url()).pathname;

/** The JSON body of an API answer that must be a 200. */
export async function ok(response: Promise<Response>): Promise<any> {
  const res = await response;
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body;
}

/** Sends an event over the HTTP API, as an app would. */
export async function sendEvent(
  server: TestServer,
  body: Record<string, unknown>,
  token = server.token,
): Promise<Response> {
  return fetch(`${server.url}/v1/log`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
}

export async function sendMetric(
  server: TestServer,
  body: Record<string, unknown>,
  token = server.token,
): Promise<Response> {
  return fetch(`${server.url}/send-metric`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
}

/**
 * For a second page or browser context inside one test (withPage watches only its own page):
 * collects that page's errors and CSP violations the same way. Assert the array is empty at the end.
 */
export function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error" && /Content Security Policy|Refused to/i.test(message.text()))
      problems.push(`CSP: ${message.text()}`);
  });
  return problems;
}
