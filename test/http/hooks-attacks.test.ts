// Inbound webhooks as someone who is not meant to use them sees them: an Alertmanager hook with a
// secret posted to without it (or with another), an issue's
// title written to look like a link of its own in the feed, and a body over the hooks' own limit
// answered with the setting that raises it. In-process, with a clock the test holds still.
import { createHmac } from "node:crypto";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { TestClock } from "../clock.ts";
import { type Agent, call, signedIn, startTestApp, type TestApp } from "../helpers.ts";

let server: TestApp;
let owner: Agent;
const NOW = Date.UTC(2026, 0, 1, 12);

beforeAll(async () => {
  server = await startTestApp({ "base-url": "https://sb.example.com", "hook-body-limit": "2KiB" }, undefined, {
    clock: new TestClock(NOW, { stopped: true }),
  });
  await server.services.projects.create("shop");
  await server.services.accounts.createUser({ username: "boss", password: "boss password 1" }, "owner");
  owner = await signedIn(server, { username: "boss", password: "boss password 1" });
});
afterAll(() => server.close());

const hmac = (secret: string, data: string) => createHmac("sha256", secret).update(data).digest("hex");

test("an Alertmanager hook with a secret takes only deliveries that carry it, as Alertmanager's http_config sends it", async () => {
  const made = await call(server, {
    path: "/v1/hooks",
    body: { project: "shop", kind: "alertmanager", name: "Alerts", channel: "am-auth", secret: "am-credentials" },
  });
  expect(made.status).toBe(200);
  expect(made.json.hook.has_secret).toBe(true);
  expect(made.text).not.toContain("am-credentials");
  const id = made.json.hook.id as string;
  const alert = (name: string) =>
    JSON.stringify({
      version: "4",
      groupKey: `{}:{alertname="${name}"}`,
      status: "firing",
      alerts: [{ status: "firing", labels: { alertname: name }, startsAt: "2026-01-01T11:00:00Z", fingerprint: name }],
    });
  const send = (name: string, headers: Record<string, string>) =>
    call(server, {
      path: `/hooks/${id}`,
      body: alert(name),
      token: null,
      headers: { "Content-Type": "application/json", ...headers },
    });
  const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
  for (const [headers, words] of [
    [{}, /Authorization header is missing/],
    [{ Authorization: "Bearer wrong" }, /bearer token is wrong/],
    [{ Authorization: "Bearer am-credentials-and-more" }, /bearer token is wrong/],
    [{ Authorization: basic("alertmanager", "wrong") }, /basic auth password is wrong/],
    [{ Authorization: basic("am-credentials", "") }, /basic auth password is wrong/],
    [{ Authorization: "Token am-credentials" }, /must be Bearer or Basic/],
  ] as const) {
    const refused = await send("Forged", headers);
    expect(refused.status).toBe(401);
    expect(refused.json.message).toMatch(words);
    expect(refused.json.message).toContain("http_config");
  }
  const events = async () =>
    ((await call(server, { path: "/v1/events?project=shop&channel=am-auth" })).json.events ?? []) as {
      event: string;
    }[];
  expect(await events()).toEqual([]);
  // authorization: {type: Bearer, credentials: ...}, and basic_auth: {username: ..., password: ...}.
  expect((await send("ByBearer", { Authorization: "Bearer am-credentials" })).json).toMatchObject({ stored: 1 });
  expect((await send("ByBasic", { Authorization: basic("alertmanager", "am-credentials") })).json).toMatchObject({
    stored: 1,
  });
  expect((await events()).map((e) => e.event).sort()).toEqual(["ByBasic", "ByBearer"]);

  // Removing the secret makes the URL the only secret again; setting one later is checked from then on.
  const plain = await call(server, { method: "PATCH", path: `/v1/hooks/${id}`, body: { secret: null } });
  expect(plain.json.hook.has_secret).toBe(false);
  expect((await send("Open", {})).status).toBe(200);
  await call(server, { method: "PATCH", path: `/v1/hooks/${id}`, body: { secret: "later" } });
  expect((await send("Closed", {})).status).toBe(401);
  expect((await send("Closed", { Authorization: "Bearer later" })).status).toBe(200);
  // A secret pasted with spaces or a line break around it (or of spaces only) could never be sent
  // back as a trimmed bearer token, nor match a service's signature: refused, the old one kept.
  for (const pasted of ["   ", "later\n", " later"]) {
    const refused = await call(server, { method: "PATCH", path: `/v1/hooks/${id}`, body: { secret: pasted } });
    expect(refused.status).toBe(400);
    expect(refused.json.validation.body[0].path).toBe("secret");
  }
  expect((await send("Still closed", { Authorization: "Bearer later" })).status).toBe(200);
  await server.services.hooks.remove(id);
});

test("an issue's title (anyone's words) shows as text in its link, never as a link of its own", async () => {
  const hook = await server.services.hooks.create({
    project: "shop",
    kind: "github",
    name: "Repo",
    channel: "gh",
    secret: "gh-secret",
  });
  const deliver = async (event: string, id: string, payload: Record<string, unknown>) => {
    const body = JSON.stringify(payload);
    const answer = await call(server, {
      path: `/hooks/${hook.id}`,
      body,
      token: null,
      headers: {
        "Content-Type": "application/json",
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": id,
        "X-Hub-Signature-256": `sha256=${hmac("gh-secret", body)}`,
      },
    });
    expect(answer.status).toBe(200);
  };
  const repository = { full_name: "acme/app", html_url: "https://github.com/acme/app" };
  await deliver("issues", "d-1", {
    action: "opened",
    issue: {
      title: "Login broken](https://evil.example/login) see [details",
      html_url: "https://github.com/acme/app/issues/7",
    },
    repository,
    sender: { login: "stranger" },
  });
  await deliver("push", "d-2", {
    ref: "refs/heads/main",
    compare: "https://github.com/acme/app/compare/a...b",
    commits: [{ message: "[Security fix](https://evil.example/patch) <img src=x onerror=alert(1)>" }],
    repository,
    sender: { login: "stranger" },
  });
  const feed = await (await owner.request("/p/shop/feed?channel=gh")).text();
  expect(feed).toContain("Login broken");
  expect(feed).toContain("Security fix");
  expect(feed).toContain('href="https://github.com/acme/app/issues/7"');
  expect(feed).not.toContain('href="https://evil.example');
  expect(feed).not.toContain("<img");
});

test("a delivery over the hooks' limit names SIGNALBOARD_HOOK_BODY_LIMIT, the setting that raises it", async () => {
  const hook = await server.services.hooks.create({ project: "shop", kind: "generic", name: "Big" });
  const body = JSON.stringify({ event: "x".repeat(3000) });
  const declared = await call(server, {
    path: `/hooks/${hook.id}`,
    body,
    token: null,
    headers: { "Content-Type": "application/json" },
  });
  expect(declared.status).toBe(413);
  expect(declared.json.message).toContain("SIGNALBOARD_HOOK_BODY_LIMIT");
  // Sent in chunks, without a declared size: counted as it comes, and the same answer.
  const chunked = await server.fetch(`/hooks/${hook.id}`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode(body));
        c.close();
      },
    }),
  });
  expect(chunked.status).toBe(413);
  expect(((await chunked.json()) as { message: string }).message).toContain("SIGNALBOARD_HOOK_BODY_LIMIT");
});

test("one Stripe delivery sent ten times at once is stored once; a replay outside five minutes stores nothing", async () => {
  const hook = await server.services.hooks.create({
    project: "shop",
    kind: "stripe",
    name: "Payments",
    channel: "pay",
    secret: "whsec_parallel",
  });
  const body = JSON.stringify({ id: "evt_parallel", type: "invoice.paid", data: { object: { object: "invoice" } } });
  const send = (t: number) =>
    call(server, {
      path: `/hooks/${hook.id}`,
      body,
      token: null,
      headers: {
        "Content-Type": "application/json",
        "Stripe-Signature": `t=${t},v1=${hmac("whsec_parallel", `${t}.${body}`)}`,
      },
    });
  const t = Math.floor(NOW / 1000);
  const answers = await Promise.all(Array.from({ length: 10 }, () => send(t)));
  expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
  expect(answers.reduce((n, a) => n + a.json.stored, 0)).toBe(1);
  expect(answers.reduce((n, a) => n + a.json.duplicates, 0)).toBe(9);
  for (const late of [t - 301, t + 301]) expect((await send(late)).status).toBe(401);
  const events = (await call(server, { path: "/v1/events?project=shop&channel=pay" })).json.events;
  expect(events).toHaveLength(1);
});
