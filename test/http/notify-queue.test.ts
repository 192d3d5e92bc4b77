// The delivery queue when a receiver misbehaves: one that never answers must not hold up anyone
// else, and a server stopped with sends in flight must neither hang nor lose them.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eventually, found, post, startTestServer, type TestServer } from "../helpers.ts";
import { type PushService, startPushService } from "../push-service.ts";
import { startReceiver } from "../receiver.ts";

let push: PushService;
beforeAll(async () => {
  push = await startPushService();
});
afterAll(() => push.stop());

const FAST = { "notify-retry-base": "100ms" };

async function phone(server: TestServer) {
  const user = await server.deps.accounts.createUser({ username: `u${Math.random().toString(36).slice(2, 8)}`, password: "password 123456" }, "owner");
  const sub = push.subscribe();
  await server.deps.devices.register(user, { endpoint: sub.endpoint, keys: sub.keys, deviceName: "Phone" });
  return sub;
}

describe("a receiver that never answers", () => {
  test("holds two sends at most, and devices and other integrations are served meanwhile", async () => {
    const server = await startTestServer(FAST);
    const stuck = await startReceiver();
    const fine = await startReceiver();
    stuck.hold();
    try {
      await server.deps.projects.create("stuck");
      await server.deps.integrations.create("stuck", { kind: "webhook", name: "Hangs", url: `${stuck.url}/hook` });
      for (let i = 0; i < 10; i++) await post(server, "/v1/log", { project: "stuck", channel: "c", event: `Stuck ${i}`, notify: true });
      await found(() => stuck.requests[0]);

      // More than the notifier's eight slots wait for the receiver that hangs; a device and another
      // integration still hear at once, well before a hung send's 10 s timeout.
      const device = await phone(server);
      await server.deps.integrations.create("default", { kind: "webhook", name: "Answers", url: `${fine.url}/hook` });
      await post(server, "/v1/log", { project: "default", channel: "c", event: "Meanwhile", notify: true });
      await eventually(() => expect(push.messagesFor(device.id).map((m) => m.title)).toEqual(["Meanwhile"]), 2000);
      await found(() => fine.requests.find((r) => JSON.parse(r.body).title === "Meanwhile"), 2000);
      expect(stuck.requests.length).toBe(2);

      // Once it answers, the rest go through.
      stuck.release();
      await eventually(() => expect(stuck.requests.map((r) => JSON.parse(r.body).title).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `Stuck ${i}`)), 5000);
    } finally {
      stuck.stop();
      fine.stop();
      await server.close();
    }
  });
});
