// The sign-in pages and the audit trail as a person reads them: each sign-in's method in words on
// Settings → Audit, errors of a code next to its field (and focused, so the page comes back at it),
// the way in that is left when passwords are off, and a page that does not tell someone to do what
// their role may not.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Secret, TOTP } from "otpauth";
import { TestClock } from "../clock.ts";
import { Agent, signedIn, startTestApp, type TestApp } from "../helpers.ts";

const OWNER = { username: "owner", password: "owner password 1" };
const ANN = { username: "ann", password: "ann password 1" };
const VAL = { username: "val", password: "val password 1" };

const codeAt = (secret: string, at: number) =>
  new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: at });
/** The page's text, tags dropped and spaces folded. */
const words = (html: string) => html.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ");

describe("sign-in pages", () => {
  let app: TestApp;
  const clock = new TestClock(Date.UTC(2026, 0, 5, 9, 0, 5), { stopped: true });
  beforeAll(async () => {
    app = await startTestApp({}, undefined, { clock });
    await app.services.accounts.createUser(OWNER, "owner");
    await app.services.accounts.createUser(ANN, "member");
    await app.services.accounts.createUser(VAL, "viewer");
  });
  afterAll(() => app.close());

  test("Settings → Audit says how each sign-in happened in words, and a refusal's method too", async () => {
    const ann = (await app.services.accounts.list()).find((u) => u.username === "ann")!;
    await app.services.accounts.openSession(ann, "oidc");
    await app.services.accounts.openSession(ann, "proxy");
    await app.services.accounts.openSession(ann, "command-line link");
    await app.services.accounts.openSession(ann, "password + totp");
    await app.services.accounts.openSession(ann, "password + recovery code");
    const { recordAudit } = await import("../../src/domain/audit.ts");
    await recordAudit(
      app.store,
      { userId: null, name: "zed", ip: null },
      "sign_in.failed",
      "user zed",
      "oidc: not added",
      clock.now(),
    );
    const owner = await signedIn(app, OWNER);
    const page = words(await (await owner.request("/settings/audit")).text());
    expect(page).toContain("with a password and a code from an authenticator app");
    expect(page).toContain("with a password and a recovery code");
    expect(page).toContain("by single sign-on (OpenID Connect)");
    expect(page).toContain("through the sign-in proxy");
    expect(page).toContain("with a sign-in link made on the command line");
    expect(page).toContain("Single sign-on: not added");
    expect(page).toMatch(/Signed in user owner with a password /);
    // The page's own words say a sign-in's method is there.
    expect(page).toContain("Sign-ins (and how");
    // The log and the stored detail keep the method as it was: the page only says it.
    expect((await app.services.audit.list()).some((e) => e.detail === "password + totp")).toBe(true);
  });

  test("a wrong code at the second step is said next to the field, and the hint names the command for them", async () => {
    const owner = await signedIn(app, OWNER);
    const csrf = await owner.csrf();
    const offer = await (
      await owner.request("/settings/account/totp", { method: "POST", form: { _csrf: csrf } })
    ).text();
    const secret = /name="secret" value="([A-Z2-7]+)"/.exec(offer)![1]!;
    await owner.request("/settings/account/totp", {
      method: "POST",
      form: { _csrf: csrf, secret, code: codeAt(secret, clock.now()) },
    });
    await clock.advance(31_000);
    const agent = new Agent(app);
    expect((await agent.login(OWNER.username, OWNER.password)).headers.get("location")).toBe("/login/second-factor");
    const form = await agent.formToken("/login/second-factor");
    const res = await agent.request("/login/second-factor", { method: "POST", form: { _form: form, code: "000000" } });
    expect(res.status).toBe(401);
    const html = await res.text();
    const input = /<input id="code"[^>]*>/.exec(html)![0];
    expect(input).toContain('aria-invalid="true"');
    expect(input).toContain('aria-describedby="code-error"');
    expect(html).toMatch(/<p class="hint error" id="code-error" role="alert">That code is not right/);
    expect(words(html)).toContain("signalboard user reset-2fa owner");
    // Turned off with a wrong code first: the form lands at its section (#second-factor), the field marked.
    const wrongOff = await owner.request("/settings/account/totp/off", {
      method: "POST",
      form: { _csrf: csrf, code: "000000" },
    });
    expect(wrongOff.status).toBe(422);
    const offPage = await wrongOff.text();
    expect(/<input id="off-code"[^>]*>/.exec(offPage)![0]).toContain("autofocus");
    expect(offPage).toContain('action="/settings/account/totp/off#second-factor"');
    await owner.request("/settings/account/totp/off", {
      method: "POST",
      form: { _csrf: csrf, code: codeAt(secret, clock.now()) },
    });
  });

  test("setting an authenticator up lands at its section; a wrong code is focused; saved codes lead back", async () => {
    const ann = await signedIn(app, ANN);
    const csrf = await ann.csrf();
    const account = await (await ann.request("/settings/account")).text();
    expect(account).toContain('action="/settings/account/totp#second-factor"');
    const offer = await (await ann.request("/settings/account/totp", { method: "POST", form: { _csrf: csrf } })).text();
    expect(offer).toContain('action="/settings/account/totp#second-factor"');
    const secret = /name="secret" value="([A-Z2-7]+)"/.exec(offer)![1]!;
    const wrong = await ann.request("/settings/account/totp", {
      method: "POST",
      form: { _csrf: csrf, secret, code: "000000" },
    });
    expect(wrong.status).toBe(422);
    expect(/<input id="code"[^>]*>/.exec(await wrong.text())![0]).toContain("autofocus");
    const done = await (
      await ann.request("/settings/account/totp", {
        method: "POST",
        form: { _csrf: csrf, secret, code: codeAt(secret, clock.now()) },
      })
    ).text();
    expect(done).toMatch(/<a class="button" href="\/settings\/account"[^>]*>I have saved them<\/a>/);
  });

  test("where a second factor is required, someone who has none is told it is for password sign-ins", async () => {
    await app.services.secondFactor.setRequired(true, { userId: null, name: "command line", ip: null });
    try {
      // val signed in by single sign-on, where the requirement does not reach, and has no factor.
      const user = (await app.services.accounts.list()).find((u) => u.username === "val")!;
      const session = await app.services.accounts.openSession(user, "oidc");
      const agent = new Agent(app);
      agent.cookies.set("sb_session", session.token);
      const page = words(await (await agent.request("/settings/account")).text());
      expect(page).toContain("An admin requires one of everyone who signs in with a password");
      expect(page).toContain("the next time you sign in with yours");
      expect(page).not.toContain("at your next sign-in");
    } finally {
      await app.services.secondFactor.setRequired(false, { userId: null, name: "command line", ip: null });
    }
  });

  test("the first page of someone who may not make tokens does not tell them to", async () => {
    const val = await signedIn(app, VAL);
    const html = await (await val.request("/p/default")).text();
    expect(html).toContain("No events yet");
    // Told to an admin only (the page's role hides the rest).
    expect(html).toMatch(/<span class="needs-admin"> Create a token in/);
    expect(html).toContain('<pre class="snippet needs-admin">curl');
  });
});

describe("passwords off", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ "password-login": "off" });
    await app.services.accounts.createUser(OWNER, "owner");
  });
  afterAll(() => app.close());

  test("the sign-in page says what way in is left", async () => {
    const page = words(await (await new Agent(app).request("/login")).text());
    expect(page).not.toContain("Password");
    expect(page).toContain("Signing in with a password is off here");
    expect(page).toContain("signalboard user sign-in-link NAME");
  });
});
