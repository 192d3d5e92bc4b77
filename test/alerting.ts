// What the alert tests start with: an in-process app whose rounds run only when a test asks (the
// interval is an hour on the test's clock), project "ops" with a webhook to a local receiver, so
// each notice's delivery can be seen.
import { expect } from "bun:test";
import { startTestApp, type TestApp } from "./helpers.ts";
import { type Receiver, startReceiver } from "./receiver.ts";

export async function startAlerting(): Promise<{ server: TestApp; hook: Receiver; close(): Promise<void> }> {
  const server = await startTestApp({
    "alert-interval": "3600",
    "notify-retry-base": "100ms",
    "outbound-allow": "127.0.0.1", // the test receiver
  });
  await server.services.projects.create("ops");
  const hook = await startReceiver();
  await server.services.integrations.create({
    project: "ops",
    kind: "webhook",
    name: "pager",
    config: { url: hook.url },
  });
  return {
    server,
    hook,
    async close() {
      await server.close();
      hook.stop();
    },
  };
}

/** An answer to `body` that is a 400 naming `field` among its problems. */
export function expectRefused(res: { status: number; json: any }, body: unknown, field: string): void {
  expect({ body, status: res.status, error: res.json.error }).toEqual({ body, status: 400, error: "validation_error" });
  expect({ body, paths: res.json.validation.body.map((i: { path: string }) => i.path) }).toMatchObject({
    body,
    paths: expect.arrayContaining([field]),
  });
}
