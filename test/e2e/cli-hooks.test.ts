// `signalboard hook` as an operator runs it beside a running server: add prints the URL to paste
// last, a delivery signed as GitHub signs it is taken at that URL, list shows the hook without its
// secret, and remove makes the URL answer 404.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { rmSync } from "node:fs";
import { tempDir } from "../helpers.ts";
import { PROGRAM, lastLine, run, type ServerProcess, serve } from "./process.ts";

let dataDir: string;
let server: ServerProcess;

beforeAll(async () => {
  dataDir = tempDir();
  server = await serve(PROGRAM, ["--data-dir", dataDir]);
});
afterAll(async () => {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test("hook add, list and remove", async () => {
  const at = ["--data-dir", dataDir];
  const secret = "gh-secret-of-the-cli";
  const added = await run(PROGRAM, [
    "hook",
    "add",
    "--project",
    "default",
    "--kind",
    "github",
    "--name",
    "Repo",
    "--secret",
    secret,
    ...at,
  ]);
  expect(added.stderr).toBe("");
  expect(added.code).toBe(0);
  const url = new URL(lastLine(added.stdout));
  expect(url.pathname).toMatch(/^\/hooks\/[A-Za-z0-9_-]{24}$/);
  const id = url.pathname.split("/")[2]!;
  const body = JSON.stringify({
    ref: "refs/heads/main",
    repository: { full_name: "acme/shop" },
    sender: { login: "octocat" },
  });
  const deliver = () =>
    fetch(`${server.url}${url.pathname}`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "X-GitHub-Event": "push",
        "X-GitHub-Delivery": crypto.randomUUID(),
        "X-Hub-Signature-256": `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`,
      },
      body,
    });
  expect((await deliver()).status).toBe(200);
  const listed = await run(PROGRAM, ["hook", "list", "--project", "default", ...at]);
  expect(listed.code).toBe(0);
  expect(listed.stdout).toContain(id);
  expect(listed.stdout).toContain("GitHub");
  expect(listed.stdout).not.toContain(secret);
  const refused = await run(PROGRAM, [
    "hook",
    "add",
    "--project",
    "default",
    "--kind",
    "stripe",
    "--name",
    "No secret",
    ...at,
  ]);
  expect(refused.code).not.toBe(0);
  expect(refused.stderr).toContain("secret");
  const removed = await run(PROGRAM, ["hook", "remove", id, ...at]);
  expect(removed.code).toBe(0);
  expect((await deliver()).status).toBe(404);
});
