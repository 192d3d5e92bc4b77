// Inbound webhooks: made, listed, changed and deleted over /v1/hooks (the secret never shown,
// full-access tokens limited to their projects), and deliveries to /hooks/<id> made exactly as each
// service makes them: Stripe's signature scheme (t=, v1= over "<t>.<body>"), GitHub's
// X-Hub-Signature-256, an Alertmanager version 4 body in the shape of its docs, and a generic JSON
// hook with a mapping and an HMAC header. A bad signature is a 401 that stores nothing; a delivery
// seen twice is stored once. In-process, with a clock the test holds still.
import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { TestClock } from "../clock.ts";
import { call, startTestApp, type TestApp } from "../helpers.ts";

let server: TestApp;
const NOW = Date.UTC(2026, 0, 1, 12);
const BASE = "https://sb.example.com";

beforeAll(async () => {
  server = await startTestApp({ "base-url": BASE }, undefined, { clock: new TestClock(NOW, { stopped: true }) });
  for (const name of ["shop", "other", "doomed"]) await server.services.projects.create(name);
});
afterAll(() => server.close());

const hmac = (secret: string, data: string) => createHmac("sha256", secret).update(data).digest("hex");

async function makeHook(body: Record<string, unknown>, token?: string) {
  const made = await call(server, { path: "/v1/hooks", body, ...(token && { token }) });
  expect(made.status).toBe(200);
  return made.json.hook as { id: string; url: string; channel: string };
}

/** A delivery as the service sends it: the exact bytes, and its headers. */
const deliver = (id: string, body: string, headers: Record<string, string>) =>
  call(server, {
    path: `/hooks/${id}`,
    body,
    token: null,
    headers: { "Content-Type": "application/json", ...headers },
  });

/** The channel's events; none while it does not exist (a channel is made by its first event). */
const eventsIn = async (project: string, channel: string) =>
  ((await call(server, { path: `/v1/events?project=${project}&channel=${channel}` })).json.events ?? []) as {
    event: string;
    description: string | null;
    tags: Record<string, unknown>;
    notify: boolean;
  }[];

/** Stripe's signature header, as Stripe builds it: t, then v1 = HMAC-SHA256(secret, "t.body"). */
const stripeHeader = (secret: string, body: string, t = Math.floor(NOW / 1000), extra = "") =>
  `t=${t},v1=${hmac(secret, `${t}.${body}`)}${extra}`;

/** An event as Stripe posts it: pretty-printed JSON, two spaces. */
const stripeEvent = (id: string, type: string, object: Record<string, unknown>, livemode = false) =>
  JSON.stringify(
    {
      id,
      object: "event",
      api_version: "2024-06-20",
      created: Math.floor(NOW / 1000),
      data: { object },
      livemode,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type,
    },
    null,
    2,
  );

describe("the /v1/hooks API", () => {
  test("makes, lists, changes and deletes hooks; answers carry the URL and never the secret", async () => {
    const made = await call(server, {
      path: "/v1/hooks",
      body: { project: "shop", kind: "stripe", name: "Payments", secret: "whsec_list" },
    });
    expect(made.status).toBe(200);
    const hook = made.json.hook;
    expect(hook).toEqual({
      id: expect.stringMatching(/^[A-Za-z0-9_-]{24}$/),
      project: "shop",
      kind: "stripe",
      name: "Payments",
      channel: "stripe",
      url: `${BASE}/hooks/${hook.id}`,
      has_secret: true,
      config: {},
      created_at: NOW / 1000,
    });
    expect(made.text).not.toContain("whsec_list");
    const listed = await call(server, { path: "/v1/hooks?project=shop" });
    expect(listed.json.hooks.map((h: { id: string }) => h.id)).toContain(hook.id);
    expect(listed.text).not.toContain("whsec_list");
    const changed = await call(server, {
      method: "PATCH",
      path: `/v1/hooks/${hook.id}`,
      body: { name: "Billing", channel: "billing", secret: "whsec_new" },
    });
    expect(changed.status).toBe(200);
    expect(changed.json.hook).toMatchObject({ id: hook.id, name: "Billing", channel: "billing", url: hook.url });
    expect(changed.text).not.toContain("whsec_new");
    expect((await call(server, { method: "DELETE", path: `/v1/hooks/${hook.id}` })).status).toBe(200);
    expect((await call(server, { method: "DELETE", path: `/v1/hooks/${hook.id}` })).status).toBe(404);
    const body = stripeEvent("evt_gone", "invoice.paid", { object: "invoice", id: "in_1" });
    const gone = await deliver(hook.id, body, { "Stripe-Signature": stripeHeader("whsec_new", body) });
    expect(gone.status).toBe(404);
  });

  test("each kind's default channel; a bad field is a 400 that names it and makes nothing", async () => {
    for (const [kind, channel] of [
      ["github", "github"],
      ["alertmanager", "alertmanager"],
      ["generic", "hooks"],
    ] as const) {
      const hook = await makeHook({ project: "other", kind, name: kind, ...(kind === "github" && { secret: "s" }) });
      expect(hook.channel).toBe(channel);
    }
    const before = (await call(server, { path: "/v1/hooks?project=other" })).json.hooks.length;
    for (const [body, field] of [
      [{ project: "other", kind: "stripe", name: "No secret" }, "secret"],
      [{ project: "other", kind: "github", name: "No secret" }, "secret"],
      [{ project: "other", kind: "paypal", name: "x", secret: "s" }, "kind"],
      [{ project: "other", kind: "generic", name: "" }, "name"],
      [{ project: "other", kind: "generic", name: "x", channel: "Not A Channel" }, "channel"],
      [{ project: "other", kind: "generic", name: "x", config: { mapping: { nope: "$.x" } } }, "config"],
      [{ project: "nowhere", kind: "generic", name: "x" }, "project"],
    ] as const) {
      const refused = await call(server, { path: "/v1/hooks", body });
      expect(refused.status).toBe(400);
      expect(refused.json.validation.body.map((i: { path: string }) => i.path)).toContain(field);
    }
    expect((await call(server, { path: "/v1/hooks?project=other" })).json.hooks.length).toBe(before);
  });

  test("full-access tokens only, limited to their projects", async () => {
    const publicToken = (await server.services.tokens.create({ name: "site", kind: "public", project: "shop" })).token;
    expect((await call(server, { path: "/v1/hooks?project=shop", token: publicToken })).status).toBe(403);
    const limited = (await server.services.tokens.create({ name: "shop only", projects: ["shop"] })).token;
    const theirs = await makeHook({ project: "other", kind: "generic", name: "Theirs" });
    const as = (path: string, method = "GET", body?: unknown) => call(server, { path, method, body, token: limited });
    expect((await as("/v1/hooks?project=shop")).status).toBe(200);
    expect((await as("/v1/hooks?project=other")).status).toBe(403);
    expect((await as("/v1/hooks", "POST", { project: "other", kind: "generic", name: "x" })).status).toBe(403);
    expect((await as(`/v1/hooks/${theirs.id}`, "PATCH", { name: "Mine now" })).status).toBe(403);
    expect((await as(`/v1/hooks/${theirs.id}`, "DELETE")).status).toBe(403);
    const mine = await makeHook({ project: "shop", kind: "generic", name: "Mine" }, limited);
    expect((await as(`/v1/hooks/${mine.id}`, "DELETE")).status).toBe(200);
  });

  test("are in /openapi.json", async () => {
    const doc = (await call(server, { path: "/openapi.json", token: null })).json;
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/v1/hooks", "/v1/hooks/{id}", "/hooks/{id}"]));
  });
});

describe("Stripe", () => {
  const secret = "whsec_test_5f2b8c1d";
  let id: string;
  beforeAll(async () => {
    id = (await makeHook({ project: "shop", kind: "stripe", name: "Payments", secret })).id;
  });

  test("a signed event is stored once, named by its type, with its amount in the main unit and a dashboard link", async () => {
    const body = stripeEvent("evt_1QxA", "invoice.paid", {
      id: "in_1QxA",
      object: "invoice",
      amount_paid: 1999,
      currency: "usd",
      customer: "cus_Q1",
    });
    const first = await deliver(id, body, { "Stripe-Signature": stripeHeader(secret, body) });
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ success: true, stored: 1, duplicates: 0 });
    const again = await deliver(id, body, { "Stripe-Signature": stripeHeader(secret, body) });
    expect(again.json).toMatchObject({ stored: 0, duplicates: 1 });
    const events = (await eventsIn("shop", "stripe")).filter((e) => e.event === "invoice.paid");
    expect(events).toHaveLength(1);
    expect(events[0]!.tags).toEqual({ customer: "cus_Q1", amount: 19.99, currency: "usd", livemode: false });
    expect(events[0]!.description).toContain("https://dashboard.stripe.com/test/invoices/in_1QxA");
  });

  test("zero-decimal currencies are whole units; live mode links outside /test/; any of several v1 signatures", async () => {
    const body = stripeEvent(
      "evt_jpy",
      "payment_intent.succeeded",
      { id: "pi_jpy", object: "payment_intent", amount: 500, currency: "jpy", customer: "cus_J" },
      true,
    );
    // While a secret is rolled, Stripe signs with both: the first v1 here is the old secret's.
    const header = `${stripeHeader("whsec_old", body)},v1=${hmac(secret, `${Math.floor(NOW / 1000)}.${body}`)},v0=abc`;
    const answer = await deliver(id, body, { "Stripe-Signature": header });
    expect(answer.status).toBe(200);
    const [event] = (await eventsIn("shop", "stripe")).filter((e) => e.event === "payment_intent.succeeded");
    expect(event!.tags).toMatchObject({ amount: 500, currency: "jpy", livemode: true });
    expect(event!.description).toContain("https://dashboard.stripe.com/payments/pi_jpy");
  });

  test("a bad, old or missing signature is a 401 that says so, and stores nothing", async () => {
    const body = stripeEvent("evt_forged", "charge.refunded", {
      id: "ch_1",
      object: "charge",
      amount: 100,
      currency: "eur",
    });
    const t = Math.floor(NOW / 1000);
    for (const [headers, words] of [
      [{}, /Stripe-Signature header is missing/],
      [{ "Stripe-Signature": stripeHeader("whsec_wrong", body) }, /does not match/],
      [{ "Stripe-Signature": stripeHeader(secret, body, t - 301) }, /5 minutes/],
      [{ "Stripe-Signature": stripeHeader(secret, body, t + 301) }, /5 minutes/],
      [{ "Stripe-Signature": `t=${t}` }, /no v1 signature/],
      [{ "Stripe-Signature": stripeHeader(secret, `${body} `) }, /does not match/],
    ] as const) {
      // The last signs other bytes than those sent: the check is on the raw body.
      const refused = await deliver(id, body, headers);
      expect(refused.status).toBe(401);
      expect(refused.json.message).toMatch(words);
    }
    expect((await eventsIn("shop", "stripe")).filter((e) => e.event === "charge.refunded")).toHaveLength(0);
    // Within the tolerance it is taken.
    const late = await deliver(id, body, { "Stripe-Signature": stripeHeader(secret, body, t - 290) });
    expect(late.status).toBe(200);
  });

  test("a partial refund's amount is what was refunded, not what the charge was", async () => {
    const body = stripeEvent("evt_refund", "charge.refunded", {
      id: "ch_refund",
      object: "charge",
      amount: 5000,
      amount_captured: 5000,
      amount_refunded: 1500,
      currency: "usd",
      customer: "cus_R",
      refunded: false,
    });
    expect((await deliver(id, body, { "Stripe-Signature": stripeHeader(secret, body) })).status).toBe(200);
    const [event] = (await eventsIn("shop", "stripe")).filter((e) => e.description?.includes("ch_refund"));
    expect(event!.event).toBe("charge.refunded");
    expect(event!.tags).toMatchObject({ amount: 15, currency: "usd" });
    expect(event!.description).toContain("15 USD");
  });
});

describe("GitHub", () => {
  const secret = "It's a Secret to Everybody";
  let id: string;
  beforeAll(async () => {
    id = (await makeHook({ project: "shop", kind: "github", name: "Repo", secret })).id;
  });
  let n = 0;
  const headersOf = (event: string, body: string, delivery = `72d3162e-cc78-11e3-81ab-4c9367dc0958-${n++}`) => ({
    "User-Agent": "GitHub-Hookshot/044aadd",
    "X-GitHub-Event": event,
    "X-GitHub-Delivery": delivery,
    "X-GitHub-Hook-ID": "292430182",
    "X-Hub-Signature": `sha1=${createHmac("sha1", secret).update(body).digest("hex")}`,
    "X-Hub-Signature-256": `sha256=${hmac(secret, body)}`,
  });
  const repository = { full_name: "acme/shop", html_url: "https://github.com/acme/shop" };
  const sender = { login: "octocat" };

  test("the signature is GitHub's: its documented example", () => {
    expect(hmac(secret, "Hello, World!")).toBe("757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17");
  });

  test("ping is answered without an event; push, workflow runs and pull requests are named by event and action", async () => {
    const ping = JSON.stringify({ zen: "Keep it logically awesome.", hook_id: 1, repository, sender });
    const pinged = await deliver(id, ping, headersOf("ping", ping));
    expect(pinged.status).toBe(200);
    expect(pinged.json).toMatchObject({ stored: 0, duplicates: 0 });
    const push = JSON.stringify({
      ref: "refs/heads/main",
      compare: "https://github.com/acme/shop/compare/a...b",
      commits: [{ message: "Fix the till\n\nlong text" }],
      pusher: { name: "octocat" },
      repository,
      sender,
    });
    expect((await deliver(id, push, headersOf("push", push))).status).toBe(200);
    const run = JSON.stringify({
      action: "completed",
      workflow_run: {
        name: "CI",
        head_branch: "feature",
        status: "completed",
        conclusion: "failure",
        html_url: "https://github.com/acme/shop/actions/runs/1",
      },
      repository,
      sender,
    });
    expect((await deliver(id, run, headersOf("workflow_run", run))).status).toBe(200);
    const pr = JSON.stringify({
      action: "closed",
      pull_request: {
        title: "Add refunds",
        html_url: "https://github.com/acme/shop/pull/7",
        merged: true,
        head: { ref: "refunds" },
      },
      repository,
      sender,
    });
    const delivery = "5a7b0e50-0000-11ef-8000-000000000001";
    expect((await deliver(id, pr, headersOf("pull_request", pr, delivery))).status).toBe(200);
    const redelivered = await deliver(id, pr, headersOf("pull_request", pr, delivery));
    expect(redelivered.json).toMatchObject({ stored: 0, duplicates: 1 });
    const events = await eventsIn("shop", "github");
    const named = (name: string) => events.filter((e) => e.event === name);
    expect(named("ping")).toHaveLength(0);
    expect(named("push")[0]!.tags).toEqual({ repository: "acme/shop", branch: "main", actor: "octocat" });
    expect(named("push")[0]!.description).toContain("Fix the till");
    expect(named("workflow_run.completed")[0]!.tags).toEqual({
      repository: "acme/shop",
      branch: "feature",
      actor: "octocat",
      conclusion: "failure",
    });
    expect(named("pull_request.closed")).toHaveLength(1);
    expect(named("pull_request.closed")[0]!.tags).toMatchObject({ branch: "refunds", merged: true });
  });

  test("a form-encoded delivery (GitHub's other content type) is read from its payload", async () => {
    const json = JSON.stringify({
      action: "published",
      release: { tag_name: "v1.2.0", name: "v1.2.0" },
      repository,
      sender,
    });
    const form = `payload=${encodeURIComponent(json)}`;
    const answer = await deliver(id, form, {
      ...headersOf("release", form),
      "Content-Type": "application/x-www-form-urlencoded",
    });
    expect(answer.status).toBe(200);
    expect((await eventsIn("shop", "github")).filter((e) => e.event === "release.published")).toHaveLength(1);
  });

  test("a bad or missing signature is a 401 and stores nothing", async () => {
    const body = JSON.stringify({ action: "opened", issue: { title: "Forged" }, repository, sender });
    const good = headersOf("issues", body);
    for (const headers of [
      { ...good, "X-Hub-Signature-256": `sha256=${hmac("wrong", body)}` },
      { ...good, "X-Hub-Signature-256": hmac(secret, body) },
      Object.fromEntries(Object.entries(good).filter(([k]) => k !== "X-Hub-Signature-256")),
    ]) {
      const refused = await deliver(id, body, headers);
      expect(refused.status).toBe(401);
      expect(refused.json.message).toMatch(/X-Hub-Signature-256/);
    }
    expect((await eventsIn("shop", "github")).filter((e) => e.event === "issues.opened")).toHaveLength(0);
  });
});

describe("Alertmanager", () => {
  /** A version 4 body in the shape of Alertmanager's docs (webhook_config). */
  const body = (status: "firing" | "resolved") =>
    JSON.stringify({
      receiver: "signalboard",
      status,
      alerts: [
        {
          status,
          labels: { alertname: "HighLatency", instance: "web-1:9100", severity: "page" },
          annotations: { summary: "p99 latency above 2s" },
          startsAt: "2026-01-01T11:55:00Z",
          endsAt: status === "resolved" ? "2026-01-01T12:05:00Z" : "0001-01-01T00:00:00Z",
          generatorURL: "http://prometheus:9090/graph?g0.expr=latency",
          fingerprint: "c6f1b1a9e2f4d3a1",
        },
        {
          status,
          labels: { alertname: "DiskFull", instance: "db-1:9100", severity: "ticket" },
          annotations: { description: "/var at 97%" },
          startsAt: "2026-01-01T11:50:00Z",
          endsAt: "0001-01-01T00:00:00Z",
          generatorURL: "http://prometheus:9090/graph?g0.expr=disk",
          fingerprint: "0d2e4f6a8b1c3e5f",
        },
      ],
      groupLabels: { team: "ops" },
      commonLabels: { team: "ops" },
      commonAnnotations: {},
      externalURL: "http://alertmanager:9093",
      version: "4",
      groupKey: '{}/{severity=~"page|ticket"}:{team="ops"}',
      truncatedAlerts: 0,
    });

  test("each alert is an event named by its alertname: firing with notify, resolved without; a repeat is stored once", async () => {
    const { id } = await makeHook({ project: "shop", kind: "alertmanager", name: "Prometheus" });
    const fired = await deliver(id, body("firing"), { "User-Agent": "Alertmanager/0.27.0" });
    expect(fired.json).toMatchObject({ stored: 2, duplicates: 0 });
    expect((await deliver(id, body("firing"), {})).json).toMatchObject({ stored: 0, duplicates: 2 });
    expect((await deliver(id, body("resolved"), {})).json).toMatchObject({ stored: 2, duplicates: 0 });
    const events = await eventsIn("shop", "alertmanager");
    const latency = events.filter((e) => e.event === "HighLatency");
    expect(latency.map((e) => [e.tags.status, e.notify]).sort()).toEqual([
      ["firing", true],
      ["resolved", false],
    ]);
    expect(latency[0]!.tags).toMatchObject({ alertname: "HighLatency", instance: "web-1:9100", severity: "page" });
    expect(latency[0]!.description).toContain("p99 latency above 2s");
  });

  test("a body that is not Alertmanager's version 4 is a 400 naming the field, and stores nothing", async () => {
    const { id } = await makeHook({ project: "shop", kind: "alertmanager", name: "Not quite", channel: "am-bad" });
    const full = JSON.parse(body("firing"));
    const { alerts: _, ...withoutAlerts } = full;
    for (const [sent, field, words] of [
      [{}, "version", /version: must be "4".*got none/],
      [withoutAlerts, "alerts", /alerts: must be the list/],
      [{ ...full, version: "3" }, "version", /got "3"/],
      [{ ...full, version: 4 }, "version", /must be "4"/],
      [{ ...full, alerts: "HighLatency" }, "alerts", /alerts: must be the list/],
      [{ ...full, alerts: [full.alerts[0], 7] }, "alerts.1", /each alert must be an object/],
      [[full], "", /JSON object/],
    ] as const) {
      const refused = await deliver(id, JSON.stringify(sent), {});
      expect(refused.status).toBe(400);
      expect(refused.json.validation.body[0].path).toBe(field);
      expect(refused.json.message).toMatch(words);
    }
    expect(await eventsIn("shop", "am-bad")).toEqual([]);
  });
});

describe("bodies and headers that are not the service's", () => {
  test("a signed Stripe body without its id or type is a 400 naming it, and stores nothing", async () => {
    const secret = "whsec_shapes";
    const { id } = await makeHook({ project: "shop", kind: "stripe", name: "Shapes", channel: "st-bad", secret });
    for (const [sent, field] of [
      [{}, "id"],
      [{ id: "evt_no_type", object: "event", data: { object: {} } }, "type"],
      [{ id: 42, type: "invoice.paid" }, "id"],
    ] as const) {
      const text = JSON.stringify(sent);
      const refused = await deliver(id, text, { "Stripe-Signature": stripeHeader(secret, text) });
      expect(refused.status).toBe(400);
      expect(refused.json.validation.body[0].path).toBe(field);
    }
    expect(await eventsIn("shop", "st-bad")).toEqual([]);
  });

  test("a signed GitHub delivery without X-GitHub-Event or X-GitHub-Delivery is a 400 naming the header", async () => {
    const secret = "gh shapes";
    const { id } = await makeHook({ project: "shop", kind: "github", name: "Shapes", channel: "gh-bad", secret });
    const text = JSON.stringify({ action: "opened", repository: { full_name: "a/b" } });
    const signed = { "X-Hub-Signature-256": `sha256=${hmac(secret, text)}` };
    const noEvent = await deliver(id, text, { ...signed, "X-GitHub-Delivery": "d-shape-1" });
    expect(noEvent.status).toBe(400);
    expect(noEvent.json.message).toContain("X-GitHub-Event");
    const noDelivery = await deliver(id, text, { ...signed, "X-GitHub-Event": "issues" });
    expect(noDelivery.status).toBe(400);
    expect(noDelivery.json.message).toContain("X-GitHub-Delivery");
    const list = "[1]";
    const notObject = await deliver(id, list, {
      "X-Hub-Signature-256": `sha256=${hmac(secret, list)}`,
      "X-GitHub-Event": "issues",
      "X-GitHub-Delivery": "d-shape-2",
    });
    expect(notObject.status).toBe(400);
    expect(await eventsIn("shop", "gh-bad")).toEqual([]);
  });
});

describe("generic JSON", () => {
  test("a mapping picks the event's fields; with a secret, the HMAC header is checked", async () => {
    const hook = await makeHook({
      project: "shop",
      kind: "generic",
      name: "Deploys",
      channel: "deploys",
      secret: "shh",
      config: {
        mapping: { event: "$.deployment.title", description: "$.deployment.log", tags: { env: "$.env" }, id: "$.uuid" },
        signature_header: "X-Deploy-Signature",
      },
    });
    const body = JSON.stringify({ uuid: "d-1", env: "prod", deployment: { title: "Deployed v2", log: "all good" } });
    const refused = await deliver(hook.id, body, { "X-Deploy-Signature": hmac("other", body) });
    expect(refused.status).toBe(401);
    expect(refused.json.message).toMatch(/X-Deploy-Signature/);
    expect((await deliver(hook.id, body, {})).status).toBe(401);
    expect((await eventsIn("shop", "deploys")).length).toBe(0);
    const taken = await deliver(hook.id, body, { "X-Deploy-Signature": `sha256=${hmac("shh", body)}` });
    expect(taken.json).toMatchObject({ stored: 1 });
    expect((await deliver(hook.id, body, { "X-Deploy-Signature": hmac("shh", body) })).json).toMatchObject({
      duplicates: 1,
    });
    const [event] = await eventsIn("shop", "deploys");
    expect(event).toMatchObject({ event: "Deployed v2", description: "all good", tags: { env: "prod" } });
  });

  test("without a mapping, a body in /v1/log's shape; a body that is not JSON is a 400", async () => {
    const hook = await makeHook({ project: "shop", kind: "generic", name: "Anything" });
    const body = JSON.stringify({ event: "Backup done", notify: true, tags: { size: 12 }, channel: "backups" });
    expect((await deliver(hook.id, body, {})).json).toMatchObject({ stored: 1 });
    expect((await eventsIn("shop", "backups"))[0]).toMatchObject({
      event: "Backup done",
      notify: true,
      tags: { size: 12 },
    });
    expect((await deliver(hook.id, "{not json", {})).status).toBe(400);
  });
});

describe("/hooks/<id>", () => {
  test("an unknown id and a hook of a deleted project are 404", async () => {
    expect((await deliver("AAAAAAAAAAAAAAAAAAAAAAAA", "{}", {})).status).toBe(404);
    expect((await deliver("short", "{}", {})).status).toBe(404);
    const hook = await makeHook({ project: "doomed", kind: "generic", name: "Soon gone" });
    expect((await deliver(hook.id, '{"event":"x"}', {})).status).toBe(200);
    await server.services.projects.deleteProject("doomed");
    const gone = await deliver(hook.id, '{"event":"x"}', {});
    expect(gone.status).toBe(404);
    expect(gone.json.error).toBe("not_found");
  });

  test("a body over the limit is a 413 and the rate limit per hook a 429 with Retry-After", async () => {
    const limited = await startTestApp({ "rate-limit-hook": "2/m", "hook-body-limit": "1KiB" });
    try {
      await limited.services.projects.create("shop");
      const hook = await limited.services.hooks.create({ project: "shop", kind: "generic", name: "Small" });
      const send = (body: string) =>
        call(limited, {
          path: `/hooks/${hook.id}`,
          body,
          token: null,
          headers: { "Content-Type": "application/json" },
        });
      expect((await send(JSON.stringify({ event: "x".repeat(2000) }))).status).toBe(413);
      expect((await send('{"event":"one"}')).status).toBe(200);
      const over = await send('{"event":"two"}');
      expect(over.status).toBe(429);
      expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0);
      // Another hook has a limit of its own.
      const other = await limited.services.hooks.create({ project: "shop", kind: "generic", name: "Other" });
      const answer = await call(limited, {
        path: `/hooks/${other.id}`,
        body: '{"event":"three"}',
        token: null,
        headers: { "Content-Type": "application/json" },
      });
      expect(answer.status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});
