// LogSnag's official JavaScript clients, unchanged, with only their base URL redirected to us.
// Their base URL is a constant, so we redirect it the way README.md tells users to.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { LogSnag as NodeClient } from "@logsnag/node";
import { LogSnag as LegacyClient } from "logsnag";
import { ENDPOINTS } from "logsnag/dist/constants";
import { call, startTestServer, type TestServer } from "../helpers.ts";

let server: TestServer;
const realFetch = globalThis.fetch;

beforeAll(async () => {
  server = await startTestServer();
  await server.services.projects.create("my-saas");
  // README: "Point an existing LogSnag client at Signalboard".
  globalThis.fetch = ((input: string | URL | Request, init?: RequestInit) =>
    realFetch(
      typeof input === "string" ? input.replace("https://api.logsnag.com", server.url) : input,
      init,
    )) as typeof fetch;
  for (const key of Object.keys(ENDPOINTS) as (keyof typeof ENDPOINTS)[])
    ENDPOINTS[key] = ENDPOINTS[key].replace("https://api.logsnag.com", server.url);
});
afterAll(async () => {
  globalThis.fetch = realFetch;
  await server.close();
});

for (const [name, Client] of [
  ["@logsnag/node", NodeClient],
  ["logsnag", LegacyClient],
] as const) {
  describe(name, () => {
    const client = () => new Client({ token: server.token, project: "my-saas" });

    test("track, identify, group and insights succeed", async () => {
      const c = client();
      expect(
        await c.track({
          channel: "payments",
          event: `New subscription via ${name}`,
          description: "Pro plan",
          icon: "💰",
          notify: true,
          tags: { plan: "pro", seats: 3, trial: false },
          user_id: "user-1",
        }),
      ).toBe(true);
      expect(
        await c.track({
          channel: "payments",
          event: "Historical",
          timestamp: new Date(Date.now() - 3600_000),
        } as never),
      ).toBe(true);
      expect(await c.identify({ user_id: "user-1", properties: { email: "a@example.com", plan: "pro" } })).toBe(true);
      expect(await c.group({ user_id: "user-1", group_id: "acme", properties: { name: "Acme" } })).toBe(true);
      expect(await c.insight.track({ title: "Subscribers", value: 41, icon: "👥" })).toBe(true);
      expect(await c.insight.increment({ title: "Subscribers", value: 1, icon: "👥" })).toBe(true);

      const events = await call(server, { path: "/v1/events?project=my-saas&channel=payments" });
      expect(events.json.events[0]).toMatchObject({
        event: `New subscription via ${name}`,
        tags: { plan: "pro", seats: 3, trial: false },
        user_id: "user-1",
        notify: true,
      });
      const historical = events.json.events.find((e: { event: string }) => e.event === "Historical");
      expect(historical.historical).toBe(true);
      expect(Math.abs(historical.timestamp - (Date.now() / 1000 - 3600))).toBeLessThan(60);
      const metrics = await call(server, { path: "/v1/metrics?project=my-saas" });
      expect(metrics.json.metrics.find((m: { title: string }) => m.title === "Subscribers").value).toBe(42);
    });

    test("a validation error surfaces our field messages in the client's error", async () => {
      const error = await client()
        .track({ channel: "Bad Channel", event: "x", tags: { Plan: "pro" } as Record<string, string> })
        .catch((e: Error) => e);
      expect(error).toBeInstanceOf(Error);
      expect(String(error)).toContain("[LogSnag] Failed to publish");
      expect(String(error)).toContain("channel: must be 1-64 lowercase letters");
      expect(String(error)).toContain("tags.Plan");
    });

    test("an unknown project or a bad token still gives the client a JSON body to read", async () => {
      const missing = await new Client({ token: server.token, project: "nope" })
        .track({ channel: "c", event: "e" })
        .catch((e: Error) => e);
      expect(missing).toBeInstanceOf(Error);
      const unauthorized = await new Client({ token: "sb_wrong", project: "my-saas" })
        .track({ channel: "c", event: "e" })
        .catch((e: Error) => e);
      expect(unauthorized).toBeInstanceOf(Error);
      expect(String(unauthorized)).toContain("[LogSnag]");
    });
  });
}

describe("a burst from many clients, with the default settings", () => {
  test("50 @logsnag/node clients sending 2,000 events at once lose none (the client does not retry a 429)", async () => {
    const clients = Array.from({ length: 50 }, () => new NodeClient({ token: server.token, project: "my-saas" }));
    const sent = await Promise.all(
      clients.flatMap((c, i) =>
        Array.from({ length: 40 }, (_, j) =>
          c.track({ channel: "burst", event: `burst ${i}-${j}` }).then(
            () => true,
            () => false,
          ),
        ),
      ),
    );
    expect(sent.filter((ok) => !ok).length).toBe(0);
    const stored = await call(server, { path: "/v1/events?project=my-saas&channel=burst&limit=1" });
    expect(stored.status).toBe(200);
    expect(await server.services.projects.eventCount("my-saas", "burst")).toBe(2000);
  });
});
