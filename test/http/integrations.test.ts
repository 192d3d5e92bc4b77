// Integrations end to end, through /v1/integrations: every kind made over the API, an event posted
// over HTTP, and what reaches a real SMTP server (parsed as a mail client would) and the
// protocol-faithful fakes of Telegram, Gotify, Pushover and Matrix (test/fake-services.ts), with
// hostile event text in every target; routing by channel, tags and priority; templates (checked
// when saved); priority in each receiver's terms; write-only secrets; retries that repeat nothing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { call, eventually, found, notifierIdle, post, signedIn, startTestApp, type TestApp } from "../helpers.ts";
import { type FakeServices, startFakeServices } from "../fake-services.ts";
import { type PushService, startPushService } from "../push-service.ts";
import { type Receiver, startReceiver } from "../receiver.ts";
import { type SmtpSink, startSmtpSink } from "../smtp-sink.ts";
import { escapeHtml } from "../../src/domain/safe-html.ts";

const BOT = "123456789:AAH-test_token_for_the_fake_bot_0123";
const CHAT = "-1001234567890";
const GOTIFY = "AppToken.Gotify_1";
const PO_APP = "azGDORePK8gMaC0QOYAMyEEuzJnyUi";
const PO_USER = "uQiRzpo4DXghDmr9QzzfQu27cmVRsG";
const MX_TOKEN = "syt_c2lnbmFsYm9hcmQ_secret_token";
const ROOM = "!ops:matrix.example.org";

/** An event whose every field tries markup of every kind. */
const HOSTILE = {
  event: `Deploy <b>"v2"</b> & *bold* _it_ [x](javascript:alert(1)) {{url}} \\ \`code\``,
  description: "<script>alert(1)</script> **not bold** <img src=x onerror=alert(1)> &amp; done",
  tags: { plan: "<i>pro</i>", env: "prod" },
};

let server: TestApp;
let smtp: SmtpSink;
let fakes: FakeServices;
let hook: Receiver;
let push: PushService;

beforeAll(async () => {
  smtp = await startSmtpSink({ user: "mailer", password: "p@ss word" });
  fakes = await startFakeServices();
  hook = await startReceiver();
  push = await startPushService();
  fakes.telegram.tokens.add(BOT);
  fakes.telegram.chats.add(CHAT);
  fakes.gotify.tokens.add(GOTIFY);
  fakes.pushover.apps.add(PO_APP);
  fakes.pushover.users.add(PO_USER);
  fakes.joinMatrix(MX_TOKEN, "@signalboard:matrix.example.org", ROOM);
  server = await startTestApp({
    "notify-retry-base": "100ms",
    "base-url": "https://sb.example.com",
    "smtp-url": smtp.url,
    "smtp-from": "Signalboard <alerts@sb.example.com>",
    "outbound-allow": "127.0.0.1", // the SMTP sink, the fakes and the receivers
  });
});
afterAll(async () => {
  await server.close();
  await smtp.stop();
  fakes.stop();
  hook.stop();
  push.stop();
});

const add = (body: Record<string, unknown>) => call(server, { method: "POST", path: "/v1/integrations", body });

async function project(name: string): Promise<string> {
  await server.services.projects.create(name);
  return name;
}

describe("the API", () => {
  test("adds each kind, answers with its secrets masked, lists and changes it; a webhook gets a signing secret once", async () => {
    const p = await project("api");
    const kinds: [string, Record<string, unknown>, string[]][] = [
      ["email", { to: ["ops@example.com"] }, []],
      ["telegram", { bot_token: BOT, chat_id: CHAT, api_url: fakes.url }, [BOT]],
      ["gotify", { url: fakes.url, token: GOTIFY }, [GOTIFY]],
      ["pushover", { user_key: PO_USER, app_token: PO_APP, api_url: fakes.url }, [PO_USER, PO_APP]],
      ["matrix", { homeserver: fakes.url, room_id: ROOM, access_token: MX_TOKEN }, [MX_TOKEN]],
      ["webhook", { url: `${hook.url}/api` }, []],
      ["ntfy", { url: hook.url, topic: "alerts", token: "tk_ntfy_secret_value" }, ["tk_ntfy_secret_value"]],
      ["discord", { webhook_url: `${hook.url}/api/webhooks/1/DISCORDSECRET` }, ["DISCORDSECRET"]],
      ["slack", { webhook_url: `${hook.url}/services/T0/B0/SLACKSECRET` }, ["SLACKSECRET"]],
    ];
    for (const [kind, config, secrets] of kinds) {
      const res = await add({ project: p, kind, name: `my ${kind}`, config, enabled: false });
      expect({ kind, status: res.status }).toEqual({ kind, status: 200 });
      expect(res.json.integration).toMatchObject({
        project: p,
        kind,
        name: `my ${kind}`,
        enabled: false,
        filter: null,
        template: null,
      });
      for (const secret of secrets) expect(res.text).not.toContain(secret);
      if (kind === "webhook") expect(res.json.secret).toMatch(/^whsec_/);
      else expect(res.json.secret).toBeNull();
    }
    const listed = await call(server, { path: `/v1/integrations?project=${p}` });
    expect(listed.json.integrations.map((i: { kind: string }) => i.kind)).toEqual(kinds.map(([k]) => k));
    for (const [, , secrets] of kinds) for (const secret of secrets) expect(listed.text).not.toContain(secret);
    const telegram = listed.json.integrations[1];
    expect(telegram.config).toEqual({ bot_token: `…${BOT.slice(-4)}`, chat_id: CHAT, api_url: fakes.url });

    // A change that leaves the secret out, or sends it back masked, keeps it; the kind cannot change.
    const changed = await call(server, {
      method: "PATCH",
      path: `/v1/integrations/${telegram.id}`,
      body: {
        name: "renamed",
        config: { ...telegram.config, chat_id: "@opschannel" },
        filter: { channels: ["alerts"] },
        template: { title: "{{event}}" },
      },
    });
    expect(changed.status).toBe(200);
    expect(changed.json.integration).toMatchObject({
      name: "renamed",
      config: { chat_id: "@opschannel", bot_token: `…${BOT.slice(-4)}` },
      filter: { channels: ["alerts"] },
      template: { title: "{{event}}" },
    });
    const stored = await server.store.notifications.integration(telegram.id);
    expect(stored!.secrets).toEqual({ bot_token: BOT });
    const cleared = await call(server, {
      method: "PATCH",
      path: `/v1/integrations/${telegram.id}`,
      body: { filter: null, template: null, config: { api_url: null } },
    });
    expect(cleared.json.integration).toMatchObject({ filter: null, template: null });
    expect(cleared.json.integration.config.api_url).toBeUndefined();
    const kind = await call(server, {
      method: "PATCH",
      path: `/v1/integrations/${telegram.id}`,
      body: { kind: "slack" },
    });
    expect(kind.status).toBe(400);
    expect(kind.json.validation.body[0].path).toBe("kind");

    const gone = await call(server, { method: "DELETE", path: `/v1/integrations/${telegram.id}` });
    expect(gone.json).toEqual({ success: true, statusCode: 200 });
    expect((await call(server, { method: "DELETE", path: `/v1/integrations/${telegram.id}` })).status).toBe(404);
    expect((await call(server, { method: "POST", path: `/v1/integrations/${telegram.id}/test` })).status).toBe(404);
    expect((await call(server, { path: "/v1/integrations?project=nope" })).status).toBe(404);
  });

  test("a bad config, filter or template is a 400 naming the field", async () => {
    const p = await project("bad");
    const cases: [Record<string, unknown>, string][] = [
      [{ kind: "telegram", config: { bot_token: BOT } }, "config.chat_id"],
      [{ kind: "telegram", config: { bot_token: "nope", chat_id: CHAT } }, "config.bot_token"],
      [{ kind: "telegram", config: { bot_token: BOT, chat_id: "not a chat" } }, "config.chat_id"],
      [{ kind: "telegram", config: { bot_token: BOT, chat_id: CHAT, api_url: "ftp://x" } }, "config.api_url"],
      [{ kind: "email", config: { to: ["not an address"] } }, "config.to.0"],
      [{ kind: "email", config: { to: [] } }, "config.to"],
      [{ kind: "gotify", config: { url: fakes.url } }, "config.token"],
      [{ kind: "pushover", config: { user_key: "short", app_token: PO_APP } }, "config.user_key"],
      [
        { kind: "matrix", config: { homeserver: fakes.url, room_id: "#alias:example.org", access_token: MX_TOKEN } },
        "config.room_id",
      ],
      [{ kind: "webhook", config: { url: `${hook.url}/x`, extra: 1 } }, "config"],
      [{ kind: "slack", config: { webhook_url: "https://example.com/nope" } }, "config.webhook_url"],
      [{ kind: "pigeon", config: {} }, "kind"],
      [{ kind: "webhook", config: { url: `${hook.url}/x` }, filter: { min_priority: 9 } }, "filter.min_priority"],
      [
        { kind: "webhook", config: { url: `${hook.url}/x` }, filter: { channels: ["Not A Channel"] } },
        "filter.channels.0",
      ],
      [{ kind: "webhook", config: { url: `${hook.url}/x` }, template: { body: "{{#event}}" } }, "template.body"],
      [
        { kind: "webhook", config: { url: `${hook.url}/x` }, template: { body: '{"text": {{event}}}' } },
        "template.body",
      ],
      [
        { kind: "telegram", config: { bot_token: BOT, chat_id: CHAT }, template: { title: "{{evnet}}" } },
        "template.title",
      ],
      [
        { kind: "telegram", config: { bot_token: BOT, chat_id: CHAT }, template: { body: "{{> partial}}" } },
        "template.body",
      ],
    ];
    for (const [body, path] of cases) {
      const res = await add({ project: p, name: "x", ...body });
      expect({ body, status: res.status, path: res.json.validation?.body?.[0]?.path }).toEqual({
        body,
        status: 400,
        path,
      });
      expect(res.json.message).toStartWith(path);
    }
    expect((await call(server, { path: `/v1/integrations?project=${p}` })).json.integrations).toEqual([]);
  });
});

describe("each kind, with hostile event text", () => {
  let p: string;
  beforeAll(async () => {
    p = await project("kinds");
    const body = "*{{event}}* (#{{channel}}, plan {{tags.plan}})\n\n{{description}}";
    for (const [kind, config] of [
      ["email", { to: ["ops@example.com", "me@example.com"] }],
      ["telegram", { bot_token: BOT, chat_id: CHAT, api_url: fakes.url }],
      ["gotify", { url: `${fakes.url}/`, token: GOTIFY }],
      ["pushover", { user_key: PO_USER, app_token: PO_APP, api_url: fakes.url }],
      ["matrix", { homeserver: fakes.url, room_id: ROOM, access_token: MX_TOKEN }],
      ["webhook", { url: `${hook.url}/kinds` }],
    ] as const) {
      const template =
        kind === "email"
          ? {
              title: "[{{project}}] {{event}}",
              body: "<h1>{{event}}</h1><p>{{description}}</p><p>plan: {{tags.plan}}</p>",
            }
          : kind === "webhook"
            ? { body: '{"text": "{{event}}", "plan": "{{tags.plan}}", "priority": {{priority}}}' }
            : { title: "{{icon}} {{event}}", body };
      const res = await add({ project: p, kind, name: kind, config, template });
      expect({ kind, status: res.status, message: res.json.message }).toEqual({
        kind,
        status: 200,
        message: undefined,
      });
    }
    const res = await post(server, "/v1/log", {
      project: p,
      channel: "deploys",
      icon: "🚀",
      notify: true,
      priority: 5,
      ...HOSTILE,
    });
    expect(res.status).toBe(200);
    expect(res.json.priority).toBe(5);
  });

  test("e-mail: multipart through the real SMTP server, the HTML escaped and sanitised, the text as sent, the link in both", async () => {
    const mail = await found(() => smtp.mails.find((m) => m.parsed.subject?.includes("Deploy")));
    expect(mail.to).toEqual(["ops@example.com", "me@example.com"]);
    expect(mail.from).toBe("alerts@sb.example.com");
    expect(mail.parsed.subject).toBe(`[kinds] ${HOSTILE.event}`);
    const html = String(mail.parsed.html);
    expect(html).not.toContain("<script");
    expect(html).not.toContain("<img");
    expect(html).not.toContain("<b>");
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(html).toContain("<h1>");
    expect(html).toContain("https://sb.example.com/p/kinds/events/");
    expect(mail.parsed.text).toContain(HOSTILE.description);
    expect(mail.parsed.text).toContain("plan: <i>pro</i>");
    expect(mail.parsed.text).toContain("https://sb.example.com/p/kinds/events/");
    expect(mail.parsed.messageId).toMatch(/^<delivery-\d+\.[0-9a-z]+@sb\.example\.com>$/);
    expect(mail.raw).toContain("X-Priority: 1 (Highest)");
    // The subject heads the body too, as text (its markup shown, never applied).
    const subject = `[kinds] ${HOSTILE.event}`;
    expect(html.trimStart()).toStartWith(`<h1>${escapeHtml(subject)}</h1>`);
    expect(mail.parsed.text!.trimStart()).toStartWith(`${subject}\n`);
  });

  test("Telegram: HTML its parser accepts, every value shown as the text it was", async () => {
    const [message] = await eventually(() => {
      expect(fakes.telegram.messages.length).toBeGreaterThan(0);
      return fakes.telegram.messages;
    }, 5000);
    expect(fakes.telegram.refused).toEqual([]);
    expect(message!.chatId).toBe(CHAT);
    expect(message!.text).toContain(`🚀 ${HOSTILE.event}`);
    expect(message!.text).toContain(`${HOSTILE.event} (#deploys, plan <i>pro</i>)`);
    expect(message!.text).toContain(HOSTILE.description);
    expect(message!.html).toContain("<i>Deploy"); // the template's own emphasis (*…*), around the escaped name
    expect(message!.links.some((l) => l.startsWith("https://sb.example.com/p/kinds/events/"))).toBe(true);
    expect(message!.links.some((l) => l.startsWith("javascript:"))).toBe(false);
    expect(message!.silent).toBe(false);
  });

  test("Gotify: plain text, its priority 0-10, the click link", async () => {
    const [message] = await eventually(() => {
      expect(fakes.gotify.messages.length).toBe(1);
      return fakes.gotify.messages;
    }, 5000);
    expect(message!.title).toBe(`🚀 ${HOSTILE.event}`);
    expect(message!.message).toContain(`*${HOSTILE.event}* (#deploys, plan <i>pro</i>)\n\n${HOSTILE.description}`);
    expect(message!.priority).toBe(10);
    expect(message!.extras).toMatchObject({
      "client::notification": { click: { url: expect.stringContaining("/p/kinds/events/") } },
    });
  });

  test("Pushover: a form post, plain text, emergency priority with retry and expire", async () => {
    const [message] = await eventually(() => {
      expect(fakes.pushover.messages.length).toBe(1);
      return fakes.pushover.messages;
    }, 5000);
    expect(fakes.pushover.refused).toEqual([]);
    expect(message).toMatchObject({
      user: PO_USER,
      title: `🚀 ${HOSTILE.event}`,
      priority: 2,
      retry: 60,
      expire: 3600,
    });
    expect(message!.message).toContain(HOSTILE.description);
    expect(message!.url).toContain("/p/kinds/events/");
  });

  test("Matrix: an m.room.message with a sanitised formatted body and the words as its body", async () => {
    const [event] = await eventually(() => {
      expect(fakes.matrix.events.length).toBe(1);
      return fakes.matrix.events;
    }, 5000);
    expect(event!.roomId).toBe(ROOM);
    expect(event!.content.format).toBe("org.matrix.custom.html");
    const html = event!.content.formatted_body!;
    expect(html).not.toContain("<script");
    expect(html).not.toContain("<img");
    expect(html).not.toContain('href="javascript');
    expect(html).toContain("&lt;script&gt;");
    expect(html).toContain("<em>Deploy"); // the template's *…* (Markdown emphasis) around the escaped name
    expect(event!.content.body).toContain(HOSTILE.description);
    expect(event!.content.body).toContain("plan <i>pro</i>");
  });

  test("webhook: a template shapes the JSON body, each value a JSON string whatever it holds; still signed", async () => {
    const request = await found(() => hook.requests.find((r) => r.path === "/kinds"));
    expect(JSON.parse(request.body)).toEqual({ text: HOSTILE.event, plan: "<i>pro</i>", priority: 5 });
    const integration = (await server.services.integrations.list(p)).find((i) => i.kind === "webhook")!;
    const secret = (await server.store.notifications.integration(integration.id))!.secrets.secret!;
    expect(request.headers["x-signalboard-signature"]).toBe(
      `sha256=${createHmac("sha256", secret).update(request.body).digest("hex")}`,
    );
  });
});

describe("e-mail", () => {
  test("the default wording: the event's name heads the HTML and the text, not only the subject", async () => {
    const p = await project("mail-heading");
    await add({ project: p, kind: "email", name: "mail", config: { to: ["heading@example.com"] } });
    const sent = await post(server, "/v1/log", {
      project: p,
      channel: "backups",
      event: "Backup failed",
      icon: "💾",
      description: "The disk of nas is full.",
      notify: true,
    });
    expect(sent.status).toBe(200);
    const mail = await found(() => smtp.mails.find((m) => m.to.includes("heading@example.com")));
    expect(mail.parsed.subject).toBe("💾 Backup failed");
    // A forward or a preview shows the body without the subject: the body says what happened first.
    const html = String(mail.parsed.html).trimStart();
    expect(html).toStartWith("<h1>💾 Backup failed</h1>");
    expect(html).toContain("The disk of nas is full.");
    const text = mail.parsed.text!.trimStart();
    expect(text).toStartWith("💾 Backup failed\n\nThe disk of nas is full.");
    expect(text).toContain("https://sb.example.com/p/mail-heading/events/");
  });
});

describe("routing", () => {
  test("channels, all but some channels, tags and a least priority; alert notices to the chosen integrations only", async () => {
    const p = await project("routed");
    const targets = {
      all: {},
      alertsOnly: { channels: ["alerts"] },
      notAlerts: { exclude_channels: ["alerts"] },
      prod: { tags: { env: "prod" } },
      urgent: { min_priority: 4 },
    };
    for (const [name, filter] of Object.entries(targets))
      expect(
        (await add({ project: p, kind: "webhook", name, config: { url: `${hook.url}/route/${name}` }, filter })).status,
      ).toBe(200);
    const events = [
      { channel: "alerts", event: "CPU high", tags: { alert: "cpu", state: "firing", kind: "threshold" } },
      { channel: "deploys", event: "Deployed", tags: { env: "prod" } },
      { channel: "deploys", event: "Staged", tags: { env: "staging" }, priority: 4 },
      { channel: "signups", event: "Quiet one", priority: 1 },
    ];
    for (const e of events)
      expect((await post(server, "/v1/log", { project: p, notify: true, ...e })).status).toBe(200);
    await notifierIdle(server);
    await eventually(() => expect(hook.requests.filter((r) => r.path === "/route/all")).toHaveLength(4));
    const got = (name: string) =>
      hook.requests
        .filter((r) => r.path === `/route/${name}`)
        .map((r) => JSON.parse(r.body).event.event)
        .sort();
    expect(got("all")).toEqual(["CPU high", "Deployed", "Quiet one", "Staged"]);
    expect(got("alertsOnly")).toEqual(["CPU high"]);
    expect(got("notAlerts")).toEqual(["Deployed", "Quiet one", "Staged"]);
    expect(got("prod")).toEqual(["Deployed"]);
    expect(got("urgent")).toEqual(["Staged"]);
  });

  test("a device limited to tags and a least priority; Web Push's Urgency follows the priority", async () => {
    const p = await project("devices");
    const user = await server.services.accounts.createUser(
      { username: "pusher", password: "password 123456" },
      "owner",
    );
    const sub = push.subscribe();
    const device = await server.services.devices.register(user, {
      endpoint: sub.endpoint,
      keys: sub.keys,
      deviceName: "phone",
    });
    await server.services.devices.setFilters(user, device.id, [p], { tags: "env:prod", minPriority: 2 });
    for (const [event, tags, priority] of [
      ["low", { env: "prod" }, 1],
      ["staging", { env: "staging" }, 5],
      ["prod urgent", { env: "prod" }, 5],
      ["prod normal", { env: "prod" }, 3],
    ] as const) {
      await post(server, "/v1/log", { project: p, channel: "c", event, tags, priority, notify: true });
    }
    await notifierIdle(server);
    await eventually(() =>
      expect(
        push
          .messagesFor(sub.id)
          .map((m) => m.title)
          .sort(),
      ).toEqual(["prod normal", "prod urgent"]),
    );
    const urgency = push.received.filter((r) => r.device === sub.id).map((r) => [r.message.title, r.headers.urgency]);
    expect(urgency.sort()).toEqual([
      ["prod normal", "normal"],
      ["prod urgent", "high"],
    ]);
  });
});

describe("the routing form in Settings → Integrations", () => {
  test("writes a tag value with a space in double quotes, and saved unchanged keeps it", async () => {
    const owner = { username: "owner", password: "correct horse battery staple" };
    await server.services.accounts.createUser(owner, "owner");
    const agent = await signedIn(server, owner);
    const made = await call(server, {
      path: "/v1/integrations",
      body: {
        project: "default",
        kind: "webhook",
        name: "Spaced",
        config: { url: hook.url },
        filter: { tags: { plan: "pro plus", env: "prod" } },
      },
    });
    expect(made.status).toBe(200);
    const id = made.json.integration.id;
    const page = await (await agent.request("/settings/integrations?project=default")).text();
    expect(page).toContain('name="tags" value="plan:&quot;pro plus&quot; env:prod"');
    const csrf = await agent.csrf();
    const edit = (tags: string) =>
      agent.request(`/settings/integrations/${id}/edit?project=default`, {
        method: "POST",
        headers: { "X-CSRF-Token": csrf, "HX-Request": "true" },
        form: {
          name: "Spaced",
          channels: "",
          exclude_channels: "",
          tags,
          min_priority: "1",
          template_title: "",
          template_body: "",
        },
      });
    const saved = await edit('plan:"pro plus" env:prod');
    expect([saved.status, saved.headers.get("hx-redirect")]).toEqual([200, "/settings/integrations?project=default"]);
    expect(
      (await call(server, { path: "/v1/integrations?project=default" })).json.integrations.find(
        (i: { id: number }) => i.id === id,
      ).filter,
    ).toEqual({ tags: { plan: "pro plus", env: "prod" } });
    const bad = await edit("plan:pro plus");
    expect(bad.status).toBe(422);
    expect(await bad.text()).toContain("&quot;plus&quot; is not key:value");
    expect((await call(server, { method: "DELETE", path: `/v1/integrations/${id}` })).status).toBe(200);
  });
});

describe("priority", () => {
  test("events take 1-5 (3 when absent) on /v1/log and /log-event, shown in their JSON; anything else is a 400 naming it", async () => {
    const p = await project("prio");
    const a = await post(server, "/v1/log", { project: p, channel: "c", event: "default" });
    expect(a.json.priority).toBe(3);
    const b = await post(server, "/log-event", { project: p, channel: "c", title: "low", priority: 1 });
    expect(b.json.priority).toBe(1);
    for (const bad of [0, 6, 2.5, "4", true]) {
      const res = await post(server, "/v1/log", { project: p, channel: "c", event: "x", priority: bad });
      expect(res.status).toBe(400);
      expect(res.json.validation.body[0].path).toBe("priority");
    }
    const listed = await call(server, { path: `/v1/events?project=${p}` });
    expect(listed.json.events.map((e: { event: string; priority: number }) => [e.event, e.priority])).toEqual([
      ["low", 1],
      ["default", 3],
    ]);
  });

  test("each receiver gets the priority in its own terms", async () => {
    const p = await project("levels");
    await add({ project: p, kind: "gotify", name: "g", config: { url: fakes.url, token: GOTIFY } });
    await add({
      project: p,
      kind: "pushover",
      name: "p",
      config: { user_key: PO_USER, app_token: PO_APP, api_url: fakes.url },
    });
    await add({ project: p, kind: "ntfy", name: "n", config: { url: `${hook.url}/ntfy-levels`, topic: "levels" } });
    await add({
      project: p,
      kind: "telegram",
      name: "t",
      config: { bot_token: BOT, chat_id: CHAT, api_url: fakes.url },
    });
    const before = {
      gotify: fakes.gotify.messages.length,
      pushover: fakes.pushover.messages.length,
      telegram: fakes.telegram.messages.length,
    };
    for (const priority of [1, 2, 3, 4, 5])
      await post(server, "/v1/log", { project: p, channel: "c", event: `level ${priority}`, priority, notify: true });
    await notifierIdle(server, 10_000);
    const level = (title: string) => Number(/level (\d)/.exec(title)![1]);
    const gotify = fakes.gotify.messages
      .slice(before.gotify)
      .map((m) => [level(m.title), m.priority])
      .sort();
    expect(gotify).toEqual([
      [1, 1],
      [2, 3],
      [3, 5],
      [4, 8],
      [5, 10],
    ]);
    const pushover = fakes.pushover.messages
      .slice(before.pushover)
      .map((m) => [level(m.title), m.priority])
      .sort();
    expect(pushover).toEqual([
      [1, -2],
      [2, -1],
      [3, 0],
      [4, 1],
      [5, 2],
    ]);
    const ntfy = hook.requests
      .filter((r) => r.path === "/ntfy-levels")
      .map((r) => JSON.parse(r.body))
      .map((b) => [level(b.title), b.priority])
      .sort();
    expect(ntfy).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
      [4, 4],
      [5, 5],
    ]);
    const telegram = fakes.telegram.messages
      .slice(before.telegram)
      .map((m) => [level(m.text), m.silent])
      .sort();
    expect(telegram).toEqual([
      [1, true],
      [2, true],
      [3, false],
      [4, false],
      [5, false],
    ]);
  });
});

describe("at least once, never twice by choice", () => {
  test("a Matrix send retried after a 502 uses the same transaction id; the homeserver keeps one event", async () => {
    const p = await project("matrix-retry");
    await add({
      project: p,
      kind: "matrix",
      name: "m",
      config: { homeserver: fakes.url, room_id: ROOM, access_token: MX_TOKEN },
    });
    const before = fakes.matrix.events.length;
    fakes.failures.matrix.push({ status: 502 });
    await post(server, "/v1/log", { project: p, channel: "c", event: "retried once", notify: true });
    await eventually(() => expect(fakes.matrix.events.length).toBe(before + 1));
    const event = fakes.matrix.events.at(-1)!;
    const integration = (await server.services.integrations.list(p))[0]!;
    const [delivery] = await server.store.notifications.deliveriesFor("integration", [integration.id]);
    expect(event.txnId).toStartWith(`sb-${delivery!.id}-`);
    // Sent again with the same transaction (as after a crash between sending and recording): still one event.
    const again = await fetch(
      `${fakes.url}/_matrix/client/v3/rooms/${encodeURIComponent(ROOM)}/send/m.room.message/${event.txnId}`,
      {
        method: "PUT",
        headers: { Authorization: `Bearer ${MX_TOKEN}`, "Content-Type": "application/json" },
        body: JSON.stringify(event.content),
      },
    );
    expect(again.status).toBe(200);
    expect(fakes.matrix.events.length).toBe(before + 1);
  });

  test("an e-mail refused with 451 is retried with the same Message-ID; a 550 is given up and shown", async () => {
    const p = await project("mail-retry");
    const { json } = await add({ project: p, kind: "email", name: "mail", config: { to: ["retry@example.com"] } });
    smtp.refusals.push({ code: 451, message: "try again later" });
    await post(server, "/v1/log", { project: p, channel: "c", event: "Mail retried", notify: true });
    const mail = await found(() => smtp.mails.find((m) => m.parsed.subject === "Mail retried"));
    const [delivery] = await server.store.notifications.deliveriesFor("integration", [json.integration.id]);
    // The mail is in before its attempt is recorded (the server hears the 250 after the sink has it).
    await eventually(async () =>
      expect((await server.store.notifications.attemptsOf(delivery!.id)).map((a) => [a.ok, a.status])).toEqual([
        [false, 451],
        [true, 250],
      ]),
    );
    expect(mail.parsed.messageId).toBe(`<delivery-${delivery!.id}.${delivery!.createdAt.toString(36)}@sb.example.com>`);
    smtp.refusals.push({ code: 550, message: "no such user" });
    await post(server, "/v1/log", { project: p, channel: "c", event: "Mail refused", notify: true });
    await eventually(async () =>
      expect((await call(server, { path: `/v1/integrations?project=${p}` })).json.integrations[0].last_error).toBe(
        "SMTP 550 (EMESSAGE)",
      ),
    );
  });

  test("a test over the API reaches the receiver; its outcome shows on the integration", async () => {
    const p = await project("tested");
    const { json } = await add({
      project: p,
      kind: "telegram",
      name: "t",
      config: { bot_token: BOT, chat_id: CHAT, api_url: fakes.url },
    });
    const res = await call(server, { method: "POST", path: `/v1/integrations/${json.integration.id}/test` });
    expect(res.json).toEqual({ success: true, statusCode: 200, queued: true });
    await eventually(() =>
      expect(fakes.telegram.messages.some((m) => m.text.includes("Signalboard can reach t."))).toBe(true),
    );
    await eventually(async () =>
      expect(
        (await call(server, { path: `/v1/integrations?project=${p}` })).json.integrations[0].last_success_at,
      ).toBeGreaterThan(0),
    );
    await call(server, { method: "PATCH", path: `/v1/integrations/${json.integration.id}`, body: { enabled: false } });
    expect((await call(server, { method: "POST", path: `/v1/integrations/${json.integration.id}/test` })).status).toBe(
      403,
    );
  });

  test("a change of where an integration sends needs its secrets again: a stored secret never goes to a server the caller picks", async () => {
    const p = await project("repointed");
    // The caller's own server, where a moved integration would send its secret.
    const seen: string[] = [];
    const trap = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: async (r) => {
        seen.push(`${r.url} ${r.headers.get("authorization")} ${r.headers.get("x-gotify-key")} ${await r.text()}`);
        return Response.json({ ok: true });
      },
    });
    const elsewhere = `http://127.0.0.1:${trap.port}`;
    try {
      const made = {
        telegram: { bot_token: BOT, chat_id: CHAT, api_url: fakes.url },
        gotify: { url: fakes.url, token: GOTIFY },
        pushover: { user_key: PO_USER, app_token: PO_APP, api_url: fakes.url },
        matrix: { homeserver: fakes.url, room_id: ROOM, access_token: MX_TOKEN },
        ntfy: { url: hook.url, topic: "alerts", token: "tk_ntfy_secret_value" },
      };
      const moves: Record<keyof typeof made, [string, string[]]> = {
        telegram: ["api_url", ["bot_token"]],
        gotify: ["url", ["token"]],
        pushover: ["api_url", ["user_key", "app_token"]],
        matrix: ["homeserver", ["access_token"]],
        ntfy: ["url", ["token"]],
      };
      for (const [kind, config] of Object.entries(made) as [keyof typeof made, Record<string, string>][]) {
        const { json } = await add({ project: p, kind, name: kind, config });
        const [where, secrets] = moves[kind];
        // Moved alone, or with the secrets sent back masked: refused, naming each secret; nothing changes.
        for (const body of [
          { config: { [where]: elsewhere } },
          { config: { ...json.integration.config, [where]: elsewhere } },
        ]) {
          const moved = await call(server, { method: "PATCH", path: `/v1/integrations/${json.integration.id}`, body });
          expect({ kind, status: moved.status }).toEqual({ kind, status: 400 });
          expect(moved.json.validation.body.map((i: { path: string }) => i.path)).toEqual(
            secrets.map((s) => `config.${s}`),
          );
          expect(moved.json.message).toContain(where);
        }
        expect((await server.store.notifications.integration(json.integration.id))!.config[where]).toBe(
          (config as Record<string, string>)[where],
        );
        await call(server, { method: "POST", path: `/v1/integrations/${json.integration.id}/test` });
      }
      await notifierIdle(server);
      expect(seen).toEqual([]);

      // With the secrets sent again, it moves (the caller knows them); back to the kind's own service needs nothing.
      const { json } = await add({ project: p, kind: "telegram", name: "moved", config: made.telegram });
      const moved = await call(server, {
        method: "PATCH",
        path: `/v1/integrations/${json.integration.id}`,
        body: { config: { api_url: elsewhere, bot_token: BOT } },
      });
      expect(moved.status).toBe(200);
      expect(moved.json.integration.config.api_url).toBe(elsewhere);
      const home = await call(server, {
        method: "PATCH",
        path: `/v1/integrations/${json.integration.id}`,
        body: { config: { api_url: null } },
      });
      expect(home.status).toBe(200);
      expect((await server.store.notifications.integration(json.integration.id))!.secrets).toEqual({ bot_token: BOT });
    } finally {
      trap.stop(true);
    }
  });

  test("an error never shows a secret, even one in the receiver's URL", async () => {
    const p = await project("leaky");
    const { json } = await add({
      project: p,
      kind: "telegram",
      name: "t",
      config: { bot_token: BOT, chat_id: CHAT, api_url: "http://127.0.0.1:9" },
    });
    await call(server, { method: "POST", path: `/v1/integrations/${json.integration.id}/test` });
    const shown = await eventually(async () => {
      const i = (await call(server, { path: `/v1/integrations?project=${p}` })).json.integrations[0];
      expect(i.last_error).toBeTruthy();
      return i.last_error as string;
    }, 5000);
    expect(shown).not.toContain(BOT);
  });
});
