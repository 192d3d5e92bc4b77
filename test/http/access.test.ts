// Access ends when it is taken away, for connections that stay open too: a live stream held by a
// token or a dashboard session closes within a second of the token's revocation, the member's
// removal, a sign-out, or the session's expiry, from this process or from the command line.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eventually, openSse, post, signedIn, startTestServer, storeArgs, type TestServer } from "../helpers.ts";
import { PROGRAM, run } from "../e2e/process.ts";

const OWNER = { username: "owner", password: "correct horse battery staple" };
const MEMBER = { username: "member", password: "another good passphrase" };

let server: TestServer;
beforeAll(async () => {
  // outbound-allow: its integrations point at a closed port on this machine.
  server = await startTestServer({ "outbound-allow": "127.0.0.1" });
  await server.services.accounts.createUser(OWNER, "owner");
});
afterAll(() => server.close());

/** Opens a stream and checks it delivers; resolves to it once it is live. */
async function liveStream(url: string, headers: Record<string, string>) {
  const stream = await openSse(url, headers);
  expect(stream.response.status).toBe(200);
  return stream;
}

const ends = (stream: { ended: boolean }) => eventually(() => expect(stream.ended).toBe(true));

describe("a token's stream", () => {
  test("ends within a second of the token being revoked in the dashboard or API service", async () => {
    const { token, info } = await server.services.tokens.create({ name: "reader" });
    const stream = await liveStream(`${server.url}/v1/stream`, { Authorization: `Bearer ${token}` });
    await post(server, "/v1/log", { project: "default", channel: "a", event: "before" });
    await stream.waitFor(1);
    await server.services.tokens.revoke(String(info.id));
    await ends(stream);
    await post(server, "/v1/log", { project: "default", channel: "a", event: "after" });
    expect(stream.frames.map((f) => JSON.parse(f.data).event)).toEqual(["before"]);
  });

  test("ends within a second of the token being revoked from the command line (another process)", async () => {
    const { token, info } = await server.services.tokens.create({ name: "reader-cli" });
    const stream = await liveStream(`${server.url}/v1/stream`, { Authorization: `Bearer ${token}` });
    const revoked = await run(PROGRAM, ["token", "revoke", String(info.id), ...storeArgs(server)]);
    expect(revoked.code).toBe(0);
    await ends(stream);
  });

  test("a stream of another token stays open", async () => {
    const keep = (await server.services.tokens.create({ name: "keeper" })).token;
    const gone = await server.services.tokens.create({ name: "gone" });
    const kept = await liveStream(`${server.url}/v1/stream`, { Authorization: `Bearer ${keep}` });
    const closing = await liveStream(`${server.url}/v1/stream`, { Authorization: `Bearer ${gone.token}` });
    await server.services.tokens.revoke(String(gone.info.id));
    await ends(closing);
    const sent = await post(server, "/v1/log", { project: "default", channel: "a", event: "still here" });
    const frames = await kept.waitFor(1);
    expect(JSON.parse(frames.at(-1)!.data).id).toBe(sent.json.id);
    kept.close();
  });
});

describe("a dashboard's stream", () => {
  async function member(name: string) {
    const created = await server.services.accounts.createUser({ username: name, password: MEMBER.password }, "admin");
    const agent = await signedIn(server, { username: name, password: MEMBER.password });
    const stream = await liveStream(`${server.url}/p/default/live`, { Cookie: agent.cookieHeader() });
    return { user: created, agent, stream };
  }

  test("ends within a second of the member being removed", async () => {
    const owner = (await server.services.accounts.list()).find((u) => u.role === "owner")!;
    const m = await member("removed");
    await server.services.members.remove(m.user.id, owner);
    await ends(m.stream);
  });

  test("ends within a second of signing out", async () => {
    const m = await member("leaving");
    const csrf = await m.agent.csrf();
    expect((await m.agent.request("/logout", { method: "POST", form: { _csrf: csrf } })).status).toBe(303);
    await ends(m.stream);
  });

  test("ends within a second of the password being reset from the command line (which signs out everywhere)", async () => {
    const m = await member("reset");
    const reset = await run(PROGRAM, ["user", "reset-password", "reset", ...storeArgs(server)]);
    expect(reset.code).toBe(0);
    await ends(m.stream);
  });

  test("ends within a second of its session expiring", async () => {
    const m = await member("expiring");
    const session = m.agent.cookies.get("sb_session")!;
    const expiresAt = (await server.services.accounts.session(decodeURIComponent(session)))!.expiresAt;
    await server.clock.advance(expiresAt - server.clock.now() - 60_000); // a minute before: it stays open
    expect(m.stream.ended).toBe(false);
    await server.clock.advance(60_000);
    await ends(m.stream);
  });
});

describe("tokens and the members who made them", () => {
  /** A member signed in, with a token they created in Settings → API. */
  async function memberWithToken(name: string) {
    await server.services.accounts.createUser({ username: name, password: MEMBER.password }, "admin");
    const agent = await signedIn(server, { username: name, password: MEMBER.password });
    const csrf = await agent.csrf();
    const created = await agent.request("/settings/api/tokens", {
      method: "POST",
      headers: { "X-CSRF-Token": csrf },
      form: { name: `${name}'s script`, kind: "full" },
    });
    expect(created.status).toBe(200);
    const token = /value="(sb_[A-Za-z0-9]+)"/.exec(await created.text())![1]!;
    return { agent, token, user: (await server.services.accounts.list()).find((u) => u.username === name)! };
  }

  async function owner() {
    const agent = await signedIn(server, OWNER);
    return { agent, csrf: await agent.csrf() };
  }

  test("a token records who created it: the member in Settings → API and token list, none from the command line", async () => {
    const { token } = await memberWithToken("maker");
    const info = (await server.services.tokens.list()).find((t) => t.name === "maker's script")!;
    expect(info.createdBy).toBe("maker");
    expect(token.startsWith("sb_")).toBe(true);
    const { agent } = await owner();
    const page = await (await agent.request("/settings/api")).text();
    expect(page).toContain("by maker");
    const cli = await run(PROGRAM, ["token", "create", "--name", "from-shell", ...storeArgs(server)]);
    expect(cli.code).toBe(0);
    const list = await run(PROGRAM, ["token", "list", ...storeArgs(server)]);
    expect(list.stdout).toContain("CREATED BY");
    expect(list.stdout).toMatch(/maker's script.*maker/);
    expect(list.stdout).toMatch(/from-shell.*command line/);
  });

  test("removing a member revokes the tokens they made, by default, and streams held by them end", async () => {
    const m = await memberWithToken("departing");
    const stream = await liveStream(`${server.url}/v1/stream`, { Authorization: `Bearer ${m.token}` });
    const { agent, csrf } = await owner();
    const dialog = await (await agent.request(`/settings/members/${m.user.id}/remove`)).text();
    expect(dialog).toContain("1 API token they created");
    expect(dialog).toMatch(/value="revoke" checked/);
    const removed = await agent.request(`/settings/members/${m.user.id}/remove`, {
      method: "POST",
      headers: { "X-CSRF-Token": csrf },
      form: {},
    });
    expect([200, 303]).toContain(removed.status);
    await ends(stream);
    expect((await post(server, "/v1/log", { project: "default", channel: "a", event: "x" }, m.token)).status).toBe(401);
  });

  test("removing a member can keep their tokens working", async () => {
    const m = await memberWithToken("handover");
    const { agent, csrf } = await owner();
    await agent.request(`/settings/members/${m.user.id}/remove`, {
      method: "POST",
      headers: { "X-CSRF-Token": csrf },
      form: { tokens: "keep" },
    });
    expect((await server.services.accounts.list()).some((u) => u.username === "handover")).toBe(false);
    expect((await post(server, "/v1/log", { project: "default", channel: "a", event: "kept" }, m.token)).status).toBe(
      200,
    );
    expect((await server.services.tokens.list()).find((t) => t.name === "handover's script")!.createdBy).toBe(
      "handover",
    );
  });
});

describe("a request still arriving when access is taken away", () => {
  /** Sends the head and the first bytes of a request, runs `meanwhile`, then the rest; returns the answer's status line. */
  async function slowRequest(head: string, body: string, meanwhile: () => Promise<unknown>): Promise<string> {
    const port = Number(new URL(server.url).port);
    let received = "";
    let closed = false;
    const socket = await Bun.connect({
      hostname: "127.0.0.1",
      port,
      socket: {
        data(_s, d) {
          received += d.toString();
        },
        close() {
          closed = true;
        },
      },
    });
    const pending = server.app.server!.pendingRequests; // open streams among them
    socket.write(`${head}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 5)}`);
    // The server has the request, and is waiting for the rest of its body.
    await eventually(() => expect(server.app.server!.pendingRequests).toBeGreaterThan(pending));
    await meanwhile();
    socket.write(body.slice(5));
    await eventually(() => expect(received.includes("\r\n\r\n") || closed).toBe(true));
    socket.end();
    return received.split("\r\n")[0] ?? "";
  }

  test("an event whose token is revoked while its body arrives is refused (401) and not stored", async () => {
    const { token, info } = await server.services.tokens.create({ name: "slow-ingest" });
    const body = JSON.stringify({ project: "default", channel: "slow", event: "after revocation" });
    const status = await slowRequest(
      `POST /v1/log HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n`,
      body,
      async () => await server.services.tokens.revoke(String(info.id)),
    );
    expect(status).toContain("401");
    const stored = await server.services.feed.listEvents({ project: "default", q: "revocation" });
    expect(stored.events.some((e) => e.name === "after revocation")).toBe(false);
  });

  test("a form a member is still sending when removed does nothing: no token is created", async () => {
    await server.services.accounts.createUser({ username: "slowpoke", password: MEMBER.password }, "admin");
    const agent = await signedIn(server, { username: "slowpoke", password: MEMBER.password });
    const csrf = await agent.csrf();
    const cookie = agent.cookieHeader();
    const owner = (await server.services.accounts.list()).find((u) => u.role === "owner")!;
    const member = (await server.services.accounts.list()).find((u) => u.username === "slowpoke")!;
    const form = new URLSearchParams({ _csrf: csrf, name: "sneaky", kind: "full" }).toString();
    const status = await slowRequest(
      `POST /settings/api/tokens HTTP/1.1\r\nHost: x\r\nCookie: ${cookie}\r\nContent-Type: application/x-www-form-urlencoded\r\n`,
      form,
      () => server.services.members.remove(member.id, owner),
    );
    expect(status).not.toContain("200");
    expect((await server.services.tokens.list()).some((t) => t.name === "sneaky")).toBe(false);
  });

  test("a removed member's integrations are turned off with their tokens; a kept one stays on", async () => {
    await server.services.accounts.createUser({ username: "hooker", password: MEMBER.password }, "member");
    const member = (await server.services.accounts.list()).find((u) => u.username === "hooker")!;
    const owner = (await server.services.accounts.list()).find((u) => u.role === "owner")!;
    const { integration } = await server.services.integrations.create(
      { project: "default", kind: "webhook", name: "their hook", config: { url: "http://127.0.0.1:9/hook" } },
      member,
    );
    const { integration: team } = await server.services.integrations.create(
      { project: "default", kind: "webhook", name: "team hook", config: { url: "http://127.0.0.1:9/team" } },
      owner,
    );
    const removed = await server.services.members.remove(member.id, owner);
    expect(removed.disabledIntegrations).toBe(1);
    const list = await server.services.integrations.list("default");
    expect(list.find((i) => i.id === integration.id)!.enabled).toBe(false);
    expect(list.find((i) => i.id === team.id)!.enabled).toBe(true);
  });
});
