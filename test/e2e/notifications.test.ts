// Notifications in a real browser: the installable web app (manifest, icons, service worker),
// Settings → Notifications (enabling this device, the device list, test notifications, errors,
// project filters, removal, browsers without push), the in-page toasts of the live feed, and
// Settings → Integrations against a local HTTP receiver.
//
// Headless Chromium cannot reach a real push service, so the page's PushManager is stubbed with an
// init script: subscribe() resolves to a subscription of the local, protocol-faithful push service
// (test/push-service.ts). Everything else is real: the page's script, the server's endpoint, the
// notifier, VAPID and the aes128gcm encryption, which the push service verifies and decrypts.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { existsSync } from "node:fs";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { eventually, notifierIdle, type TestServer } from "../helpers.ts";
import { type PushService, startPushService } from "../push-service.ts";
import {
  CHROMIUM,
  describeBrowser,
  launch,
  ok,
  OWNER,
  path,
  sendEvent,
  serverPool,
  signIn,
  STEP_TIMEOUT,
  watchProblems,
  withPage,
} from "./browser.ts";
import { startFakeServices } from "../fake-services.ts";

/** Failed deliveries are retried quickly here, so a test never waits on the default 5 s backoff. */
const FAST = { "notify-retry-base": "100ms", "outbound-allow": "127.0.0.1" }; // the push service and receivers on 127.0.0.1

let browser: Browser;
let push: PushService;
beforeAll(async () => {
  push = await startPushService();
  if (existsSync(CHROMIUM)) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
  push?.stop();
});

type Subscription = ReturnType<PushService["subscribe"]>;

/**
 * Runs in the page before its own scripts: PushManager.subscribe() resolves to the local push
 * service's subscription (what a browser's PushSubscription would hold), getSubscription() returns
 * it once subscribed (null before), unsubscribe() forgets it. "Subscribed" lives in localStorage,
 * so it survives reloads like a real subscription. The options subscribe() got are kept too.
 */
function stubPushManager(sub: { endpoint: string; keys: { p256dh: string; auth: string } }) {
  const FLAG = "e2e.push.subscribed";
  const subscription = () => ({
    endpoint: sub.endpoint,
    expirationTime: null,
    options: { userVisibleOnly: true, applicationServerKey: null },
    getKey: () => null,
    toJSON: () => ({
      endpoint: sub.endpoint,
      expirationTime: null,
      keys: { p256dh: sub.keys.p256dh, auth: sub.keys.auth },
    }),
    unsubscribe: async () => {
      localStorage.removeItem(FLAG);
      return true;
    },
  });
  PushManager.prototype.subscribe = async function (options?: PushSubscriptionOptionsInit) {
    const key = options?.applicationServerKey;
    const bytes =
      key instanceof ArrayBuffer
        ? new Uint8Array(key)
        : key && typeof key !== "string"
          ? new Uint8Array(key.buffer, key.byteOffset, key.byteLength)
          : null;
    localStorage.setItem(
      FLAG,
      JSON.stringify({
        userVisibleOnly: options?.userVisibleOnly ?? false,
        applicationServerKey: bytes ? btoa(String.fromCharCode(...bytes)) : null,
      }),
    );
    return subscription() as unknown as PushSubscription;
  };
  PushManager.prototype.getSubscription = async function () {
    return (localStorage.getItem(FLAG) ? subscription() : null) as unknown as PushSubscription | null;
  };
}

/** A browser context that can "receive push": notifications allowed, PushManager stubbed. */
async function pushCapable(context: BrowserContext, server: TestServer): Promise<Subscription> {
  const sub = push.subscribe();
  await context.grantPermissions(["notifications"], { origin: server.url });
  await context.addInitScript(stubPushManager, { endpoint: sub.endpoint, keys: sub.keys });
  return sub;
}

/** The device's entry in "Your devices". */
const deviceItem = (page: Page, name: string): Locator => page.locator("ul.devices > li.device", { hasText: name });

/** Settings → Notifications, "Enable on this device" with this name; returns once the reloaded page lists it. */
async function enableThisDevice(page: Page, server: TestServer, name: string): Promise<{ id: number; item: Locator }> {
  await page.goto(server.url + "/settings/notifications");
  const nameField = page.locator("input[name=deviceName]");
  await page.locator("[data-testid=enable-push]").waitFor({ state: "visible" });
  await page.waitForFunction(
    () => (document.querySelector("input[name=deviceName]") as HTMLInputElement | null)?.value !== "",
    null,
    { timeout: STEP_TIMEOUT },
  );
  await nameField.fill(name);
  // The page reloads by itself once the server has the device: wait for that reload, or a click on
  // the new device's buttons could land on the page it replaces (and be lost).
  const reloaded = page.waitForEvent("load", { timeout: STEP_TIMEOUT });
  await page.click("[data-testid=enable-push]");
  await reloaded;
  const item = deviceItem(page, name);
  await item.waitFor({ timeout: STEP_TIMEOUT });
  const id = Number((await item.getAttribute("id"))!.replace("device-", ""));
  expect(id).toBeGreaterThan(0);
  return { id, item };
}

/** Reloads the page until `check` holds (outcomes are recorded just after a delivery). */
async function reloadUntil(
  page: Page,
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = STEP_TIMEOUT,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await page.reload();
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`after ${timeoutMs} ms of reloading: ${what}`);
    await page.waitForTimeout(200);
  }
}

const titlesFor = (sub: Subscription) => push.messagesFor(sub.id).map((m) => m.title);

// ---------------------------------------------------------------------------------------------

describeBrowser("the installable web app", () => {
  const pool = serverPool(FAST);
  afterAll(() => pool.closeAll());

  test("manifest with name, start URL, standalone display and loading icons; pages link it; the service worker registers and activates", async () => {
    const server = await pool.withOwner();

    const manifestResponse = await fetch(server.url + "/manifest.webmanifest");
    expect(manifestResponse.status).toBe(200);
    expect(manifestResponse.headers.get("content-type")).toContain("application/manifest+json");
    const manifest = (await manifestResponse.json()) as {
      name: string;
      start_url: string;
      display: string;
      icons: { src: string; sizes: string; type: string }[];
    };
    expect(manifest.name).toBe("Signalboard");
    expect(manifest.start_url).toBe("/");
    expect(manifest.display).toBe("standalone");
    for (const size of ["192x192", "512x512"]) {
      const icon = manifest.icons.find((i) => i.sizes === size && i.type === "image/png");
      expect(icon, `a ${size} PNG icon`).toBeDefined();
      const res = await fetch(new URL(icon!.src, server.url));
      expect(res.status, icon!.src).toBe(200);
      expect(res.headers.get("content-type")).toBe("image/png");
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(100);
    }

    const worker = await fetch(server.url + "/sw.js");
    expect(worker.status).toBe(200);
    expect(worker.headers.get("content-type")).toMatch(/^(text|application)\/javascript/);
    expect(worker.headers.get("service-worker-allowed")).toBe("/");
    expect(await worker.text()).toContain('addEventListener("push"');

    await withPage(browser, "installable", async (page) => {
      const headLinks = async () => {
        const manifestHref = await page.locator("link[rel=manifest]").getAttribute("href");
        const touchHref = await page.locator("link[rel=apple-touch-icon]").getAttribute("href");
        expect(manifestHref).toBeTruthy();
        expect(touchHref).toBeTruthy();
        expect(new URL(manifestHref!, page.url()).href).toBe(`${server.url}/manifest.webmanifest`);
        const touch = await page.request.get(new URL(touchHref!, page.url()).href);
        expect(touch.status()).toBe(200);
        expect(touch.headers()["content-type"]).toBe("image/png");
      };
      // Before signing in (the first page a phone sees) and on the dashboard.
      await page.goto(server.url + "/login");
      await headLinks();
      await signIn(page, server);
      await page.goto(server.url + "/p/default");
      await headLinks();

      const scriptURL = await page.evaluate(() => navigator.serviceWorker.ready.then((r) => r.active?.scriptURL));
      expect(scriptURL).toBe(`${server.url}/sw.js`);
      const scope = await page.evaluate(() => navigator.serviceWorker.ready.then((r) => r.scope));
      expect(scope).toBe(`${server.url}/`);
    });
  });
});

describeBrowser("Settings → Notifications", () => {
  const pool = serverPool(FAST);
  afterAll(() => pool.closeAll());

  test("“Enable on this device” registers it; a notify event reaches it with icon and name, plain-text body and the event's link", async () => {
    const server = await pool.withOwner();
    await withPage(browser, "enable-push", async (page, context) => {
      const sub = await pushCapable(context, server);
      await signIn(page, server);
      await page.goto(server.url + "/settings/notifications");
      await page.locator("#no-devices", { hasText: "No device gets notifications yet." }).waitFor();
      const enable = page.locator("[data-testid=enable-push]");
      await enable.waitFor({ state: "visible" });
      const nameField = page.locator("input[name=deviceName]");
      await page.waitForFunction(
        () => (document.querySelector("input[name=deviceName]") as HTMLInputElement | null)?.value !== "",
        null,
        { timeout: STEP_TIMEOUT },
      );
      const prefilled = await nameField.inputValue();
      expect(prefilled).toMatch(/^\S.* · \S+$/); // such as "Linux · Chrome"

      await nameField.fill("Work laptop");
      await enable.click();
      const item = deviceItem(page, "Work laptop");
      await item.waitFor({ timeout: STEP_TIMEOUT });
      expect(await item.getAttribute("data-endpoint")).toBe(sub.endpoint);
      expect(await item.textContent()).toContain("Nothing delivered yet");
      expect(await item.textContent()).toContain("notifies about all projects");
      expect(await item.locator("[data-testid=last-error]").count()).toBe(0);
      // After the reload the page knows this browser is the one enabled.
      await page
        .locator(".alert.success", { hasText: "This device gets notifications." })
        .waitFor({ state: "visible" });
      expect(await enable.isVisible()).toBe(false);
      // The page subscribed with the server's VAPID public key.
      const subscribed = JSON.parse((await page.evaluate(() => localStorage.getItem("e2e.push.subscribed")))!) as {
        userVisibleOnly: boolean;
        applicationServerKey: string;
      };
      expect(subscribed.userVisibleOnly).toBe(true);
      expect(Buffer.from(subscribed.applicationServerKey, "base64").toString("base64url")).toBe(
        (await server.services.vapid()).publicKey,
      );

      const event = await ok(
        sendEvent(server, {
          project: "default",
          channel: "deploys",
          event: "Deployed v2.0",
          icon: "🚀",
          notify: true,
          parser: "markdown",
          description: "**All checks** passed in _3 min_, see [the log](https://ci.example.com/1)",
        }),
      );
      const [message] = await eventually(() => {
        const messages = push.messagesFor(sub.id);
        expect(messages.length).toBe(1);
        return messages;
      });
      expect(message!.title).toBe("🚀 Deployed v2.0");
      expect(message!.body).toBe("All checks passed in 3 min, see the log");
      expect(message!.url).toEndWith(`/p/default/events/${event.id}`);
      expect(push.rejected).toEqual([]);

      await reloadUntil(page, "the device shows “Last delivered”", async () =>
        ((await deviceItem(page, "Work laptop").textContent()) ?? "").includes("Last delivered"),
      );
      expect(await deviceItem(page, "Work laptop").textContent()).not.toContain("Nothing delivered yet");
    });
  });

  test("“Send a test notification” confirms under the device and the push service receives it", async () => {
    const server = await pool.withOwner();
    await withPage(browser, "test-notification", async (page, context) => {
      const sub = await pushCapable(context, server);
      await signIn(page, server);
      const { id, item } = await enableThisDevice(page, server, "Kitchen tablet");
      await item.locator("[data-testid=test-device]").click();
      await page
        .locator(`#device-${id}-status`, { hasText: "Test notification queued" })
        .waitFor({ timeout: STEP_TIMEOUT });
      await eventually(() => expect(titlesFor(sub)).toEqual(["🔔 Test notification"]));
      const [message] = push.messagesFor(sub.id);
      expect(message!.body).toContain("Kitchen tablet");
      expect(message!.url).toEndWith("/settings/notifications");
    });
  });

  test("a device whose push service refuses with 400 shows the last error", async () => {
    const server = await pool.withOwner();
    await withPage(browser, "push-error", async (page, context) => {
      const sub = await pushCapable(context, server);
      await signIn(page, server);
      await enableThisDevice(page, server, "Broken phone");
      push.answerNext(sub.id, { status: 400 });
      await ok(sendEvent(server, { project: "default", channel: "alerts", event: "Disk full", notify: true }));
      await reloadUntil(
        page,
        "the device shows its last error",
        async () => (await deviceItem(page, "Broken phone").locator("[data-testid=last-error]").count()) > 0,
      );
      const error = deviceItem(page, "Broken phone").locator("[data-testid=last-error]");
      expect(await error.textContent()).toContain("HTTP 400");
      expect(await deviceItem(page, "Broken phone").textContent()).toContain("Nothing delivered yet");
      expect(push.messagesFor(sub.id)).toEqual([]);
    });
  });

  test("choosing projects: a device limited to “shop” gets shop's notify events and not default's", async () => {
    const server = await pool.withOwner();
    await server.services.projects.create("shop");
    await ok(sendEvent(server, { project: "shop", channel: "orders", event: "First order" }));
    await withPage(browser, "device-filters", async (page, context) => {
      const sub = await pushCapable(context, server);
      await signIn(page, server);
      const { item } = await enableThisDevice(page, server, "Shop phone");
      await item.locator("summary", { hasText: "Choose projects and channels" }).click();
      const shop = item.locator("input[name=scope][value=shop]");
      await shop.waitFor({ state: "visible" });
      expect(await item.locator("input[name=scope][value=default]").isChecked()).toBe(false);
      expect(await item.locator("input[name=scope][value='shop/orders']").count()).toBe(1);
      await shop.check();
      await item.locator("button[type=submit]", { hasText: "Save" }).click();
      await page
        .locator("ul.devices > li.device .device-head", { hasText: "notifies about shop" })
        .waitFor({ timeout: STEP_TIMEOUT });
      expect(path(page)).toBe("/settings/notifications");
      expect(await deviceItem(page, "Shop phone").locator("input[name=scope][value=shop]").isChecked()).toBe(true);
      expect(await deviceItem(page, "Shop phone").locator("input[name=scope][value=default]").isChecked()).toBe(false);

      await ok(sendEvent(server, { project: "default", channel: "orders", event: "Default order", notify: true }));
      await ok(
        sendEvent(server, { project: "shop", channel: "orders", event: "Shop order", icon: "🛒", notify: true }),
      );
      // The shop order, sent after the other, is the marker; once the queue is empty, nothing else is coming.
      await eventually(() => expect(titlesFor(sub)).toEqual(["🛒 Shop order"]));
      await notifierIdle(server);
      expect(titlesFor(sub)).toEqual(["🛒 Shop order"]);
      expect(push.attempts.filter((a) => a.device === sub.id).length).toBe(1);
    });
  });

  test("removing a device asks first, takes it off the list, and it gets no more notifications", async () => {
    const server = await pool.withOwner();
    await withPage(browser, "remove-device", async (page, context) => {
      const sub = await pushCapable(context, server);
      await signIn(page, server);
      const { item } = await enableThisDevice(page, server, "Old phone");
      await item.locator("[data-testid=remove-device]").click();
      const dialog = page.locator("dialog.dialog[open]");
      await dialog.waitFor({ timeout: STEP_TIMEOUT });
      expect(await dialog.textContent()).toContain("Old phone");
      await dialog.locator("[data-testid=confirm]").click();
      await page
        .locator("#no-devices", { hasText: "No device gets notifications yet." })
        .waitFor({ timeout: STEP_TIMEOUT });
      expect(await deviceItem(page, "Old phone").count()).toBe(0);
      expect(path(page)).toBe("/settings/notifications");

      // The marker: another device of the same user, which does get the event.
      const owner = (await server.services.accounts.list()).find((u) => u.username === OWNER.username)!;
      const other = push.subscribe();
      await server.services.devices.register(owner, {
        endpoint: other.endpoint,
        keys: other.keys,
        deviceName: "Other phone",
      });
      await ok(sendEvent(server, { project: "default", channel: "alerts", event: "After the removal", notify: true }));
      await eventually(() => expect(titlesFor(other)).toEqual(["After the removal"]));
      await notifierIdle(server);
      expect(push.messagesFor(sub.id)).toEqual([]);
      expect(push.attempts.filter((a) => a.device === sub.id)).toEqual([]);
      await page.reload();
      expect(await deviceItem(page, "Old phone").count()).toBe(0);
    });
  });

  test("a browser without push support is told so, with the Home Screen hint for iPhone", async () => {
    const server = await pool.withOwner();
    await withPage(browser, "push-unsupported", async (page, context) => {
      await context.addInitScript(() => {
        delete (window as { PushManager?: unknown }).PushManager;
      });
      await signIn(page, server);
      await page.goto(server.url + "/settings/notifications");
      expect(await page.evaluate(() => "PushManager" in window)).toBe(false);
      const alert = page.locator(".alert", { hasText: "cannot receive push notifications" });
      await alert.waitFor({ state: "visible", timeout: STEP_TIMEOUT });
      const text = (await alert.textContent()) ?? "";
      expect(text).toContain("iPhone");
      expect(text).toContain("Add to Home Screen");
      expect(await page.locator("[data-testid=enable-push]").isVisible()).toBe(false);
    });
  });
});

describeBrowser("in-page toasts", () => {
  const pool = serverPool(FAST);
  afterAll(() => pool.closeAll());

  test("a live notify event (of this or another project) pops up a toast that leads to the event; others do not", async () => {
    const server = await pool.withOwner();
    await server.services.projects.create("shop");
    await withPage(browser, "toasts", async (page) => {
      await signIn(page, server);
      await page.goto(server.url + "/p/default");
      await page.waitForSelector(".live-status.live", { timeout: STEP_TIMEOUT });
      // Every toast ever shown (they go away by themselves after a few seconds).
      await page.evaluate(() => {
        const seen: string[] = [];
        (window as unknown as { seenToasts: string[] }).seenToasts = seen;
        new MutationObserver((records) => {
          for (const r of records) for (const n of r.addedNodes) seen.push(n.textContent ?? "");
        }).observe(document.getElementById("toasts")!, { childList: true });
      });
      const seenToasts = () => page.evaluate(() => (window as unknown as { seenToasts: string[] }).seenToasts);

      // No toast: an event without notify, a historical notify event. The marker after them
      // travels the same stream, so once its toast is there theirs would have been too.
      await ok(sendEvent(server, { project: "default", channel: "quiet", event: "Just logged" }));
      await ok(
        sendEvent(server, {
          project: "default",
          channel: "quiet",
          event: "Old news",
          notify: true,
          timestamp: Math.floor(Date.now() / 1000) - 3600,
        }),
      );
      await ok(sendEvent(server, { project: "default", channel: "quiet", event: "Marker", notify: true }));
      await page.locator("#toasts .toast", { hasText: "Marker" }).waitFor({ timeout: STEP_TIMEOUT });
      expect(await seenToasts()).toEqual(["Marker · #quiet"]);

      const here = await ok(
        sendEvent(server, {
          project: "default",
          channel: "payments",
          event: "Payment received",
          icon: "💰",
          notify: true,
        }),
      );
      await page.locator("#toasts .toast a", { hasText: "Payment received" }).waitFor({ timeout: STEP_TIMEOUT });
      const elsewhere = await ok(
        sendEvent(server, { project: "shop", channel: "orders", event: "Order in the shop", notify: true }),
      );
      await page.locator("#toasts .toast a", { hasText: "Order in the shop" }).waitFor({ timeout: STEP_TIMEOUT });
      expect(await page.locator("#toasts .toast a", { hasText: "Order in the shop" }).getAttribute("href")).toBe(
        `/p/shop/events/${elsewhere.id}`,
      );
      expect(await seenToasts()).toEqual([
        "Marker · #quiet",
        "💰 Payment received · #payments",
        "Order in the shop · #orders",
      ]);

      await page.locator("#toasts .toast a", { hasText: "Payment received" }).click();
      await page.waitForURL((url) => url.pathname === `/p/default/events/${here.id}`, { timeout: STEP_TIMEOUT });
      await page.getByText("Payment received").first().waitFor();
    });
  });
});

describeBrowser("Settings → Integrations", () => {
  const pool = serverPool(FAST);
  afterAll(() => pool.closeAll());

  type Hit = { method: string; path: string; headers: Record<string, string>; body: string };

  /** A local HTTP endpoint standing in for a webhook receiver and Discord: records every request. */
  function startReceiver() {
    const hits: Hit[] = [];
    const server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      async fetch(request) {
        hits.push({
          method: request.method,
          path: new URL(request.url).pathname,
          headers: Object.fromEntries(request.headers),
          body: await request.text(),
        });
        return new Response(null, { status: 204 });
      },
    });
    return { url: `http://127.0.0.1:${server.port}`, port: server.port, hits, stop: () => server.stop(true) };
  }

  test("webhook with a signing secret shown once, test and events signed; Discord URL masked; bad input refused; disable, enable, delete", async () => {
    const server = await pool.withOwner();
    const receiver = startReceiver();
    const DISCORD_PATH = "/api/webhooks/123/SECRETTOKENabc";
    const at = (p: string) => receiver.hits.filter((h) => h.path === p);
    const titlesAt = (p: string) => at(p).map((h) => JSON.parse(h.body) as any);
    try {
      await withPage(browser, "integrations", async (page) => {
        await signIn(page, server);
        await page.goto(server.url + "/settings/integrations");
        await page.getByRole("heading", { name: "Integrations of default" }).waitFor();
        const form = page.locator("#integration-create form");

        // A signed webhook: the secret is on screen once.
        expect(await form.locator("select[name=kind]").inputValue()).toBe("webhook");
        expect(await form.locator("select[name=kind] option:checked").textContent()).toBe("Webhook (signed JSON)");
        await form.locator("input[name=name]").fill("Build bot");
        await form.locator("input[name='webhook.url']").fill(`${receiver.url}/hook`);
        await form.locator("button[type=submit]").click();
        const secretField = page.locator("[data-testid=webhook-secret]");
        await secretField.waitFor({ timeout: STEP_TIMEOUT });
        const secret = await secretField.inputValue();
        expect(secret).toMatch(/^whsec_\w{20,}$/);
        expect(await page.locator("#integration-create .alert.success").textContent()).toContain("Build bot");

        await page.reload();
        const hook = page.locator("li[id^=integration-]", { hasText: "Build bot" });
        await hook.waitFor();
        expect(await page.content()).not.toContain(secret);
        expect(await page.locator("[data-testid=webhook-secret]").count()).toBe(0);
        expect(await hook.textContent()).toContain("Webhook (signed JSON)");
        expect(await hook.textContent()).toContain(`${receiver.url}/hook`);
        expect(await hook.textContent()).toContain("secret stored");

        const signed = (h: Hit) =>
          h.headers["x-signalboard-signature"] ===
          `sha256=${createHmac("sha256", secret).update(h.body).digest("hex")}`;

        // "Send test": a signed JSON POST of type "test".
        await hook.locator("[data-testid=test-integration]").click();
        await hook.locator("[role=status]", { hasText: "Test queued" }).waitFor({ timeout: STEP_TIMEOUT });
        await eventually(() => expect(at("/hook").length).toBe(1));
        const testHit = at("/hook")[0]!;
        expect(testHit.method).toBe("POST");
        expect(testHit.headers["content-type"]).toContain("application/json");
        expect(JSON.parse(testHit.body).type).toBe("test");
        expect(signed(testHit)).toBe(true);

        // A notify event of the project reaches it too, signed.
        const event = await ok(
          sendEvent(server, {
            project: "default",
            channel: "builds",
            event: "Build 42 passed",
            icon: "✅",
            notify: true,
          }),
        );
        await eventually(() => expect(at("/hook").length).toBe(2));
        const eventHit = at("/hook")[1]!;
        const payload = JSON.parse(eventHit.body);
        expect(payload.type).toBe("event.notify");
        expect(payload.title).toBe("✅ Build 42 passed");
        expect(payload.url).toEndWith(`/p/default/events/${event.id}`);
        expect(payload.event.id).toBe(event.id);
        expect(signed(eventHit)).toBe(true);

        // Discord: its URL is a secret, so the list shows it masked.
        await form.locator("select[name=kind]").selectOption("discord");
        await form.locator("fieldset[data-kind=discord]").waitFor();
        await form.locator("input[name=name]").fill("Ops channel");
        await form.locator("input[name='discord.webhook_url']").fill(`${receiver.url}${DISCORD_PATH}`);
        await form.locator("button[type=submit]").click();
        const discord = page.locator("li[id^=integration-]", { hasText: "Ops channel" });
        await discord.waitFor({ timeout: STEP_TIMEOUT });
        expect(await discord.textContent()).toContain("Discord");
        expect(await discord.locator("[data-testid=integration-destination]").textContent()).toBe(
          `${receiver.url}/…Nabc`,
        );
        expect(await page.content()).not.toContain("SECRETTOKEN");
        expect(await page.locator("[data-testid=webhook-secret]").count()).toBe(0);

        // Bad input: refused, with the URL it expects; nothing added.
        await form.locator("select[name=kind]").selectOption("discord");
        await form.locator("input[name=name]").fill("Not discord");
        await form.locator("input[name='discord.webhook_url']").fill("https://example.com/x");
        const [refused] = await Promise.all([
          page.waitForResponse(
            (r) => new URL(r.url()).pathname === "/settings/integrations" && r.request().method() === "POST",
            { timeout: STEP_TIMEOUT },
          ),
          form.locator("button[type=submit]").click(),
        ]);
        expect(refused.status()).toBe(422);
        const problem = page.locator("#integration-create .alert[role=alert]");
        await problem.waitFor({ timeout: STEP_TIMEOUT });
        expect(await problem.textContent()).toContain("https://discord.com/api/webhooks/ID/TOKEN");
        expect(await form.locator("select[name=kind]").inputValue()).toBe("discord");
        expect(await form.locator("input[name='discord.webhook_url']").inputValue()).toBe("https://example.com/x");
        expect(await page.locator("li[id^=integration-]", { hasText: "Not discord" }).count()).toBe(0);
        expect(await page.locator("li[id^=integration-]").count()).toBe(2);

        // Both get the project's notify events.
        await ok(sendEvent(server, { project: "default", channel: "builds", event: "Both hear this", notify: true }));
        await eventually(() => {
          expect(titlesAt("/hook").map((p) => p.title)).toContain("Both hear this");
          expect(titlesAt(DISCORD_PATH).map((p) => p.embeds?.[0]?.title)).toContain("Both hear this");
        });

        // Disable the webhook: it gets nothing, Discord still does.
        await hook.locator("[data-testid=toggle-integration]", { hasText: "Disable" }).click();
        await hook.locator(".badge", { hasText: "disabled" }).waitFor({ timeout: STEP_TIMEOUT });
        expect(await hook.locator("[data-testid=toggle-integration]").textContent()).toBe("Enable");
        expect(await hook.locator("[data-testid=test-integration]").isDisabled()).toBe(true);
        const hookCount = at("/hook").length;
        await ok(sendEvent(server, { project: "default", channel: "builds", event: "While disabled", notify: true }));
        await eventually(() =>
          expect(titlesAt(DISCORD_PATH).map((p) => p.embeds?.[0]?.title)).toContain("While disabled"),
        );
        await notifierIdle(server);
        expect(at("/hook").length).toBe(hookCount);

        // Enable it again: it gets the next one.
        await hook.locator("[data-testid=toggle-integration]", { hasText: "Enable" }).click();
        await hook
          .locator("[data-testid=toggle-integration]", { hasText: "Disable" })
          .waitFor({ timeout: STEP_TIMEOUT });
        expect(await hook.locator(".badge", { hasText: "disabled" }).count()).toBe(0);
        await ok(sendEvent(server, { project: "default", channel: "builds", event: "Enabled again", notify: true }));
        await eventually(() => expect(titlesAt("/hook").map((p) => p.title)).toContain("Enabled again"));

        // Delete Discord: asks first, then it is gone and gets nothing more.
        await discord.locator("[data-testid=delete-integration]").click();
        const dialog = page.locator("dialog.dialog[open]");
        await dialog.waitFor({ timeout: STEP_TIMEOUT });
        expect(await dialog.textContent()).toContain("Ops channel");
        await dialog.locator("[data-testid=confirm]").click();
        await discord.waitFor({ state: "detached", timeout: STEP_TIMEOUT });
        await hook.waitFor();
        expect(await page.locator("li[id^=integration-]").count()).toBe(1);
        const discordCount = at(DISCORD_PATH).length;
        await ok(sendEvent(server, { project: "default", channel: "builds", event: "After the delete", notify: true }));
        await eventually(() => expect(titlesAt("/hook").map((p) => p.title)).toContain("After the delete"));
        await notifierIdle(server);
        expect(at(DISCORD_PATH).length).toBe(discordCount);
      });
    } finally {
      receiver.stop();
    }
  });
});

describeBrowser("Settings → Integrations: the new kinds, routing, templates and digests", () => {
  const pool = serverPool(FAST);
  afterAll(() => pool.closeAll());

  test("a Telegram bot limited to the alerts channel with its own template: a preview of hostile text, a template error shown on save, a notice delivered; a digest added", async () => {
    const fakes = await startFakeServices();
    const BOT = "123456789:AAH-dashboard_bot_token_0000";
    fakes.telegram.tokens.add(BOT);
    fakes.telegram.chats.add("-100777");
    const server = await pool.withOwner();
    try {
      await withPage(browser, "integrations-kinds", async (page) => {
        const problems = watchProblems(page);
        await signIn(page, server);
        await page.goto(server.url + "/settings/integrations");
        const form = page.locator("#integration-create form");
        await form.locator("select[name=kind]").selectOption("telegram");
        const fields = form.locator("fieldset[data-kind=telegram]");
        await fields.waitFor();
        expect(await form.locator("fieldset[data-kind=webhook]").isVisible()).toBe(false);
        await form.locator("input[name=name]").fill("Ops bot");
        await fields.locator("input[name='telegram.bot_token']").fill(BOT);
        await fields.locator("input[name='telegram.chat_id']").fill("-100777");
        await fields.locator("input[name='telegram.api_url']").fill(fakes.url);
        await form.locator("summary", { hasText: "Routing and template" }).click();
        await form.locator("input[name=channels]").fill("alerts");
        await form.locator("select[name=min_priority]").selectOption("2");

        // A template error is shown when saving, and nothing is added.
        await form.locator("textarea[name=template_body]").fill("*{{evnet}}*");
        await form.locator("button[type=submit]").click();
        const refused = page.locator("#integration-create .alert[role=alert]");
        await refused.waitFor({ timeout: STEP_TIMEOUT });
        expect(await refused.textContent()).toContain("template.body: {{evnet}} is not a variable");
        expect(await page.locator("li[id^=integration-]").count()).toBe(0);

        // The preview renders the template over a sample event whose text tries every markup: escaped.
        const again = page.locator("#integration-create form");
        await again.locator("summary", { hasText: "Routing and template" }).click();
        await again.locator("textarea[name=template_body]").fill("*{{event}}* on #{{channel}}\n{{description}}");
        await again.locator("[data-testid=preview-template]").click();
        const preview = again.locator("[data-testid=template-preview]");
        await preview.waitFor({ timeout: STEP_TIMEOUT });
        const shown = await preview.textContent();
        expect(shown).toContain("Telegram");
        expect(shown).toContain("&lt;b&gt;"); // the sample's <b> is text in the HTML sent
        expect(shown).toContain("<i>Payment failed"); // the template's own emphasis

        await again.locator("input[name='telegram.bot_token']").fill(BOT);
        await again.locator("button[type=submit]").click();
        const bot = page.locator("li[id^=integration-]", { hasText: "Ops bot" });
        await bot.waitFor({ timeout: STEP_TIMEOUT });
        expect(await bot.locator("[data-testid=integration-routing]").textContent()).toContain(
          "#alerts · priority 2+ · own template",
        );
        expect(await page.content()).not.toContain(BOT);

        await ok(sendEvent(server, { project: "default", channel: "deploys", event: "Not for the bot", notify: true }));
        await ok(
          sendEvent(server, { project: "default", channel: "alerts", event: "Disk <full>", notify: true, priority: 5 }),
        );
        await eventually(() =>
          expect(fakes.telegram.messages.map((m) => m.text)).toEqual([
            expect.stringContaining("Disk <full> on #alerts"),
          ]),
        );
        await notifierIdle(server);
        expect(fakes.telegram.messages).toHaveLength(1);

        // Routing changed from the list: every channel but alerts.
        await bot.locator("summary", { hasText: "Routing and template" }).click();
        await bot.locator("input[name=channels]").fill("");
        await bot.locator("input[name=exclude_channels]").fill("alerts");
        await bot.locator("[data-testid=edit-integration] button[type=submit]").click();
        await page
          .locator("li[id^=integration-] [data-testid=integration-routing]", { hasText: "not #alerts" })
          .waitFor({ timeout: STEP_TIMEOUT });

        // A digest, weekly, to the bot and an address.
        await page.locator("#digests summary", { hasText: "Add a digest" }).click();
        const digest = page.locator("#digests form");
        await digest.locator("select[name=frequency]").selectOption("weekly");
        await digest.locator("select[name=weekday]").selectOption("1");
        await digest.locator("select[name=hour]").selectOption("9");
        await digest.locator("input[name=time_zone]").fill("Europe/Paris");
        await digest.locator("label", { hasText: "Ops bot" }).locator("input").check();
        await digest.locator("input[name=emails]").fill("team@example.com");
        await digest.locator("button[type=submit]").click();
        const item = page.locator("#digests li[id^=digest-]");
        await item.waitFor({ timeout: STEP_TIMEOUT });
        expect(await item.textContent()).toContain("weekly on Monday at 09:00 Europe/Paris");
        expect(await item.textContent()).toContain("Ops bot, team@example.com");
        await item.locator("[data-testid=send-digest]").click();
        await eventually(() =>
          expect(fakes.telegram.messages.some((m) => m.text.includes("weekly digest"))).toBe(true),
        );
        expect(problems).toEqual([]);
      });
    } finally {
      fakes.stop();
    }
  });
});
