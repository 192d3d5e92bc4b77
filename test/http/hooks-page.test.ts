// The inbound webhooks' section of a project's settings, in-process: an admin makes a hook from the
// form (a missing secret said beside its field, nothing made), sees its URL with a copy button and
// never its secret, and deletes it; a delivery to the URL shown is taken. A member, who may not make
// public tokens, may not make or delete hooks either, nor see their URLs (each a way to write in).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { type Agent, signedIn, startTestApp, type TestApp } from "../helpers.ts";

let server: TestApp;
let admin: Agent;
let member: Agent;

beforeAll(async () => {
  server = await startTestApp({ "base-url": "https://sb.example.com" });
  await server.services.projects.create("shop");
  await server.services.accounts.createUser({ username: "admin", password: "admin password 1" }, "admin");
  admin = await signedIn(server, { username: "admin", password: "admin password 1" });
  await server.services.accounts.createUser({ username: "member", password: "member password 1" }, "member");
  member = await signedIn(server, { username: "member", password: "member password 1" });
});
afterAll(() => server.close());

test("an admin makes, sees and deletes a hook in the project's settings", async () => {
  const settings = await (await admin.request("/p/shop/settings")).text();
  expect(settings).toContain('data-testid="no-hooks"');
  const token = await admin.csrf();
  const add = (form: Record<string, string>) =>
    admin.request("/p/shop/hooks", { method: "POST", form: { _csrf: token, ...form } });
  const refused = await add({ kind: "stripe", name: "Payments", secret: "", channel: "", config: "" });
  expect(refused.status).toBe(422);
  expect(await refused.text()).toContain("needs the secret");
  expect(await server.services.hooks.list("shop")).toEqual([]);
  const made = await add({ kind: "stripe", name: "Payments", secret: "whsec_from_form", channel: "", config: "" });
  expect(made.status).toBe(200);
  const section = await made.text();
  const [hook] = await server.services.hooks.list("shop");
  expect(section).toContain(`value="https://sb.example.com/hooks/${hook!.id}"`);
  expect(section).toContain('x-data="copyButton"');
  expect(section).not.toContain("whsec_from_form");
  expect(await (await admin.request("/p/shop/settings")).text()).toContain(`/hooks/${hook!.id}`);
  const body = JSON.stringify({
    id: "evt_page",
    type: "customer.created",
    data: { object: { object: "customer", id: "cus_1" } },
    livemode: false,
  });
  const t = Math.floor(Date.now() / 1000);
  const signature = createHmac("sha256", "whsec_from_form").update(`${t}.${body}`).digest("hex");
  const delivered = await server.fetch(`/hooks/${hook!.id}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "Stripe-Signature": `t=${t},v1=${signature}` },
    body,
  });
  expect(delivered.status).toBe(200);
  const gone = await admin.request(`/p/shop/hooks/${hook!.id}/delete`, { method: "POST", form: { _csrf: token } });
  expect(gone.status).toBe(200);
  expect(await gone.text()).toContain('data-testid="no-hooks"');
  expect(await server.services.hooks.list("shop")).toEqual([]);
});

test("a member may not make or delete a hook, and sees the hooks without their URLs", async () => {
  const hook = await server.services.hooks.create({ project: "shop", kind: "alertmanager", name: "Open door" });
  const settings = await (await member.request("/p/shop/settings")).text();
  expect(settings).toContain("Open door");
  expect(settings).not.toContain(`/hooks/${hook.id}`);
  expect(settings).not.toContain('data-testid="add-hook"');
  expect(settings).toContain('data-testid="hooks-admins"');
  const token = await member.csrf();
  const add = await member.request("/p/shop/hooks", {
    method: "POST",
    form: { _csrf: token, kind: "alertmanager", name: "Mine", secret: "", channel: "", config: "" },
  });
  expect(add.status).toBe(403);
  const remove = await member.request(`/p/shop/hooks/${hook.id}/delete`, { method: "POST", form: { _csrf: token } });
  expect(remove.status).toBe(403);
  expect((await server.services.hooks.list("shop")).map((h) => h.name)).toEqual(["Open door"]);
  await server.services.hooks.remove(hook.id);
});
