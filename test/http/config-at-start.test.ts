// The configuration a running server uses is settled before anything is wired and never changes
// after: with --port 0 the port it got is the one every link names.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eventually, post, startTestServer, type TestServer } from "../helpers.ts";
import { startReceiver } from "../receiver.ts";

let server: TestServer;
let hook: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  server = await startTestServer({ "outbound-allow": "127.0.0.1" }); // --port 0; the receiver is on 127.0.0.1
  hook = await startReceiver();
});
afterAll(async () => {
  hook.stop();
  await server.close();
});

test("with --port 0, notification links name the port the server got, not :0", async () => {
  const port = new URL(server.url).port;
  expect(port).not.toBe("0");
  await server.services.integrations.create({
    project: "default",
    kind: "webhook",
    name: "links",
    config: { url: `${hook.url}/hook` },
  });
  const sent = await post(server, "/v1/log", { project: "default", channel: "links", event: "Linked", notify: true });
  const request = await eventually(() => {
    const found = hook.requests.find((r) => r.path === "/hook");
    if (!found) throw new Error("not delivered yet");
    return found;
  }, 5000);
  const payload = JSON.parse(request.body);
  expect(payload.url).toBe(`http://localhost:${port}/p/default/events/${sent.json.id}`);
  expect(server.services.config.baseUrl).toBe(`http://localhost:${port}`);
  expect(server.services.config.port).toBe(Number(port));
});

test("the configuration is frozen once the server runs", () => {
  expect(Object.isFrozen(server.services.config)).toBe(true);
  expect(() => {
    (server.services.config as { baseUrl: string }).baseUrl = "http://elsewhere";
  }).toThrow();
});
