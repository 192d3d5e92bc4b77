// Sign-in by a trusted proxy's header (SIGNALBOARD_AUTH_PROXY_HEADER, SIGNALBOARD_AUTH_PROXY_TRUSTED):
// believed from a trusted peer only (the socket's address, IPv4 or IPv6, in a listed range), an
// unknown person made with the default role or refused with `none`, a header that changes to
// someone else ending the first person's session, the header ignored (and said once) from any
// other peer, and never a way into the API. The servers listen on :: so that a test reaches
// them from 127.0.0.1 and from ::1, two peers.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadConfig } from "../../src/config.ts";
import { setLogLevel } from "../../src/logger.ts";
import { Agent, startTestServer, type TestServer } from "../helpers.ts";

const OWNER = { username: "owner", password: "correct horse battery staple" };
const HEADER = "Remote-User";

const signedInAs = (page: string) => /Signed in as <strong>([^<]+)<\/strong>/.exec(page)?.[1] ?? null;
const sessionCookie = (res: Response) => res.headers.getSetCookie().find((c) => c.startsWith("sb_session="));
const v6 = (server: TestServer) => server.url.replace("127.0.0.1", "[::1]");

/** What the server logged at warn level and above while `work` ran. */
async function logged(work: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
  const lines: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string) => (lines.push(String(chunk)), true)) as typeof process.stderr.write;
  setLogLevel("warn");
  try {
    await work();
  } finally {
    setLogLevel("silent");
    process.stderr.write = write;
  }
  return lines.map((l) => JSON.parse(l));
}

describe("the settings", () => {
  const load = (env: Record<string, string>) => () => loadConfig({}, env);
  test("addresses and CIDR ranges of both families, the header's name compared without case", () => {
    const config = loadConfig(
      {},
      {
        SIGNALBOARD_AUTH_PROXY_HEADER: "Remote-User",
        SIGNALBOARD_AUTH_PROXY_TRUSTED: "10.0.0.5, 172.18.0.0/16,fd00::/8,::1",
      },
    );
    expect(config.authProxyHeader).toBe("remote-user");
    expect(config.authProxyTrusted).toHaveLength(4);
    expect(config.oidcDefaultRole).toBe("viewer");
  });
  test("one without the other, a name or a bad range, and an unknown default role are refused at start", () => {
    expect(load({ SIGNALBOARD_AUTH_PROXY_HEADER: "Remote-User" })).toThrow(/SIGNALBOARD_AUTH_PROXY_TRUSTED is empty/);
    expect(load({ SIGNALBOARD_AUTH_PROXY_TRUSTED: "10.0.0.5" })).toThrow(/SIGNALBOARD_AUTH_PROXY_HEADER is not/);
    expect(load({ SIGNALBOARD_AUTH_PROXY_HEADER: "Remote-User", SIGNALBOARD_AUTH_PROXY_TRUSTED: "proxy.lan" })).toThrow(
      /SIGNALBOARD_AUTH_PROXY_TRUSTED .* must be addresses or CIDR ranges/,
    );
    expect(
      load({ SIGNALBOARD_AUTH_PROXY_HEADER: "Remote-User", SIGNALBOARD_AUTH_PROXY_TRUSTED: "10.0.0.0/33" }),
    ).toThrow(/no prefix length from 0 to 32/);
    expect(load({ SIGNALBOARD_AUTH_PROXY_HEADER: "Remote User", SIGNALBOARD_AUTH_PROXY_TRUSTED: "::1" })).toThrow(
      /must be an HTTP header's name/,
    );
    expect(load({ SIGNALBOARD_OIDC_DEFAULT_ROLE: "owner" })).toThrow(/SIGNALBOARD_OIDC_DEFAULT_ROLE/);
  });
});

describe("behind a proxy trusted by a CIDR range (127.0.0.0/8), new people made viewers", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      host: "::",
      "auth-proxy-header": HEADER,
      "auth-proxy-trusted": "127.0.0.0/8",
    });
    await server.services.accounts.createUser(OWNER, "owner");
  });
  afterAll(() => server.close());

  test("the header from a trusted peer signs in as that person, once: the session then goes on with the cookie", async () => {
    const browser = new Agent(server.url);
    const first = await browser.request("/settings/account", { headers: { [HEADER]: "Owner" } });
    expect(first.status).toBe(200);
    expect(signedInAs(await first.text())).toBe("owner");
    expect(sessionCookie(first)).toMatch(/HttpOnly; SameSite=Lax/);
    const again = await browser.request("/settings/account", { headers: { [HEADER]: "owner" } });
    expect(again.status).toBe(200);
    expect(sessionCookie(again)).toBeUndefined();
    const [entry] = await server.services.audit.list();
    expect(entry).toMatchObject({
      action: "sign_in.succeeded",
      actor: "owner",
      subject: "user owner",
      ip: "127.0.0.1",
      detail: "proxy",
    });
    // The audit page says how.
    expect(await (await browser.request("/settings/audit", { headers: { [HEADER]: "owner" } })).text()).toContain(
      "proxy",
    );
  });

  test("an unknown person gets an account with the default role (viewer), and can change nothing", async () => {
    const browser = new Agent(server.url);
    const res = await browser.request("/settings/account", { headers: { [HEADER]: "newcomer" } });
    expect(res.status).toBe(200);
    expect(signedInAs(await res.text())).toBe("newcomer");
    const user = (await server.services.accounts.list()).find((u) => u.username === "newcomer");
    expect(user).toMatchObject({ role: "viewer", projects: null });
    const csrf = await browser.csrf();
    const denied = await browser.request("/projects", {
      method: "POST",
      headers: { [HEADER]: "newcomer", "X-CSRF-Token": csrf },
      form: { _csrf: csrf, name: "theirs" },
    });
    expect(denied.status).toBe(403);
    // Made with an audit entry, as an admin's addition is.
    const entries = await server.services.audit.list();
    expect(entries.find((e) => e.action === "member.added" && e.subject === "user newcomer")).toMatchObject({
      actor: "newcomer",
    });
  });

  test("a header switched to another person signs in as them and ends the first person's session", async () => {
    const browser = new Agent(server.url);
    await browser.request("/settings/account", { headers: { [HEADER]: "owner" } });
    const ownersCookie = browser.cookies.get("sb_session")!;
    const ownersCsrf = await browser.csrf();
    const switched = await browser.request("/settings/account", { headers: { [HEADER]: "alice" } });
    expect(switched.status).toBe(200);
    expect(signedInAs(await switched.text())).toBe("alice");
    expect(browser.cookies.get("sb_session")).not.toBe(ownersCookie);
    expect(await server.services.accounts.session(decodeURIComponent(ownersCookie))).toBeNull();
    // The owner's cookie, sent again by itself, is signed out.
    const stale = await fetch(`${server.url}/settings/account`, {
      headers: { Cookie: `sb_session=${ownersCookie}` },
      redirect: "manual",
    });
    expect(stale.status).toBe(303);
    // A form of the owner's page, sent as alice, is refused: its CSRF token was the owner's session's.
    const post = await browser.request("/settings/account/password", {
      method: "POST",
      headers: { [HEADER]: "alice" },
      form: { _csrf: ownersCsrf, current: "x", password: "another password", confirm: "another password" },
    });
    expect(post.status).toBe(403);
    // And switched back: the owner again, alice's session ended in turn.
    const alicesCookie = browser.cookies.get("sb_session")!;
    expect(
      signedInAs(await (await browser.request("/settings/account", { headers: { [HEADER]: "owner" } })).text()),
    ).toBe("owner");
    expect(await server.services.accounts.session(decodeURIComponent(alicesCookie))).toBeNull();
  });

  test("a name that cannot be a username is refused with a page that says so; an e-mail address can be one", async () => {
    const res = await new Agent(server.url).request("/settings/account", { headers: { [HEADER]: "Ann Smith" } });
    expect(res.status).toBe(403);
    const page = await res.text();
    expect(page).toContain("cannot be a username here");
    expect(page).toContain("not a display name");
    // A proxy sending the wrong header is found in the audit trail (and the log), not only by whoever it turns away.
    expect((await server.services.audit.list())[0]).toMatchObject({
      action: "sign_in.failed",
      subject: "user Ann Smith",
      detail: "proxy: not a username (have the proxy send a username or an e-mail address)",
    });
    const mail = await new Agent(server.url).request("/settings/account", { headers: { [HEADER]: "Ann@Example.com" } });
    expect(mail.status).toBe(200);
    expect(signedInAs(await mail.text())).toBe("ann@example.com");
  });

  test("from an untrusted peer (::1) the header is ignored, and said once in the log", async () => {
    const lines = await logged(async () => {
      for (let i = 0; i < 3; i++) {
        const res = await new Agent(v6(server)).request("/settings/account", { headers: { [HEADER]: "owner" } });
        expect(res.status).toBe(303);
        expect(res.headers.get("location")).toStartWith("/login");
        expect(sessionCookie(res)).toBeUndefined();
      }
    });
    const said = lines.filter((l) => String(l.msg).includes("SIGNALBOARD_AUTH_PROXY_TRUSTED does not list"));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatchObject({ level: "warn", peer: "::1", header: "remote-user" });
    // A trusted peer still signs in after it.
    const trusted = await new Agent(server.url).request("/settings/account", { headers: { [HEADER]: "owner" } });
    expect(trusted.status).toBe(200);
  });

  test("the header never signs in the API: a token is still needed", async () => {
    const res = await fetch(`${server.url}/v1/events`, { headers: { [HEADER]: "owner" } });
    expect(res.status).toBe(401);
    expect(sessionCookie(res)).toBeUndefined();
    const withToken = await fetch(`${server.url}/v1/events`, {
      headers: { [HEADER]: "owner", Authorization: `Bearer ${server.token}` },
    });
    expect(withToken.status).toBe(200);
  });

  test("without the header, a password sign-in works as before", async () => {
    const browser = new Agent(server.url);
    expect((await browser.login(OWNER.username, OWNER.password)).status).toBe(303);
    expect(signedInAs(await (await browser.request("/settings/account")).text())).toBe("owner");
    expect((await server.services.audit.list())[0]).toMatchObject({ action: "sign_in.succeeded", detail: "password" });
  });
});

describe("behind a proxy trusted by an IPv6 address, new people refused (SIGNALBOARD_OIDC_DEFAULT_ROLE=none)", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      host: "::",
      "auth-proxy-header": "X-Forwarded-User",
      "auth-proxy-trusted": "::1",
      "oidc-default-role": "none",
    });
  });
  afterAll(() => server.close());

  test("before the owner exists, the header makes no one: the visitor is sent to set up", async () => {
    const res = await new Agent(v6(server)).request("/settings/account", {
      headers: { "X-Forwarded-User": "someone" },
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/setup");
    expect(await server.services.accounts.list()).toHaveLength(0);
    await server.services.accounts.createUser(OWNER, "owner");
    await server.services.accounts.createUser({ username: "bob", password: "bob's long password" }, "member");
  });

  test("an existing account signs in over IPv6", async () => {
    const res = await new Agent(v6(server)).request("/settings/account", { headers: { "x-forwarded-user": "bob" } });
    expect(res.status).toBe(200);
    expect(signedInAs(await res.text())).toBe("bob");
  });

  test("an unknown person is refused with a clear page, and the refusal is in the audit trail", async () => {
    const res = await new Agent(v6(server)).request("/settings/account", { headers: { "X-Forwarded-User": "carol" } });
    expect(res.status).toBe(403);
    const page = await res.text();
    expect(page).toContain("there is no account by that name here");
    expect(page).toContain("Ask an admin to add “carol”");
    expect(sessionCookie(res)).toBeUndefined();
    expect((await server.services.accounts.list()).map((u) => u.username)).not.toContain("carol");
    expect((await server.services.audit.list())[0]).toMatchObject({
      action: "sign_in.failed",
      subject: "user carol",
      ip: "::1",
      detail: expect.stringMatching(/^proxy: no such user/),
    });
  });

  test("IPv4's 127.0.0.1 is not ::1: from there the header is ignored", async () => {
    const res = await new Agent(server.url).request("/settings/account", { headers: { "X-Forwarded-User": "bob" } });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toStartWith("/login");
  });
});
