// The delivery queue when a receiver misbehaves: one that never answers must not hold up anyone
// else, and a server stopped with sends in flight must neither hang nor lose them.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eventually, found, post, startTestApp, type TestApp } from "../helpers.ts";
import { type PushService, startPushService } from "../push-service.ts";
import { type Receiver, startReceiver } from "../receiver.ts";

let push: PushService;
beforeAll(async () => {
  push = await startPushService();
});
afterAll(() => push.stop());

const FAST = { "notify-retry-base": "100ms", "outbound-allow": "127.0.0.1" }; // receivers on 127.0.0.1

async function phone(server: TestApp) {
  const user = await server.services.accounts.createUser(
    { username: `u${Math.random().toString(36).slice(2, 8)}`, password: "password 123456" },
    "owner",
  );
  const sub = push.subscribe();
  await server.services.devices.register(user, { endpoint: sub.endpoint, keys: sub.keys, deviceName: "Phone" });
  return sub;
}

/** The attempts recorded for the deliveries to these integrations. */
async function attemptsOf(server: TestApp, integrationIds: number[]): Promise<unknown[]> {
  const deliveries = await server.store.notifications.deliveriesFor("integration", integrationIds);
  return (await Promise.all(deliveries.map((d) => server.store.notifications.attemptsOf(d.id)))).flat();
}

describe("a receiver that never answers", () => {
  test("holds two sends at most, and devices and other integrations are served meanwhile", async () => {
    const server = await startTestApp(FAST);
    const stuck = await startReceiver();
    const fine = await startReceiver();
    stuck.hold();
    try {
      await server.services.projects.create("stuck");
      const { integration: hung } = await server.services.integrations.create({
        project: "stuck",
        kind: "webhook",
        name: "Hangs",
        config: { url: `${stuck.url}/hook` },
      });
      for (let i = 0; i < 10; i++)
        await post(server, "/v1/log", { project: "stuck", channel: "c", event: `Stuck ${i}`, notify: true });
      await found(() => stuck.requests[0]);

      // More than the notifier's eight slots wait for the receiver that hangs; a device and another
      // integration still hear at once: before a hung send's 10 s timeout (none has an attempt recorded).
      const device = await phone(server);
      await server.services.integrations.create({
        project: "default",
        kind: "webhook",
        name: "Answers",
        config: { url: `${fine.url}/hook` },
      });
      await post(server, "/v1/log", { project: "default", channel: "c", event: "Meanwhile", notify: true });
      await eventually(() => expect(push.messagesFor(device.id).map((m) => m.title)).toEqual(["Meanwhile"]));
      await found(() => fine.requests.find((r) => JSON.parse(r.body).title === "Meanwhile"));
      expect(stuck.requests.length).toBe(2);
      expect(await attemptsOf(server, [hung.id])).toEqual([]);

      // Once it answers, the rest go through.
      stuck.release();
      await eventually(() =>
        expect(stuck.requests.map((r) => JSON.parse(r.body).title).sort()).toEqual(
          Array.from({ length: 10 }, (_, i) => `Stuck ${i}`),
        ),
      );
    } finally {
      stuck.stop();
      fine.stop();
      await server.close();
    }
  });
});

describe("several receivers that never answer", () => {
  test("four of them together still do not hold up a healthy one", async () => {
    const server = await startTestApp(FAST);
    const stuck = await Promise.all([1, 2, 3, 4].map(() => startReceiver()));
    const fine = await startReceiver();
    for (const s of stuck) s.hold();
    const hung: number[] = [];
    try {
      for (const [i, s] of stuck.entries()) {
        const { integration } = await server.services.integrations.create({
          project: "default",
          kind: "webhook",
          name: `Hangs ${i}`,
          config: { url: `${s.url}/hook` },
        });
        hung.push(integration.id);
      }
      await server.services.integrations.create({
        project: "default",
        kind: "webhook",
        name: "Answers",
        config: { url: `${fine.url}/hook` },
      });
      for (let i = 0; i < 5; i++)
        await post(server, "/v1/log", { project: "default", channel: "c", event: `Event ${i}`, notify: true });
      // Every event reaches the healthy receiver at once, though each hung receiver holds two sends:
      // before their 10 s timeout (none has an attempt recorded).
      await eventually(() =>
        expect(fine.requests.map((r) => JSON.parse(r.body).title).sort()).toEqual(
          [0, 1, 2, 3, 4].map((i) => `Event ${i}`),
        ),
      );
      expect(await attemptsOf(server, hung)).toEqual([]);
    } finally {
      for (const s of stuck) s.stop();
      fine.stop();
      await server.close();
    }
  });
});

describe("stopping with a send in flight", () => {
  async function hooked() {
    const server = await startTestApp(FAST);
    const hook = await startReceiver();
    const { integration } = await server.services.integrations.create({
      project: "default",
      kind: "webhook",
      name: "Slow",
      config: { url: `${hook.url}/hook` },
    });
    return { server, hook, integrationId: integration.id };
  }
  const deliveryIds = (hook: Receiver) =>
    hook.requests.map((r) => [r.headers["x-signalboard-delivery"], String(JSON.parse(r.body).delivery_id)]);

  test("a send that answers within the grace is waited for and recorded; the next start does not repeat it", async () => {
    const { server, hook, integrationId } = await hooked();
    try {
      hook.hold();
      await post(server, "/v1/log", { project: "default", channel: "c", event: "Slow", notify: true });
      await found(() => hook.requests[0]);
      const stopping = server.stop();
      hook.release(); // it answers while the server stops
      await stopping;
      const again = await startTestApp(FAST, server.dataDir);
      try {
        const [delivery] = await again.store.notifications.deliveriesFor("integration", [integrationId]);
        expect(delivery).toMatchObject({ status: "sent", attempts: 1 });
        // Anything still pending would be sent first at the start; the marker comes after it.
        await post(again, "/v1/log", { project: "default", channel: "c", event: "Marker", notify: true });
        await found(() => hook.requests.find((r) => JSON.parse(r.body).title === "Marker"));
        expect(hook.requests.map((r) => JSON.parse(r.body).title)).toEqual(["Slow", "Marker"]);
      } finally {
        await again.close();
      }
    } finally {
      hook.stop();
    }
  });

  test("a send still in flight after the grace is let go unrecorded, and sent again with the same delivery id after a restart", async () => {
    const { server, hook, integrationId } = await hooked();
    try {
      hook.hold();
      await post(server, "/v1/log", { project: "default", channel: "c", event: "Never answered", notify: true });
      await found(() => hook.requests[0]);
      await server.stop(); // after a 3 s grace: had it waited for the send's 10 s timeout, an attempt would be recorded
      hook.release();
      const again = await startTestApp(FAST, server.dataDir);
      try {
        await eventually(() => expect(hook.requests).toHaveLength(2));
        const [first, second] = deliveryIds(hook);
        expect(second).toEqual(first!);
        expect(first![0]).toBe(first![1]);
        const [delivery] = await again.store.notifications.deliveriesFor("integration", [integrationId]);
        await eventually(async () =>
          expect(await again.store.notifications.delivery(delivery!.id)).toMatchObject({ status: "sent", attempts: 1 }),
        );
        // The send that was let go left no attempt behind: only the one that went through.
        expect((await again.store.notifications.attemptsOf(delivery!.id)).map((a) => a.status)).toEqual([200]);
      } finally {
        await again.close();
      }
    } finally {
      hook.stop();
    }
  });
});
