// Inbound webhooks as someone who is not meant to use them sees them: a secret on a kind whose
// service signs nothing (it would read "signed" while anyone with the URL may post), an issue's
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

test("an Alertmanager hook takes no secret: nothing would check it, and it would show as signed", async () => {
  const made = await call(server, {
    path: "/v1/hooks",
    body: { project: "shop", kind: "alertmanager", name: "Alerts", secret: "looks-protected" },
  });
  expect(made.status).toBe(400);
  expect(made.json.validation.body[0].path).toBe("secret");
  expect(made.json.message).toContain("takes no secret");
  expect(await server.services.hooks.list("shop")).toEqual([]);

  const plain = await call(server, { path: "/v1/hooks", body: { project: "shop", kind: "alertmanager", name: "A" } });
  expect(plain.status).toBe(200);
  const id = plain.json.hook.id as string;
  const patched = await call(server, { method: "PATCH", path: `/v1/hooks/${id}`, body: { secret: "later" } });
  expect(patched.status).toBe(400);
  expect(patched.json.validation.body[0].path).toBe("secret");
  expect((await server.services.hooks.get(id)).secret).toBeNull();
  await server.services.hooks.remove(id);
});
