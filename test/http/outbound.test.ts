// Where the server may send on someone's behalf (the outbound guard): a push endpoint or an
// integration's URL that names this machine, a link-local address (cloud metadata) or, for push
// endpoints, a private network, in any spelling, is refused when saved, by the API, the dashboard,
// device registration and the CLI, with a 400 naming the field and the setting that allows it; and
// when sent, a name that now resolves somewhere refused fails its attempt with "destination
// refused" without a connection. Names resolve through a resolver the test controls.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Lookup } from "../../src/domain/outbound.ts";
import type { User } from "../../src/model/user.ts";
import { PROGRAM, run } from "../e2e/process.ts";
import { call, eventually, post, signedIn, startTestApp, storeArgs, type TestApp } from "../helpers.ts";
import { type PushService, startPushService } from "../push-service.ts";
import { type SmtpSink, startSmtpSink } from "../smtp-sink.ts";

/** What a name resolves to, call after call (the last answer repeats); an unknown name does not resolve. */
function resolver() {
  const answers = new Map<string, string[][]>();
  const asked: string[] = [];
  const lookup: Lookup = async (host) => {
    asked.push(host);
    const queue = answers.get(host);
    if (!queue) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return queue.length > 1 ? queue.shift()! : queue[0]!;
  };
  return { answers, asked, lookup };
}

/** An HTTP server that records what reaches it, on `hostname` (any of 127.0.0.0/8) and `port` (0: any). */
function listener(hostname: string, port = 0) {
  const requests: { path: string; host: string | null }[] = [];
  const server = Bun.serve({
    hostname,
    port,
    fetch(request) {
      requests.push({ path: new URL(request.url).pathname, host: request.headers.get("host") });
      return new Response("ok");
    },
  });
  return { port: server.port!, requests, stop: () => server.stop(true) };
}

const dns = resolver();
let server: TestApp;
let push: PushService;
let trap: ReturnType<typeof listener>;
let smtp: SmtpSink;

beforeAll(async () => {
  push = await startPushService();
  trap = listener("127.0.0.1");
  smtp = await startSmtpSink();
  // The SMTP server's name resolves to this machine, which is not allowed: no e-mail may go there.
  dns.answers.set("mail.example.test", [["127.0.0.1"]]);
  server = await startTestApp(
    {
      "notify-retry-base": "100ms",
      // 127.0.0.2 stands in for a public address that the rules let through (it is the operator's to allow).
      "outbound-allow": "127.0.0.2/32",
      "smtp-url": `smtp://mail.example.test:${smtp.port}`,
    },
    undefined,
    { lookup: dns.lookup },
  );
});
afterAll(async () => {
  await server.close();
  await smtp.stop();
  push.stop();
  trap.stop();
});

const add = (body: Record<string, unknown>, token = server.token) =>
  call(server, { method: "POST", path: "/v1/integrations", body, token });

/** Every spelling of this machine, its link-local (metadata) addresses, and the like. */
const REFUSED_URLS = [
  "http://169.254.169.254/latest/meta-data/",
  "http://[::ffff:a9fe:a9fe]/",
  "http://[::ffff:169.254.169.254]/latest/",
  "http://0xa9fea9fe/",
  "http://2852039166/",
  "http://0251.0376.0251.0376/",
  "http://169.254.43518/",
  "http://localhost:22/",
  "http://LOCALHOST./",
  "http://ntfy.localhost/",
  "http://metadata.google.internal/computeMetadata/v1/",
  "http://127.0.0.1:22/",
  "http://127.1/",
  "http://0x7f.1/",
  "http://0177.0.0.1/",
  "http://2130706433/",
  "http://0/",
  "http://0.0.0.0:8080/",
  "http://[::]/",
  "http://[::1]/",
  "http://[0:0:0:0:0:0:0:1]/",
  "http://[fe80::1]/",
  "http://[::ffff:127.0.0.1]/",
  "http://[::127.0.0.1]/",
  "http://[64:ff9b::a9fe:a9fe]/",
  "http://224.0.0.1/",
  "http://255.255.255.255/",
];

describe("integrations, when saved", () => {
  test("a webhook to this machine or a link-local address is a 400 naming config.url and the setting, in every spelling", async () => {
    for (const url of REFUSED_URLS) {
      const res = await add({ project: "default", kind: "webhook", name: "probe", config: { url } });
      expect({ url, status: res.status }).toEqual({ url, status: 400 });
      expect(res.json.validation.body).toHaveLength(1);
      expect(res.json.validation.body[0]).toMatchObject({ path: "config.url", type: "destination_refused" });
      expect(res.json.message).toStartWith("config.url: ");
      expect(res.json.message).toContain("SIGNALBOARD_OUTBOUND_ALLOW");
    }
    expect(await server.services.integrations.list("default")).toEqual([]);
  });

  test("every kind's destination is checked, by the name the API gives its key; a secret URL is not repeated", async () => {
    const meta = "http://169.254.169.254";
    const cases: [string, Record<string, unknown>, string][] = [
      ["ntfy", { url: meta, topic: "alerts" }, "config.url"],
      ["gotify", { url: meta, token: "AppToken.1" }, "config.url"],
      ["matrix", { homeserver: meta, room_id: "!r:example.org", access_token: "syt_token" }, "config.homeserver"],
      [
        "pushover",
        { user_key: "uQiRzpo4DXghDmr9QzzfQu27cmVRsG", app_token: "azGDORePK8gMaC0QOYAMyEEuzJnyUi", api_url: meta },
        "config.api_url",
      ],
      [
        "telegram",
        { bot_token: "123456789:AAH-test_token_for_the_fake_bot_0123", chat_id: "-100123", api_url: `${meta}/` },
        "config.api_url",
      ],
      ["discord", { webhook_url: `${meta}/api/webhooks/1/DISCORDSECRET` }, "config.webhook_url"],
      ["slack", { webhook_url: "http://[::1]/services/T0/B0/SLACKSECRET" }, "config.webhook_url"],
    ];
    for (const [kind, config, path] of cases) {
      const res = await add({ project: "default", kind, name: `probe ${kind}`, config });
      expect({ kind, status: res.status }).toEqual({ kind, status: 400 });
      expect(res.json.validation.body.map((i: { path: string }) => i.path)).toEqual([path]);
      expect(res.json.message).toContain("SIGNALBOARD_OUTBOUND_ALLOW");
      expect(res.text).not.toContain("SECRET");
    }
  });

  test("a private network is fine for an integration (a Gotify on the LAN); a change to this machine is refused and changes nothing", async () => {
    const made = await add({
      project: "default",
      kind: "gotify",
      name: "lan gotify",
      config: { url: "http://192.168.1.20:8080", token: "AppToken.1" },
    });
    expect(made.status).toBe(200);
    const hook = await add({
      project: "default",
      kind: "webhook",
      name: "lan",
      config: { url: "http://10.0.0.1/hook" },
    });
    expect(hook.status).toBe(200);
    const id = hook.json.integration.id;
    const moved = await call(server, {
      method: "PATCH",
      path: `/v1/integrations/${id}`,
      body: { config: { url: "http://localhost:22/" } },
    });
    expect(moved.status).toBe(400);
    expect(moved.json.validation.body[0].path).toBe("config.url");
    expect((await server.services.integrations.get(id)).config.url).toBe("http://10.0.0.1/hook");
    for (const i of await server.services.integrations.list("default")) await server.services.integrations.remove(i.id);
  });

  test("a token limited to one project gets the same 400", async () => {
    await server.services.projects.create("limited");
    const token = (await server.services.tokens.create({ name: "only limited", projects: ["limited"] })).token;
    const res = await add(
      { project: "limited", kind: "webhook", name: "x", config: { url: "http://[::ffff:a9fe:a9fe]/" } },
      token,
    );
    expect(res.status).toBe(400);
    expect(res.json.validation.body[0].path).toBe("config.url");
  });

  test("a name that resolves to a refused address is refused; so is one with any refused address among its answers", async () => {
    dns.answers.set("sneaky.example.test", [["127.0.0.1"]]);
    dns.answers.set("mixed.example.test", [["93.184.215.14", "169.254.169.254"]]);
    for (const host of ["sneaky.example.test", "mixed.example.test"]) {
      const res = await add({ project: "default", kind: "webhook", name: "x", config: { url: `http://${host}/hook` } });
      expect({ host, status: res.status }).toEqual({ host, status: 400 });
      expect(res.json.message).toContain(host);
    }
    // A name that does not resolve from here (a LAN name seen from elsewhere) is checked when sent instead.
    const lan = await add({ project: "default", kind: "webhook", name: "lan", config: { url: "http://nas.lan/hook" } });
    expect(lan.status).toBe(200);
    await server.services.integrations.remove(lan.json.integration.id);
  });

  test("the dashboard's form refuses it, naming config.url and the setting", async () => {
    const owner = { username: "form-owner", password: "password 123456" };
    await server.services.accounts.createUser(owner, "owner");
    const agent = await signedIn(server, owner);
    const res = await agent.request("/settings/integrations", {
      method: "POST",
      headers: { "HX-Request": "true", "X-CSRF-Token": await agent.csrf() },
      form: { project: "default", kind: "webhook", name: "probe", "webhook.url": "http://[::ffff:a9fe:a9fe]/" },
    });
    expect(res.status).toBe(422); // the form comes back with its error, as for any other problem in it
    const text = await res.text();
    expect(text).toContain("config.url: ");
    expect(text).toContain("SIGNALBOARD_OUTBOUND_ALLOW");
    expect(await server.services.integrations.list("default")).toEqual([]);
  });

  test("signalboard integration add refuses it with exit code 2, naming config.url", async () => {
    const res = await run(PROGRAM, [
      "integration",
      "add",
      "--project",
      "default",
      "--kind",
      "ntfy",
      "--name",
      "probe",
      "--config",
      '{"url": "http://0xa9fea9fe/", "topic": "x"}',
      ...storeArgs(server),
    ]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("config.url: ");
    expect(res.stderr).toContain("SIGNALBOARD_OUTBOUND_ALLOW");
    expect(await server.services.integrations.list("default")).toEqual([]);
  });
});

describe("push devices, when registered", () => {
  let viewer: User;
  const VIEWER = { username: "viewer", password: "password 123456" };
  beforeAll(async () => {
    viewer = await server.services.accounts.createUser(VIEWER, "viewer");
  });

  test("a viewer's endpoint on this machine, a link-local or private address, or over http:, is a 400 naming endpoint", async () => {
    const agent = await signedIn(server, VIEWER);
    const csrf = await agent.csrf();
    const { keys, endpoint: local } = push.subscribe();
    for (const endpoint of [
      "http://169.254.169.254/latest/meta-data/iam",
      "http://10.0.0.1/push",
      "https://10.0.0.1/push",
      "https://192.168.1.1/push",
      "https://100.64.0.1/push",
      "https://[fd00::1]/push",
      "https://[::ffff:10.0.0.1]/push",
      `https://127.0.0.1:${trap.port}/push`,
      "https://0x7f.1/push",
      "https://localhost/push",
      local, // the test's push service: http, on this machine
      "http://push.example.com/send/abc", // a public service, but not over https:
    ]) {
      const res = await agent.request("/settings/notifications/devices", {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
        body: JSON.stringify({ endpoint, keys, deviceName: "Probe" }),
      });
      expect({ endpoint, status: res.status }).toEqual({ endpoint, status: 400 });
      const body = await res.json();
      expect(body.validation.body.map((i: { path: string }) => i.path)).toEqual(["endpoint"]);
      expect(body.message).toStartWith("endpoint: ");
      expect(body.message).toContain("SIGNALBOARD_OUTBOUND_ALLOW");
    }
    expect(await server.services.devices.list(viewer)).toEqual([]);
  });

  test("a device saved before these rules is not sent to: its test fails with destination refused, and no connection", async () => {
    const { keys } = push.subscribe();
    const saved = await server.store.notifications.saveSubscription(
      {
        userId: viewer.id,
        endpoint: `http://127.0.0.1:${trap.port}/push/old`,
        p256dh: keys.p256dh,
        auth: keys.auth,
        deviceName: "Old",
      },
      Date.now(),
    );
    const agent = await signedIn(server, VIEWER);
    const res = await agent.request(`/settings/notifications/devices/${saved.id}/test`, {
      method: "POST",
      headers: { "HX-Request": "true", "X-CSRF-Token": await agent.csrf() },
    });
    expect(res.status).toBe(200);
    const [delivery] = await eventually(async () => {
      const list = await server.store.notifications.deliveriesFor("push", [saved.id]);
      expect(list.map((d) => d.status)).toEqual(["failed"]);
      return list;
    }, 10_000);
    expect(delivery!.attempts).toBe(1); // not retried: it will not get better by trying again
    expect(delivery!.lastError).toStartWith("destination refused: ");
    expect((await server.services.devices.get(viewer, saved.id)).lastError).toStartWith("destination refused: ");
    expect(trap.requests).toEqual([]);
    await server.store.notifications.deleteSubscription(saved.id);
  });
});

describe("integrations, when sent", () => {
  async function delivered(id: number) {
    return eventually(async () => {
      const [d] = await server.store.notifications.deliveriesFor("integration", [id]);
      if (!d || d.status === "pending") throw new Error("not settled yet");
      return d;
    }, 10_000);
  }

  test("a name that resolves to a refused address when sent fails with destination refused, without a connection", async () => {
    dns.answers.set("rebound.example.test", [["127.0.0.2"], ["127.0.0.1"]]);
    await server.services.projects.create("sent");
    const made = await add({
      project: "sent",
      kind: "webhook",
      name: "rebound",
      config: { url: `http://rebound.example.test:${trap.port}/hook` },
    });
    expect(made.status).toBe(200);
    expect((await post(server, "/v1/log", { project: "sent", channel: "c", event: "E", notify: true })).status).toBe(
      200,
    );
    const d = await delivered(made.json.integration.id);
    expect(d.status).toBe("failed");
    expect(d.attempts).toBe(1);
    expect(d.lastError).toStartWith("destination refused: ");
    expect(d.lastError).toContain("127.0.0.1");
    expect(trap.requests).toEqual([]);
    await server.services.integrations.remove(made.json.integration.id);
  });

  test("DNS rebinding: the name is resolved once per send and the connection goes to the address that was checked", async () => {
    const checked = listener("127.0.0.2");
    // The same port on 127.0.0.1: where a second lookup would lead.
    const other = listener("127.0.0.1", checked.port);
    try {
      await server.services.projects.create("rebind");
      dns.answers.set("flip.example.test", [["127.0.0.2"]]);
      const made = await add({
        project: "rebind",
        kind: "webhook",
        name: "flip",
        config: { url: `http://flip.example.test:${checked.port}/hook` },
      });
      expect(made.status).toBe(200);
      // From now on: the allowed address once, then this machine.
      dns.answers.set("flip.example.test", [["127.0.0.2"], ["127.0.0.1"]]);
      const asked = dns.asked.length;
      await post(server, "/v1/log", { project: "rebind", channel: "c", event: "E", notify: true });
      const d = await delivered(made.json.integration.id);
      expect(d.status).toBe("sent");
      expect(checked.requests).toEqual([{ path: "/hook", host: `flip.example.test:${checked.port}` }]);
      expect(other.requests).toEqual([]);
      expect(dns.asked.slice(asked)).toEqual(["flip.example.test"]);
      await server.services.integrations.remove(made.json.integration.id);
    } finally {
      checked.stop();
      other.stop();
    }
  });

  test("the SMTP server goes through the same rules: a name that resolves to this machine gets no e-mail", async () => {
    await server.services.projects.create("mail");
    const made = await add({ project: "mail", kind: "email", name: "ops", config: { to: ["ops@example.com"] } });
    expect(made.status).toBe(200);
    await post(server, "/v1/log", { project: "mail", channel: "c", event: "E", notify: true });
    const d = await delivered(made.json.integration.id);
    expect(d.status).toBe("failed");
    expect(d.attempts).toBe(1);
    expect(d.lastError).toBe(
      "destination refused: mail.example.test resolves to 127.0.0.1, this machine (a loopback address); SIGNALBOARD_OUTBOUND_ALLOW=mail.example.test would allow it",
    );
    expect(smtp.mails).toEqual([]);
    await server.services.integrations.remove(made.json.integration.id);
  });

  test("a name that does not resolve when sent is retried, saying so", async () => {
    await server.services.projects.create("gone");
    const made = await add({ project: "gone", kind: "webhook", name: "nas", config: { url: "http://nas.lan/hook" } });
    await post(server, "/v1/log", { project: "gone", channel: "c", event: "E", notify: true });
    const [d] = await eventually(async () => {
      const list = await server.store.notifications.deliveriesFor("integration", [made.json.integration.id]);
      expect(list[0]?.attempts).toBeGreaterThan(0);
      return list;
    }, 10_000);
    expect(d!.lastError).toContain("nas.lan");
    expect(d!.lastError).not.toContain("destination refused");
    await server.services.integrations.remove(made.json.integration.id);
  });
});

describe("SIGNALBOARD_OUTBOUND_PRIVATE=deny", () => {
  let strict: TestApp;
  beforeAll(async () => {
    strict = await startTestApp({ "outbound-private": "deny", "outbound-allow": "192.168.1.0/24,gotify.lan" });
  });
  afterAll(() => strict.close());

  test("refuses private networks for integrations too, but what SIGNALBOARD_OUTBOUND_ALLOW lists", async () => {
    const add = (url: string) =>
      call(strict, {
        method: "POST",
        path: "/v1/integrations",
        body: { project: "default", kind: "gotify", name: url, config: { url, token: "AppToken.1" } },
      });
    for (const url of ["http://10.0.0.1", "http://[fd12::1]:8080", "http://172.16.5.4"]) {
      const res = await add(url);
      expect({ url, status: res.status }).toEqual({ url, status: 400 });
      expect(res.json.message).toContain("SIGNALBOARD_OUTBOUND_PRIVATE");
    }
    expect((await add("http://192.168.1.20:8080")).status).toBe(200);
    expect((await add("http://gotify.lan")).status).toBe(200);
  });
});
