// The owner's way in from the command line: `signalboard user sign-in-link NAME` prints a link that
// signs in once, within 15 minutes, when passwords are off (SIGNALBOARD_PASSWORD_LOGIN=off) and the
// identity provider is not there. Opening it does not use it up (a chat's link preview opens links);
// its button does.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { TestClock } from "../clock.ts";
import { Agent, startTestApp, startTestServer, storeArgs, type TestApp } from "../helpers.ts";
import { PROGRAM, run } from "../e2e/process.ts";

const OWNER = { username: "owner", password: "owner password 1" };

/** The code of a link the server's accounts made for `name`. */
async function linkFor(app: TestApp, name: string): Promise<string> {
  return (await app.services.accounts.signInLink(name)).token;
}

async function open(agent: Agent, code: string): Promise<{ status: number; form: string | null; page: string }> {
  const res = await agent.request(`/login/link?code=${encodeURIComponent(code)}`);
  const page = await res.text();
  return { status: res.status, form: /name="_form" value="([^"]+)"/.exec(page)?.[1] ?? null, page };
}

async function use(app: TestApp | { services: TestApp["services"] }, agent: Agent, code: string): Promise<Response> {
  // A wrong link's page has no form: the form token of a good one's, as a forger would get.
  const form =
    (await open(agent, code)).form ??
    (await open(agent, await app.services.accounts.signInLink("owner").then((l) => l.token))).form;
  return agent.request("/login/link", { method: "POST", form: { _form: form ?? "", code } });
}

describe("a sign-in link, with passwords off", () => {
  let app: TestApp;
  const clock = new TestClock(Date.UTC(2026, 0, 5, 9, 0, 0), { stopped: true });
  beforeAll(async () => {
    app = await startTestApp({ "password-login": "off" }, undefined, { clock });
    await app.services.accounts.createUser(OWNER, "owner");
  });
  afterAll(() => app.close());

  test("the password form is gone and a posted password is refused", async () => {
    const agent = new Agent(app);
    const page = await (await agent.request("/login")).text();
    expect(page).not.toContain('name="password"');
    const form = (await open(agent, await linkFor(app, "owner"))).form!;
    const res = await agent.request("/login", {
      method: "POST",
      form: { _form: form, username: OWNER.username, password: OWNER.password, next: "/" },
    });
    expect(res.status).toBe(403);
    expect(agent.cookies.has("sb_session")).toBe(false);
  });

  test("opened, it names whom it signs in and signs in no one; its button signs in, once", async () => {
    const code = await linkFor(app, "Owner");
    const agent = new Agent(app);
    const opened = await open(agent, code);
    expect(opened.status).toBe(200);
    expect(opened.page).toContain("Sign in as owner");
    expect(agent.cookies.has("sb_session")).toBe(false);
    const res = await agent.request("/login/link", { method: "POST", form: { _form: opened.form!, code } });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/");
    expect((await agent.request("/settings/account")).status).toBe(200);
    // Used: a second try (another browser) gets nothing.
    const again = new Agent(app);
    expect((await open(again, code)).status).toBe(410);
    expect((await use(app, again, code)).status).toBe(410);
    expect(again.cookies.has("sb_session")).toBe(false);
    const trail = await app.services.audit.list();
    const signedIn = trail.find((e) => e.action === "sign_in.succeeded");
    expect(signedIn).toMatchObject({ subject: "user owner", detail: "command-line link" });
    expect(trail.find((e) => e.id < signedIn!.id)).toMatchObject({
      action: "sign_in.link",
      actor: "command line",
      subject: "user owner",
    });
  });

  test("it is good for 15 minutes, not a moment more", async () => {
    const code = await linkFor(app, "owner");
    await clock.advance(15 * 60_000);
    const agent = new Agent(app);
    expect((await open(agent, code)).page).toContain("older than 15 minutes");
    expect((await use(app, agent, code)).status).toBe(410);
    expect(agent.cookies.has("sb_session")).toBe(false);
  });

  test("a wrong code, or a half sign-in's, signs no one in; two uses at once sign in one", async () => {
    const agent = new Agent(app);
    expect((await use(app, agent, "not-a-code")).status).toBe(410);
    const code = await linkFor(app, "owner");
    const [a, b] = [new Agent(app), new Agent(app)];
    const forms = await Promise.all([open(a, code), open(b, code)]);
    const answers = await Promise.all(
      [a, b].map((who, i) => who.request("/login/link", { method: "POST", form: { _form: forms[i]!.form!, code } })),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([303, 410]);
  });

  test("a form posted without its own form token is refused", async () => {
    const code = await linkFor(app, "owner");
    const agent = new Agent(app);
    const res = await agent.request("/login/link", { method: "POST", form: { _form: "forged", code } });
    expect(res.status).toBe(403);
    // Not used up by the refused post.
    expect((await use(app, new Agent(app), code)).status).toBe(303);
  });
});

test("signalboard user sign-in-link NAME prints a link that signs in; an unknown name exits 1", async () => {
  const server = await startTestServer({ "password-login": "off" });
  try {
    await server.services.accounts.createUser(OWNER, "owner");
    const cli = (...args: string[]) =>
      run(PROGRAM, [...args, ...storeArgs(server), "--base-url", server.url, "--password-login", "off"]);
    const made = await cli("user", "sign-in-link", "owner");
    expect(made.code).toBe(0);
    const url = new URL(/(http:\/\/\S+)/.exec(made.stdout)![1]!);
    expect(`${url.origin}${url.pathname}`).toBe(`${server.url}/login/link`);
    const agent = new Agent(server.url);
    expect((await use(server, agent, url.searchParams.get("code")!)).status).toBe(303);
    expect((await agent.request("/settings/account")).status).toBe(200);
    const unknown = await cli("user", "sign-in-link", "nobody");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('No user named "nobody"');
  } finally {
    await server.close();
  }
});
