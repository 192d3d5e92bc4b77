// A delivery sent again days later is still stored once: services send again for days (Stripe
// retries for up to three, GitHub redelivers those of the past three), so a delivery's key is kept
// four days for every kind, through housekeeping's pruning; after that a delivery is taken afresh.
// Each kind's delivery is made as its service makes it, signed at the moment it is sent.
import { createHmac } from "node:crypto";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { HOOK_DELIVERY_KEPT_MS } from "../../src/domain/hooks.ts";
import { TestClock } from "../clock.ts";
import { call, startTestApp, type TestApp } from "../helpers.ts";

const HOUR = 3_600_000;
const clock = new TestClock(Date.UTC(2026, 0, 1, 12), { stopped: true });
let server: TestApp;

beforeAll(async () => {
  server = await startTestApp({}, undefined, { clock });
  await server.services.projects.create("shop");
});
afterAll(() => server.close());

const hmac = (secret: string, data: string) => createHmac("sha256", secret).update(data).digest("hex");

/** Each kind: the hook, and a delivery of the same event as its service sends it at the clock's time. */
const KINDS = [
  {
    kind: "stripe",
    secret: "whsec_redelivery",
    body: JSON.stringify({ id: "evt_again", object: "event", type: "invoice.paid", data: { object: {} } }),
    headers(body: string) {
      const t = Math.floor(clock.now() / 1000);
      return { "Stripe-Signature": `t=${t},v1=${hmac(this.secret, `${t}.${body}`)}` };
    },
  },
  {
    kind: "github",
    secret: "gh secret",
    body: JSON.stringify({ action: "published", release: { tag_name: "v1" }, repository: { full_name: "a/b" } }),
    headers(body: string) {
      return {
        "X-GitHub-Event": "release",
        "X-GitHub-Delivery": "0b9c2d1e-0000-11ef-8000-00000000abcd",
        "X-Hub-Signature-256": `sha256=${hmac(this.secret, body)}`,
      };
    },
  },
  {
    kind: "alertmanager",
    secret: undefined,
    body: JSON.stringify({
      version: "4",
      groupKey: '{}:{alertname="Down"}',
      status: "firing",
      alerts: [
        { status: "firing", labels: { alertname: "Down" }, startsAt: "2026-01-01T11:00:00Z", fingerprint: "f1" },
      ],
    }),
    headers: () => ({}),
  },
  {
    kind: "generic",
    secret: "shh",
    body: JSON.stringify({ event: "Deployed" }),
    headers(body: string) {
      return { "X-Signature-256": hmac(this.secret, body), "Idempotency-Key": "deploy-7" };
    },
  },
] as const;

test("a delivery sent again 60 hours later is stored once, for every kind; one after the window is stored again", async () => {
  expect(HOOK_DELIVERY_KEPT_MS).toBeGreaterThanOrEqual(72 * HOUR);
  const hooks = await Promise.all(
    KINDS.map((k) =>
      server.services.hooks.create({
        project: "shop",
        kind: k.kind,
        name: k.kind,
        channel: `in-${k.kind}`,
        ...(k.secret && { secret: k.secret }),
      }),
    ),
  );
  const deliverAll = () =>
    Promise.all(
      KINDS.map(async (k, i) => {
        const answer = await call(server, {
          path: `/hooks/${hooks[i]!.id}`,
          body: k.body,
          token: null,
          headers: { "Content-Type": "application/json", ...k.headers(k.body) },
        });
        expect(answer.status).toBe(200);
        return [k.kind, answer.json.stored, answer.json.duplicates];
      }),
    );
  const count = async (kind: string) =>
    (await call(server, { path: `/v1/events?project=shop&channel=in-${kind}` })).json.events.length;

  expect(await deliverAll()).toEqual(KINDS.map((k) => [k.kind, 1, 0]));
  // Housekeeping (which prunes the keys) runs as the clock moves on.
  await clock.advance(60 * HOUR);
  expect(await deliverAll()).toEqual(KINDS.map((k) => [k.kind, 0, 1]));
  for (const k of KINDS) expect(await count(k.kind)).toBe(1);

  await clock.advance(HOOK_DELIVERY_KEPT_MS - 60 * HOUR + HOUR);
  expect(await deliverAll()).toEqual(KINDS.map((k) => [k.kind, 1, 0]));
  for (const k of KINDS) expect(await count(k.kind)).toBe(2);
});
