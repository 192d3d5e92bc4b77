// LogSnag's insights: a boolean value is kept as a boolean; $inc may be negative and starts a
// missing insight at 0; what cannot be incremented is refused and left as it was.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { call, post, signedIn, startTestApp, type TestApp } from "../helpers.ts";

const OWNER = { username: "owner", password: "correct horse battery staple" };
let server: TestApp;
beforeAll(async () => {
  server = await startTestApp();
  await server.services.accounts.createUser(OWNER, "owner");
});
afterAll(() => server.close());

const patch = (title: string, inc: number) =>
  call(server, { method: "PATCH", path: "/v1/insight", body: { project: "default", title, value: { $inc: inc } } });

describe("POST /v1/insight with a boolean", () => {
  test("is stored and answered as a boolean, in the metrics list and the history", async () => {
    const set = await post(server, "/v1/insight", { project: "default", title: "Maintenance", value: true });
    expect(set.status).toBe(200);
    expect(set.json.value).toBe(true);
    const list = await call(server, { path: "/v1/metrics?project=default" });
    expect(list.json.metrics.find((m: { title: string }) => m.title === "Maintenance").value).toBe(true);
    await post(server, "/v1/insight", { project: "default", title: "Maintenance", value: false });
    const history = await call(server, { path: "/v1/metrics/history?project=default&title=Maintenance" });
    expect(history.json.metric.value).toBe(false);
    expect(history.json.points.at(-1).value).toBe(false);
  });

  test("shows as Yes or No on the project page", async () => {
    await post(server, "/v1/insight", { project: "default", title: "Online", value: true });
    await post(server, "/v1/insight", { project: "default", title: "Degraded", value: false });
    const agent = await signedIn(server, OWNER);
    const page = await (await agent.request("/p/default")).text();
    expect(page).toMatch(/<span class="metric-value flag yes"[^>]*>Yes<\/span>/);
    expect(page).toMatch(/<span class="metric-value flag no"[^>]*>No<\/span>/);
  });

  test("cannot be incremented: a 400 naming value, and the boolean is kept", async () => {
    await post(server, "/v1/insight", { project: "default", title: "Flag", value: true });
    const refused = await patch("Flag", 1);
    expect(refused.status).toBe(400);
    expect(refused.json.validation.body[0].path).toBe("value");
    expect(refused.json.message).toMatch(/holds a boolean/);
    const list = await call(server, { path: "/v1/metrics?project=default" });
    expect(list.json.metrics.find((m: { title: string }) => m.title === "Flag").value).toBe(true);
  });

  test("other values are still refused with a message that names the three kinds", async () => {
    const refused = await post(server, "/v1/insight", { project: "default", title: "Bad", value: { nested: 1 } });
    expect(refused.status).toBe(400);
    expect(refused.json.validation.body[0].message).toMatch(/a number, a string or a boolean/);
  });
});

describe("PATCH /v1/insight", () => {
  test("a missing insight starts at 0, and $inc may be negative or a fraction", async () => {
    expect((await patch("Queue depth", -3)).json.value).toBe(-3);
    expect((await patch("Queue depth", 10)).json.value).toBe(7);
    expect((await patch("Queue depth", -0.5)).json.value).toBe(6.5);
  });
});

describe("POST /v1/group", () => {
  test("without user_id sets the group's traits only", async () => {
    const answer = await post(server, "/v1/group", {
      project: "default",
      group_id: "acme",
      properties: { tier: "gold" },
    });
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ success: true, statusCode: 200 });
  });
});
