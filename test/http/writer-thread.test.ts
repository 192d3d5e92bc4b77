// SIGNALBOARD_WRITER=thread: ingest's writes run on a writer thread. The API answers exactly as
// with the inline writer: results, errors with their messages, idempotency, notifications, live
// delivery; and a stop commits what was acknowledged.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { call, eventually, openSse, post, startTestServer, type TestServer } from "../helpers.ts";
import { startReceiver } from "../receiver.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ writer: "thread", "outbound-allow": "127.0.0.1" }); // a receiver on 127.0.0.1
  await server.services.projects.create("app");
});
afterAll(() => server.close());

describe("with the writer thread", () => {
  test("events, metrics and traits are stored and answered as with the inline writer", async () => {
    const stream = await openSse(`${server.url}/v1/stream?project=app`, { Authorization: `Bearer ${server.token}` });
    const sent = await post(server, "/v1/log", {
      project: "app",
      channel: "threaded",
      event: "On a thread",
      tags: { plan: "pro" },
    });
    expect(sent.status).toBe(200);
    expect(sent.json).toMatchObject({
      success: true,
      project: "app",
      channel: "threaded",
      event: "On a thread",
      tags: { plan: "pro" },
    });
    const [frame] = await stream.waitFor(1);
    expect(JSON.parse(frame!.data).id).toBe(sent.json.id);
    stream.close();
    expect((await post(server, "/send-metric", { project: "app", title: "Count", value: 1254 })).status).toBe(200);
    const inc = await call(server, {
      method: "PATCH",
      path: "/v1/insight",
      body: { project: "app", title: "Count", value: { $inc: 5 } },
    });
    expect(inc.json.value).toBe(1259);
    expect(
      (await post(server, "/v1/identify", { project: "app", user_id: "u1", properties: { plan: "pro" } })).status,
    ).toBe(200);
    expect((await post(server, "/v1/group", { project: "app", group_id: "acme", user_id: "u1" })).status).toBe(200);
    const listed = await call(server, { path: "/v1/events?project=app&channel=threaded" });
    expect(listed.json.events[0].event).toBe("On a thread");
  });

  test("errors raised in the writer come back whole: status, code, message, fields", async () => {
    await post(server, "/send-metric", { project: "app", title: "Status", value: "online" });
    const res = await post(server, "/send-metric", { project: "app", title: "Status", value: 1, increment: true });
    expect(res.status).toBe(400);
    expect(res.json.error).toBe("validation_error");
    expect(res.json.validation.body[0]).toMatchObject({ path: "value", type: "not_incrementable" });
    expect(res.json.message).toContain("holds text");
    const missing = await post(server, "/v1/log", { project: "nope", channel: "c", event: "e" });
    expect(missing.status).toBe(404);
    expect(missing.json.message).toContain('Project "nope" does not exist');
  });

  test("an Idempotency-Key replays the first answer and refuses a different request", async () => {
    const body = { project: "app", channel: "keyed", event: "Once" };
    const first = await call(server, { path: "/v1/log", body, headers: { "Idempotency-Key": "k-thread" } });
    const again = await call(server, { path: "/v1/log", body, headers: { "Idempotency-Key": "k-thread" } });
    expect(again.text).toBe(first.text);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const other = await call(server, {
      path: "/v1/log",
      body: { ...body, event: "Twice" },
      headers: { "Idempotency-Key": "k-thread" },
    });
    expect(other.status).toBe(422);
  });

  test("a notify event is queued with it and delivered", async () => {
    const hook = await startReceiver();
    try {
      await server.services.integrations.create({
        project: "app",
        kind: "webhook",
        name: "hook",
        config: { url: `${hook.url}/hook` },
      });
      await post(server, "/v1/log", { project: "app", channel: "alerts", event: "Ring", notify: true });
      await eventually(() => expect(hook.requests.some((r) => JSON.parse(r.body).title === "Ring")).toBe(true));
    } finally {
      hook.stop();
    }
  });

  test("events sent at once are all stored, each once", async () => {
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        post(server, "/v1/log", { project: "app", channel: "burst", event: `b${i}` }),
      ),
    );
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(new Set(answers.map((a) => a.json.id)).size).toBe(200);
    expect(await server.services.projects.eventCount("app", "burst")).toBe(200);
  });
});

test("a server stopped under load keeps every event it acknowledged", async () => {
  const stopping = await startTestServer({ writer: "thread" });
  const dataDir = stopping.dataDir;
  const acked: number[] = [];
  let sending = true;
  const senders = Array.from({ length: 8 }, async (_, n) => {
    for (let i = 0; sending; i++) {
      const res = await fetch(`${stopping.url}/v1/log`, {
        method: "POST",
        headers: { Authorization: `Bearer ${stopping.token}`, "Content-Type": "application/json" },
        body: JSON.stringify({ project: "default", channel: "stop", event: `s${n}-${i}` }),
      }).catch(() => null);
      if (res?.status === 200) acked.push(((await res.json()) as { id: number }).id);
      else sending = false;
    }
  });
  // Stopped once the load is real: some answered, more in flight.
  await eventually(() => expect(acked.length).toBeGreaterThanOrEqual(200));
  await stopping.stop();
  sending = false;
  await Promise.all(senders);
  const reopened = await startTestServer({}, dataDir);
  try {
    const count = await reopened.services.projects.eventCount("default", "stop");
    expect(acked.length).toBeGreaterThan(0);
    expect(count).toBeGreaterThanOrEqual(acked.length);
    for (const id of acked) expect(await reopened.store.events.findById(id)).not.toBeNull();
  } finally {
    await reopened.close();
  }
});
