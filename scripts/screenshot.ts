// Makes the screenshots in README.md and docs/: a demo instance with realistic events, captured in Chromium.
// bun scripts/screenshot.ts  (needs /usr/bin/chromium; emoji look best with fonts-noto-color-emoji)
import { join } from "node:path";
import { chromium } from "playwright-core";
import { loadConfig } from "../src/config.ts";
import { setLogLevel } from "../src/logger.ts";
import { startServer } from "../src/server.ts";
import { tempDir } from "../test/helpers.ts";

setLogLevel("silent");
const out = join(import.meta.dir, "../docs");
const server = await startServer(
  loadConfig({ port: "0", host: "127.0.0.1", "data-dir": tempDir(), "rate-limit-full": "0" }, {}),
);
const { services: deps, url } = server;
await deps.accounts.createUser({ username: "ada", password: "demo password 1" }, "owner");
await deps.projects.create("my-saas");
const { token } = await deps.tokens.create({ name: "demo" });
const send = (path: string, body: unknown) =>
  fetch(url + path, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });

const now = Date.now() / 1000;
const history: [string, string, string][] = [
  ["signups", "New signup", "🎉"],
  ["payments", "Payment received", "💳"],
  ["deploys", "Deployed", "🚀"],
  ["errors", "Checkout failed", "🔥"],
  ["cron", "Nightly backup done", "🗄️"],
  ["support", "Ticket opened", "🎫"],
  ["emails", "Digest sent", "📬"],
];
const users = Array.from({ length: 9 }, (_, i) => new Bun.CryptoHasher("sha256").update(`user-${i}`).digest("hex"));
const events = [];
for (let day = 29; day >= 1; day--) {
  for (let i = 0; i < 6 + ((day * 7) % 9); i++) {
    const [channel, event, icon] = history[(day * 3 + i * i) % history.length]!;
    events.push({
      project: "my-saas",
      channel,
      event,
      icon,
      user_id: i % 3 ? users[(day + i) % users.length] : undefined,
      timestamp: now - day * 86400 + i * 3000,
    });
  }
}
for (const e of events) await send("/v1/log", e);
await send("/v1/insight", { project: "my-saas", title: "Active users", value: 1254, icon: "👥" });
await send("/v1/insight", { project: "my-saas", title: "MRR", value: 18420, icon: "💰" });
await send("/v1/insight", { project: "my-saas", title: "Status", value: "operational", icon: "🟢" });
await send("/v1/identify", {
  project: "my-saas",
  user_id: "alice@acme.test",
  properties: { plan: "pro", seats: 12, company: "Acme" },
});
const live = [
  {
    channel: "deploys",
    event: "Deployed v2.14.0",
    description: "All 412 checks green in 3 min 12 s.",
    icon: "🚀",
    tags: { env: "production", region: "eu-west" },
  },
  {
    channel: "signups",
    event: "New signup",
    description: "Came from the **pricing page**, chose the *Pro* plan.",
    parser: "markdown",
    icon: "🎉",
    tags: { plan: "pro", source: "pricing" },
    user_id: "alice@acme.test",
  },
  {
    channel: "payments",
    event: "Payment received",
    description: "$249.00 for 12 seats, annual.",
    icon: "💳",
    tags: { plan: "pro", amount: 249 },
    user_id: "alice@acme.test",
    notify: true,
  },
];
const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-background-networking", "--disable-component-update"],
});
for (const [name, viewport, scheme] of [
  ["dashboard", { width: 1280, height: 980 }, "light"],
  ["dashboard-mobile-dark", { width: 390, height: 844 }, "dark"],
] as const) {
  const context = await browser.newContext({
    viewport,
    colorScheme: scheme,
    deviceScaleFactor: name.includes("mobile") ? 2 : 1,
  });
  const page = await context.newPage();
  await page.goto(`${url}/login`);
  await page.fill("#username", "ada");
  await page.fill("#password", "demo password 1");
  await page.click("form button[type=submit]");
  await page.goto(`${url}/p/my-saas`);
  await page.waitForSelector(".live-status.live");
  if (name === "dashboard") for (const e of live) await send("/v1/log", { project: "my-saas", ...e });
  await page.waitForTimeout(3000);
  await page.screenshot({ path: join(out, `${name}.png`) });
  await context.close();
}
await browser.close();
await server.stop();
console.log(`screenshots in ${out}`);
