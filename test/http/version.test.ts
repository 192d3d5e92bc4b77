// One version everywhere an operator looks for it: /healthz, the dashboard's foot, and CHANGELOG.md,
// whose newest entry is the version package.json gives. Runs on PostgreSQL too.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import pkg from "../../package.json";
import { call, signedIn, startTestApp, type TestApp } from "../helpers.ts";

let server: TestApp;
beforeAll(async () => {
  server = await startTestApp();
  await server.services.accounts.createUser({ username: "owner", password: "correct horse battery staple" }, "owner");
});
afterAll(() => server.close());

test("/healthz and /readyz answer with the version", async () => {
  expect((await call(server, { path: "/healthz", token: null })).json).toMatchObject({
    status: "ok",
    version: pkg.version,
  });
  expect((await call(server, { path: "/readyz", token: null })).json).toMatchObject({
    status: "ready",
    version: pkg.version,
  });
});

test("every dashboard page shows the version at its foot, once signed in", async () => {
  const agent = await signedIn(server, { username: "owner", password: "correct horse battery staple" });
  for (const path of ["/p/default", "/p/default/settings", "/settings/api"]) {
    const page = await (await agent.request(path)).text();
    expect(page, path).toMatch(
      new RegExp(`<footer class="app-foot">Signalboard ${pkg.version.replaceAll(".", "\\.")}</footer>\\s*</main>`),
    );
  }
  // The sign-in page does not need it.
  expect(await (await server.fetch(`/login`)).text()).not.toContain("app-foot");
});

test("CHANGELOG.md begins with this version", () => {
  const changelog = readFileSync(join(import.meta.dir, "../../CHANGELOG.md"), "utf8");
  expect(/^## (\S+)/m.exec(changelog)?.[1]).toBe(pkg.version);
});
