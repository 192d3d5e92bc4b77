// Notifications end to end: an event posted over HTTP, queued in its transaction, sent by the
// notifier to a local push service that verifies VAPID and decrypts the payload, or to local
// HTTP receivers standing in for webhooks, ntfy, Discord and Slack.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac, randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import {
  Agent,
  eventually,
  found,
  notifierIdle,
  peek,
  post,
  signedIn,
  startTestApp,
  type TestApp,
} from "../helpers.ts";
import { type PushService, startPushService } from "../push-service.ts";
import { type Receiver, startReceiver } from "../receiver.ts";
import type { User } from "../../src/model/user.ts";

let push: PushService;
beforeAll(async () => {
  push = await startPushService();
});
afterAll(() => push.stop());

async function withUser(server: TestApp): Promise<User> {
  return await server.services.accounts.createUser(
    { username: `u${Math.random().toString(36).slice(2, 8)}`, password: "password 123456" },
    "owner",
  );
}

async function device(server: TestApp, user: User, name = "Test phone") {
  const sub = push.subscribe();
  const row = await server.services.devices.register(user, {
    endpoint: sub.endpoint,
    keys: sub.keys,
    deviceName: name,
  });
  return { ...sub, row };
}

/** The push service and the receivers listen on 127.0.0.1: allowed, as an operator would allow a service on the same box. */
const LOCAL = { "outbound-allow": "127.0.0.1" };
const FAST = { "notify-retry-base": "100ms", "base-url": "https://sb.example.com", ...LOCAL };

describe("Web Push", () => {
  let server: TestApp;
  let user: User;
  beforeAll(async () => {
    server = await startTestApp(FAST);
    user = await withUser(server);
  });
  afterAll(() => server.close());

  test("a notify event reaches the device, encrypted, signed, and decrypts to its title, body and link", async () => {
    const phone = await device(server, user);
    const res = await post(server, "/v1/log", {
      project: "default",
      channel: "payments",
      event: "New subscription",
      icon: "💰",
      notify: true,
      parser: "markdown",
      description: "**Pro plan**, [acme](https://acme.test)\n\n- 12 seats",
    });
    expect(res.status).toBe(200);
    const [message] = await eventually(() => {
      const m = push.messagesFor(phone.id);
      expect(m.length).toBe(1);
      return m;
    });
    expect(message!.title).toBe("💰 New subscription");
    expect(message!.body).toBe("Pro plan, acme\n12 seats");
    expect(message!.url).toBe(`https://sb.example.com/p/default/events/${res.json.id}`);
    // The tag lets the device replace a repeat of the same event's notification (delivery is at least once).
    expect(message!.tag).toBe(`event-${res.json.id}`);
    const sent = push.received.find((r) => r.device === phone.id)!;
    expect(sent.jwt.sub).toBe("https://sb.example.com");
    expect(sent.headers["content-encoding"]).toBe("aes128gcm");
    expect(push.rejected).toEqual([]);
    await eventually(async () =>
      expect(
        (await server.services.devices.list(user)).find((d) => d.id === phone.row.id)!.lastSuccessAt,
      ).toBeGreaterThan(0),
    );
  });

  test("historical events and events without notify are never sent", async () => {
    const phone = await device(server, user);
    await post(server, "/v1/log", { project: "default", channel: "c", event: "Quiet", notify: false });
    await post(server, "/v1/log", {
      project: "default",
      channel: "c",
      event: "Old news",
      notify: true,
      timestamp: Date.now() / 1000 - 3600,
    });
    await post(server, "/v1/log", { project: "default", channel: "c", event: "Marker", notify: true });
    await eventually(() => expect(push.messagesFor(phone.id).map((m) => m.title)).toEqual(["Marker"]));
    await notifierIdle(server); // all that was queued has been sent: the other two would be here by now
    expect(push.messagesFor(phone.id).map((m) => m.title)).toEqual(["Marker"]);
  });

  test("a device only hears about the projects and channels it chose", async () => {
    await server.services.projects.create("shop");
    const picky = await device(server, user, "Picky");
    await server.services.devices.setFilters(user, picky.row.id, ["shop/orders"]);
    for (const [project, channel, event] of [
      ["default", "orders", "wrong project"],
      ["shop", "refunds", "wrong channel"],
      ["shop", "orders", "right one"],
    ]) {
      await post(server, "/v1/log", { project, channel, event, notify: true });
    }
    await eventually(() => expect(push.messagesFor(picky.id).map((m) => m.title)).toEqual(["right one"]));
    await notifierIdle(server);
    expect(push.messagesFor(picky.id).map((m) => m.title)).toEqual(["right one"]);
  });

  test("410 Gone removes the subscription", async () => {
    const phone = await device(server, user, "Old phone");
    push.unsubscribe(phone.id);
    await post(server, "/v1/log", { project: "default", channel: "c", event: "Anyone there?", notify: true });
    await eventually(async () =>
      expect((await server.services.devices.list(user)).some((d) => d.id === phone.row.id)).toBe(false),
    );
  });

  test("5xx is retried with backoff until it goes through; every attempt is recorded", async () => {
    const phone = await device(server, user, "Flaky");
    await server.services.devices.setFilters(user, phone.row.id, ["default/flaky"]);
    push.answerNext(phone.id, { status: 500 }, { status: 503 });
    await post(server, "/v1/log", { project: "default", channel: "flaky", event: "Eventually", notify: true });
    await eventually(() => expect(push.messagesFor(phone.id).map((m) => m.title)).toEqual(["Eventually"]));
    // The push service has the message a moment before the server has recorded its answer.
    await eventually(async () =>
      expect((await server.store.notifications.deliveriesFor("push", [phone.row.id]))[0]!.status).toBe("sent"),
    );
    const [delivery] = await server.store.notifications.deliveriesFor("push", [phone.row.id]);
    const attempts = await server.store.notifications.attemptsOf(delivery!.id);
    expect(attempts.map((a) => [a.ok, a.status])).toEqual([
      [false, 500],
      [false, 503],
      [true, 201],
    ]);
    // Backing off: 100 ms then 300 ms (±20%) at least. Retries run on the notifier's next tick after
    // they are due, so the gaps themselves need not grow.
    expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(80);
    expect(attempts[2]!.at - attempts[1]!.at).toBeGreaterThanOrEqual(240);
  });

  test("429 waits as long as Retry-After says", async () => {
    const phone = await device(server, user, "Rate limited");
    await server.services.devices.setFilters(user, phone.row.id, ["default/limited"]);
    push.answerNext(phone.id, { status: 429, headers: { "Retry-After": "1" } });
    const started = Date.now();
    await post(server, "/v1/log", { project: "default", channel: "limited", event: "Patience", notify: true });
    await eventually(() => expect(push.messagesFor(phone.id).length).toBe(1));
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  });

  test("a refusal that retrying cannot fix is given up at once, and the device shows the error", async () => {
    const phone = await device(server, user, "Misconfigured");
    await server.services.devices.setFilters(user, phone.row.id, ["default/refused"]);
    push.answerNext(phone.id, { status: 400 });
    await post(server, "/v1/log", { project: "default", channel: "refused", event: "Nope", notify: true });
    await eventually(async () =>
      expect((await server.services.devices.get(user, phone.row.id)).lastError).toContain("HTTP 400"),
    );
    const [delivery] = await server.store.notifications.deliveriesFor("push", [phone.row.id]);
    expect(delivery!.status).toBe("failed");
    expect(delivery!.attempts).toBe(1);
  });

  test("send a test notification", async () => {
    const phone = await device(server, user, "Tablet");
    await server.services.devices.sendTest(user, phone.row.id, server.services.config.baseUrl);
    await eventually(() => expect(push.messagesFor(phone.id).map((m) => m.title)).toEqual(["🔔 Test notification"]));
  });
});

describe("restarts", () => {
  test("notifications queued before a restart are delivered after it", async () => {
    const server = await startTestApp({ "notify-retry-base": "30s", ...LOCAL });
    const dataDir = server.dataDir;
    const user = await withUser(server);
    const phone = await device(server, user, "Patient");
    push.answerNext(phone.id, { status: 503 }); // the first try fails; the retry is 30 s away
    await post(server, "/v1/log", { project: "default", channel: "c", event: "Survives restarts", notify: true });
    await eventually(() => expect(push.attempts.filter((a) => a.device === phone.id).length).toBe(1));
    await server.stop();

    // The same data directory, a restart: the retry is not lost, it is still due in 30 s...
    const pending = (await startTestApp({ "notify-retry-base": "30s", ...LOCAL }, dataDir)) as TestApp;
    const queued = await pending.store.notifications.deliveriesFor("push", [phone.row.id]);
    expect(queued.map((d) => d.status)).toEqual(["pending"]);
    await pending.stop();

    // ...and once due (here: moved to now), the new process sends it.
    const after = await startTestApp(LOCAL, dataDir);
    await peek(after, "UPDATE deliveries SET next_attempt_at = 0 WHERE status = 'pending'");
    try {
      await eventually(() => expect(push.messagesFor(phone.id).map((m) => m.title)).toEqual(["Survives restarts"]));
    } finally {
      await after.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("integrations", () => {
  let server: TestApp;
  let hook: Receiver;
  beforeAll(async () => {
    server = await startTestApp(FAST);
    hook = await startReceiver();
  });
  afterAll(async () => {
    hook.stop();
    await server.close();
  });

  test("a generic webhook gets the event as JSON, signed with HMAC-SHA256 over the body", async () => {
    await server.services.projects.create("hooked");
    const { secret, integration } = await server.services.integrations.create({
      project: "hooked",
      kind: "webhook",
      name: "My backend",
      config: { url: `${hook.url}/hook` },
    });
    expect(secret).toMatch(/^whsec_/);
    const res = await post(server, "/v1/log", {
      project: "hooked",
      channel: "alerts",
      event: "Disk full",
      icon: "💽",
      notify: true,
      tags: { host: "nas" },
    });
    const request = await found(() => hook.requests.find((r) => r.path === "/hook"));
    const signature = createHmac("sha256", secret!).update(request.body).digest("hex");
    expect(request.headers["x-signalboard-signature"]).toBe(`sha256=${signature}`);
    const body = JSON.parse(request.body);
    expect(body).toMatchObject({
      type: "event.notify",
      title: "💽 Disk full",
      url: `https://sb.example.com/p/hooked/events/${res.json.id}`,
      event: { id: res.json.id, project: "hooked", channel: "alerts", event: "Disk full", tags: { host: "nas" } },
    });
    expect((await server.services.integrations.list("hooked"))[0]).toMatchObject({
      id: integration.id,
      hasSecret: true,
    });
    expect(JSON.stringify(await server.services.integrations.list("hooked"))).not.toContain(secret!);
  });

  test("ntfy, Discord and Slack get their own formats", async () => {
    await server.services.projects.create("phones");
    await server.services.integrations.create({
      project: "phones",
      kind: "ntfy",
      name: "ntfy",
      config: { url: `${hook.url}/`, topic: "signalboard-alerts", token: "tk_secret" },
    });
    await server.services.integrations.create({
      project: "phones",
      kind: "discord",
      name: "Discord",
      config: { webhook_url: `${hook.url}/api/webhooks/123/abcDEFsecretpart99` },
    });
    await server.services.integrations.create({
      project: "phones",
      kind: "slack",
      name: "Slack",
      config: { webhook_url: `${hook.url}/services/T0/B0/xyzSECRETtoken123` },
    });
    await post(server, "/v1/log", {
      project: "phones",
      channel: "deploys",
      event: "Deployed <v2> & more",
      icon: "🚀",
      description: "All green",
      notify: true,
    });
    const ntfy = await found(() => hook.requests.find((r) => r.path === "/" && r.body.includes("signalboard-alerts")));
    expect(JSON.parse(ntfy.body)).toMatchObject({
      topic: "signalboard-alerts",
      title: "🚀 Deployed <v2> & more",
      message: "All green",
    });
    expect(ntfy.headers.authorization).toBe("Bearer tk_secret");
    const discord = await found(() => hook.requests.find((r) => r.path === "/api/webhooks/123/abcDEFsecretpart99"));
    expect(JSON.parse(discord.body).embeds[0]).toMatchObject({
      title: "🚀 Deployed <v2> & more",
      description: "All green",
      footer: { text: "#deploys · phones" },
    });
    const slack = await found(() => hook.requests.find((r) => r.path === "/services/T0/B0/xyzSECRETtoken123"));
    expect(JSON.parse(slack.body).text).toContain("*🚀 Deployed &lt;v2&gt; &amp; more*");
    // Discord's and Slack's URLs are secrets: shown masked once stored.
    const listed = JSON.stringify(await server.services.integrations.list("phones"));
    expect(listed).not.toContain("secretpart");
    expect(listed).not.toContain("SECRET");
    expect(listed).not.toContain("tk_secret");
  });

  test("a failing receiver is retried, and the integration shows the outcome", async () => {
    await server.services.projects.create("retried");
    const { integration } = await server.services.integrations.create({
      project: "retried",
      kind: "webhook",
      name: "Flaky",
      config: { url: `${hook.url}/flaky` },
    });
    hook.replies.push(502);
    await post(server, "/v1/log", { project: "retried", channel: "c", event: "Try again", notify: true });
    await eventually(() => expect(hook.requests.filter((r) => r.path === "/flaky").length).toBe(2));
    await eventually(async () =>
      expect((await server.services.integrations.list("retried"))[0]!.lastSuccessAt).toBeGreaterThan(0),
    );
    const [delivery] = await server.store.notifications.deliveriesFor("integration", [integration.id]);
    const attempts = await server.store.notifications.attemptsOf(delivery!.id);
    expect(attempts.map((a) => a.status)).toEqual([502, 200]);
    // The same delivery id on every retry, for receivers that de-duplicate.
    const ids = hook.requests
      .filter((r) => r.path === "/flaky")
      .map((r) => [r.headers["x-signalboard-delivery"], String(JSON.parse(r.body).delivery_id)]);
    expect(ids).toEqual([
      [String(delivery!.id), String(delivery!.id)],
      [String(delivery!.id), String(delivery!.id)],
    ]);
    // What the receiver answered is not kept or shown: a URL aimed at an internal service would leak it.
    expect(attempts[0]!.error).toBe("HTTP 502 Bad Gateway");
  });

  test("a disabled integration gets nothing; a test can be sent on demand", async () => {
    await server.services.projects.create("quiet");
    const { integration } = await server.services.integrations.create({
      project: "quiet",
      kind: "webhook",
      name: "Off",
      config: { url: `${hook.url}/off` },
    });
    await server.services.integrations.create({
      project: "quiet",
      kind: "webhook",
      name: "Marker",
      config: { url: `${hook.url}/quiet-marker` },
    });
    await server.services.integrations.setEnabled(integration.id, false);
    await post(server, "/v1/log", { project: "quiet", channel: "c", event: "Shh", notify: true });
    // The marker: the project's enabled integration gets the event; once the queue is empty, nothing more is coming.
    await found(() => hook.requests.find((r) => r.path === "/quiet-marker"));
    await notifierIdle(server);
    expect(hook.requests.filter((r) => r.path === "/off")).toHaveLength(0);
    await server.services.integrations.setEnabled(integration.id, true);
    await server.services.integrations.sendTest(integration.id, server.services.config.baseUrl);
    const test = await found(() => hook.requests.find((r) => r.path === "/off"));
    expect(JSON.parse(test.body).type).toBe("test");
  });

  test("bad integration settings are refused with field messages", async () => {
    await expect(
      server.services.integrations.create({
        project: "default",
        kind: "discord",
        name: "x",
        config: { webhook_url: "https://example.com/hook" },
      }),
    ).rejects.toThrow(/Discord webhook URL/);
    await expect(
      server.services.integrations.create({
        project: "default",
        kind: "ntfy",
        name: "x",
        config: { url: "https://ntfy.sh", topic: "bad topic!" },
      }),
    ).rejects.toThrow(/topic/);
    await expect(
      server.services.integrations.create({ project: "default", kind: "carrier-pigeon", name: "x", config: {} }),
    ).rejects.toThrow(/kind/);
    await expect(
      server.services.integrations.create({
        project: "default",
        kind: "webhook",
        name: "x",
        config: { url: "ftp://x" },
      }),
    ).rejects.toThrow(/http/);
  });
});

describe("device registration over HTTP", () => {
  const OWNER = { username: "owner", password: "password 123456" };
  const OTHER = { username: "other", password: "password 123456" };
  let server: TestApp;
  beforeAll(async () => {
    server = await startTestApp(LOCAL);
    await server.services.accounts.createUser(OWNER, "owner");
    await server.services.accounts.createUser(OTHER, "member");
  });
  afterAll(() => server.close());

  const json = (agent: Agent, path: string, body: unknown, csrf?: string) =>
    agent.request(path, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...(csrf ? { "X-CSRF-Token": csrf } : {}) },
      body: JSON.stringify(body),
    });

  test("registers a device for the signed-in user; needs the CSRF token; refuses bad subscriptions with 400", async () => {
    const agent = await signedIn(server, OWNER);
    const csrf = await agent.csrf();
    const sub = push.subscribe();
    expect((await json(agent, "/settings/notifications/devices", { ...sub, deviceName: "Phone" })).status).toBe(403);
    const ok = await json(
      agent,
      "/settings/notifications/devices",
      { endpoint: sub.endpoint, keys: sub.keys, deviceName: "Phone" },
      csrf,
    );
    expect(ok.status).toBe(200);
    for (const bad of [
      { endpoint: "not a url", keys: sub.keys, deviceName: "x" },
      { endpoint: sub.endpoint, keys: { p256dh: "short", auth: sub.keys.auth }, deviceName: "x" },
      { endpoint: sub.endpoint, deviceName: "x" },
      { endpoint: sub.endpoint, keys: sub.keys, deviceName: "" },
      {
        endpoint: { length: { toString: {} } },
        keys: { p256dh: { length: { toString: {} } }, auth: sub.keys.auth },
        deviceName: { length: { valueOf: {} } },
      },
    ]) {
      const res = await json(agent, "/settings/notifications/devices", bad, csrf);
      expect(res.status).toBe(400);
      expect((await res.json()).validation.body.length).toBeGreaterThan(0);
    }
    const page = await (await agent.request("/settings/notifications")).text();
    expect(page).toContain("Phone");
    // A device seen again keeps its subscription fresh.
    const refreshed = await json(agent, "/settings/notifications/devices/refresh", { endpoint: sub.endpoint }, csrf);
    expect(await refreshed.json()).toEqual({ known: true });
  });

  test("keys web-push cannot encrypt with are refused at registration, naming the field", async () => {
    const agent = await signedIn(server, OWNER);
    const csrf = await agent.csrf();
    const sub = push.subscribe();
    const offCurve = randomBytes(65);
    offCurve[0] = 0x04; // the right shape, but random x and y are not a point on P-256
    const compressed = Buffer.from(sub.keys.p256dh, "base64url").subarray(0, 33);
    compressed[0] = 0x02;
    const cases: [{ p256dh: string; auth: string }, string][] = [
      [
        { p256dh: sub.keys.p256dh, auth: randomBytes(12).toString("base64url") },
        "keys.auth: must be 16 bytes (base64url), got 12",
      ],
      [
        { p256dh: sub.keys.p256dh, auth: randomBytes(32).toString("base64url") },
        "keys.auth: must be 16 bytes (base64url), got 32",
      ],
      [
        { p256dh: offCurve.toString("base64url"), auth: sub.keys.auth },
        "keys.p256dh: is not a point on the P-256 curve",
      ],
      [
        { p256dh: randomBytes(65).fill(0x07, 0, 1).toString("base64url"), auth: sub.keys.auth },
        "keys.p256dh: must be an uncompressed P-256 public key (its first byte 0x04), got one starting 0x07",
      ],
      [
        { p256dh: compressed.toString("base64url"), auth: sub.keys.auth },
        "keys.p256dh: must be an uncompressed P-256 public key of 65 bytes (base64url), got 33",
      ],
      [{ p256dh: sub.keys.p256dh, auth: "not base64url!" }, "keys.auth: must be base64url"],
    ];
    for (const [keys, message] of cases) {
      const res = await json(
        agent,
        "/settings/notifications/devices",
        { endpoint: sub.endpoint, keys, deviceName: "Broken" },
        csrf,
      );
      expect(res.status).toBe(400);
      const body = await res.json();
      expect(body.message).toStartWith(message);
      expect(body.validation.body).toHaveLength(1);
      const user = (await server.services.accounts.list()).find((u) => u.username === "owner")!;
      await expect(
        server.services.devices.register(user, { endpoint: sub.endpoint, keys, deviceName: "Broken" }),
      ).rejects.toThrow(message);
    }
    expect((await server.store.notifications.allSubscriptions()).some((s) => s.endpoint === sub.endpoint)).toBe(false);
    // The browser's own keys, from the same subscription, are fine.
    expect(
      (
        await json(
          agent,
          "/settings/notifications/devices",
          { endpoint: sub.endpoint, keys: sub.keys, deviceName: "Fine" },
          csrf,
        )
      ).status,
    ).toBe(200);
  });

  test("a device's filters from its form: projects, tags and a least priority; a pair without its colon is refused", async () => {
    const agent = await signedIn(server, OWNER);
    const csrf = await agent.csrf();
    const sub = push.subscribe();
    const { id } = await (
      await json(
        agent,
        "/settings/notifications/devices",
        { endpoint: sub.endpoint, keys: sub.keys, deviceName: "Routed" },
        csrf,
      )
    ).json();
    const save = (form: Record<string, string>) =>
      agent.request(`/settings/notifications/devices/${id}/filters`, {
        method: "POST",
        headers: { "X-CSRF-Token": csrf, "HX-Request": "true" },
        form,
      });
    expect((await save({ scope: "default", tags: "env:prod plan:pro", min_priority: "4" })).status).toBe(200);
    expect(await server.store.notifications.subscription(id)).toMatchObject({
      tags: JSON.stringify({ env: "prod", plan: "pro" }),
      minPriority: 4,
    });
    const page = await (await agent.request("/settings/notifications")).text();
    expect(page).toContain("notifies about default, with env:prod plan:pro, priority 4+");
    const bad = await save({ tags: "oops" });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toContain("is not key:value");
    expect((await server.store.notifications.subscription(id))!.minPriority).toBe(4);
  });

  test("one user cannot see, test or remove another user's device", async () => {
    const owner = await signedIn(server, OWNER);
    const sub = push.subscribe();
    const { id } = await (
      await json(
        owner,
        "/settings/notifications/devices",
        { endpoint: sub.endpoint, keys: sub.keys, deviceName: "Owner's laptop" },
        await owner.csrf(),
      )
    ).json();
    const other = await signedIn(server, OTHER);
    const csrf = await other.csrf();
    expect(await (await other.request("/settings/notifications")).text()).not.toContain("Owner's laptop");
    expect(
      (
        await other.request(`/settings/notifications/devices/${id}/remove`, {
          method: "POST",
          headers: { "X-CSRF-Token": csrf },
        })
      ).status,
    ).toBe(404);
    expect(
      (
        await other.request(`/settings/notifications/devices/${id}/test`, {
          method: "POST",
          headers: { "X-CSRF-Token": csrf },
        })
      ).status,
    ).toBe(404);
    expect(await server.store.notifications.subscription(id)).not.toBeNull();
  });

  test("secrets never reach the logs", async () => {
    const logs: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    const { setLogLevel } = await import("../../src/logger.ts");
    setLogLevel("debug");
    process.stderr.write = ((chunk: string) => {
      logs.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    try {
      const hook = await startReceiver();
      const { secret } = await server.services.integrations.create({
        project: "default",
        kind: "webhook",
        name: "logged?",
        config: { url: `${hook.url}/never-logged-path` },
      });
      await server.services.integrations.create({
        project: "default",
        kind: "discord",
        name: "d",
        config: { webhook_url: `${hook.url}/api/webhooks/1/DISCORDSECRETTOKEN` },
      });
      // A bot whose API server refuses it: the token is in the URL it posts to.
      await server.services.integrations.create({
        project: "default",
        kind: "telegram",
        name: "t",
        config: { bot_token: "123456789:AAH-TELEGRAMSECRETTOKEN-abcdef", chat_id: "1", api_url: `${hook.url}/tg` },
      });
      hook.replies.push(400, 400, 400);
      await post(server, "/v1/log", { project: "default", channel: "c", event: "e", notify: true });
      await eventually(() => expect(hook.requests.length).toBeGreaterThanOrEqual(3));
      // The marker: each refusal ends in a warning, the last the notifier writes about that delivery.
      await eventually(() => expect(logs.join("").match(/"msg":"notification delivery failed"/g)).toHaveLength(3));
      hook.stop();
      const all = logs.join("");
      expect(all).not.toContain(secret!);
      expect(all).not.toContain("DISCORDSECRETTOKEN");
      expect(all).not.toContain("TELEGRAMSECRETTOKEN");
      expect(all).not.toContain(server.token);
    } finally {
      process.stderr.write = write;
      setLogLevel("silent");
    }
  });
});
