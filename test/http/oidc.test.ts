// Single sign-on against a real OpenID provider on 127.0.0.1 (test/oidc-provider.ts), walked the
// way a browser walks it: the sign-in page's button, the provider's login, the callback, a session.
// Then what must be refused: a forged or replayed state, an ID token for another audience or signed
// by another key; keys rotated at the provider; roles from the provider's groups; people not added.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { JWTPayload } from "jose";
import { setLogLevel } from "../../src/logger.ts";
import { newSigningKey, signIdToken, startOidcProvider, type TestProvider } from "../oidc-provider.ts";
import { signedIn, startTestApp, type TestApp } from "../helpers.ts";

const BASE = "http://signalboard.test";
let provider: TestProvider;

beforeAll(async () => {
  provider = await startOidcProvider({ redirectUri: `${BASE}/auth/oidc/callback`, afterSignOut: `${BASE}/login` });
  provider.people.set("alice-sub", { email: "alice@example.com", email_verified: true, preferred_username: "alice" });
});
afterAll(() => provider.close());

function oidcSettings(extra: Record<string, string> = {}): Record<string, string> {
  return {
    "base-url": BASE,
    "outbound-allow": "127.0.0.1",
    "oidc-issuer": provider.issuer,
    "oidc-client-id": provider.clientId,
    "oidc-client-secret": provider.clientSecret,
    "oidc-scopes": "openid profile email groups",
    "oidc-name": "Test SSO",
    ...extra,
  };
}

async function appWith(extra: Record<string, string> = {}): Promise<TestApp> {
  const app = await startTestApp(oidcSettings(extra));
  await app.services.accounts.createUser({ username: "root", password: "root-password" }, "owner");
  return app;
}

/** A browser of sorts: a cookie jar per origin, redirects followed, the provider's form filled in. */
class Browser {
  jars = new Map<string, Map<string, string>>();
  /** The last callback it was sent to, and the cookie it carried there. */
  lastCallback: { url: string; cookie: string } | null = null;
  constructor(readonly app: TestApp) {}

  cookieFor(url: URL): string {
    return [...(this.jars.get(url.origin) ?? new Map())].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  async request(url: URL, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    const cookie = this.cookieFor(url);
    if (cookie) headers.set("cookie", cookie);
    if (url.pathname === "/auth/oidc/callback") this.lastCallback = { url: url.href, cookie };
    const res =
      url.origin === BASE
        ? await this.app.app.handle(new Request(url, { ...init, headers, redirect: "manual" }))
        : await fetch(url, { ...init, headers, redirect: "manual" });
    const jar = this.jars.get(url.origin) ?? new Map<string, string>();
    this.jars.set(url.origin, jar);
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(";");
      const at = pair!.indexOf("=");
      const [name, value] = [pair!.slice(0, at).trim(), pair!.slice(at + 1).trim()];
      if (attrs.some((a) => /max-age=0$/i.test(a.trim())) || /expires=thu, 01 jan 1970/i.test(line)) jar.delete(name);
      else jar.set(name, value);
    }
    return res;
  }

  /** Follows redirects from `start`; at the provider's login form, signs in as `who`. */
  async walk(start: string, who: string): Promise<{ res: Response; url: URL }> {
    let url = new URL(start, BASE);
    let res = await this.request(url);
    for (let hops = 0; hops < 20; hops++) {
      if (res.status >= 300 && res.status < 400) {
        url = new URL(res.headers.get("location")!, url);
        res = await this.request(url);
      } else if (url.pathname.startsWith("/interaction/") && res.status === 200) {
        await res.text();
        res = await this.request(url, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ login: who }).toString(),
        });
      } else return { res, url };
    }
    throw new Error("too many redirects");
  }

  async signIn(who: string, next = "/") {
    return this.walk(`/auth/oidc/start?next=${encodeURIComponent(next)}`, who);
  }
}

const sessionOf = (browser: Browser) => browser.jars.get(BASE)?.get("sb_session");

describe("single sign-on", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await appWith();
  });
  afterAll(() => app.close());

  test("the sign-in page offers the provider; the whole flow signs a new person in as a viewer", async () => {
    const browser = new Browser(app);
    const login = await browser.request(new URL("/login", BASE));
    const page = await login.text();
    expect(page).toContain("Sign in with Test SSO");
    expect(page).toContain('name="password"');

    const start = await browser.request(new URL("/auth/oidc/start?next=/settings/account", BASE));
    expect(start.status).toBe(303);
    const authorize = new URL(start.headers.get("location")!);
    expect(authorize.origin).toBe(provider.issuer);
    expect(authorize.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorize.searchParams.get("redirect_uri")).toBe(`${BASE}/auth/oidc/callback`);
    for (const p of ["state", "nonce", "code_challenge"]) expect(authorize.searchParams.get(p)).toBeTruthy();
    expect(authorize.searchParams.get("scope")).toBe("openid profile email groups");

    const { res, url } = await browser.walk(start.headers.get("location")!, "alice-sub");
    expect(url.href).toBe(`${BASE}/settings/account`);
    expect(res.status).toBe(200);
    expect(sessionOf(browser)).toBeTruthy();
    expect(browser.jars.get(BASE)?.has("sb_oidc")).toBe(false);

    const alice = (await app.services.accounts.list()).find((u) => u.username === "alice")!;
    expect(alice).toMatchObject({ role: "viewer", projects: null });
    const trail = await app.services.audit.list();
    expect(trail.find((e) => e.action === "sign_in.succeeded" && e.subject === "user alice")).toMatchObject({
      detail: "oidc",
      actorUserId: alice.id,
    });
    expect(trail.find((e) => e.action === "member.added" && e.subject === "user alice")).toBeTruthy();

    // Again: the same person, found by the provider's subject.
    const again = new Browser(app);
    await again.signIn("alice-sub");
    expect(sessionOf(again)).toBeTruthy();
    expect((await app.services.accounts.list()).filter((u) => u.username.startsWith("alice"))).toHaveLength(1);
  });

  test("a replayed answer is refused, with its cookie or without", async () => {
    const browser = new Browser(app);
    await browser.signIn("alice-sub");
    const { url, cookie } = browser.lastCallback!;
    const withCookie = await app.app.handle(new Request(url, { headers: { cookie } }));
    expect(withCookie.status).toBe(400);
    expect(withCookie.headers.getSetCookie().join()).not.toContain("sb_session=s");
    expect(await withCookie.text()).toContain("Sign in again below.");
    const without = await app.app.handle(new Request(url));
    expect(without.status).toBe(400);
    expect(await without.text()).toContain("was not started here");
  });

  test("a forged state is refused, and the code is not exchanged", async () => {
    const browser = new Browser(app);
    const start = await browser.request(new URL("/auth/oidc/start", BASE));
    let url = new URL(start.headers.get("location")!);
    let res = await browser.request(url);
    // To the provider's login, signed in there, up to its redirect back (not followed).
    while (res.status >= 300 && res.status < 400 && !res.headers.get("location")!.startsWith(BASE)) {
      url = new URL(res.headers.get("location")!, url);
      res = await browser.request(url);
      if (url.pathname.startsWith("/interaction/") && res.status === 200)
        res = await browser.request(url, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: "login=alice-sub",
        });
    }
    const back = new URL(res.headers.get("location")!);
    expect(back.pathname).toBe("/auth/oidc/callback");
    back.searchParams.set("state", "forged-state");
    const forged = await browser.request(back);
    expect(forged.status).toBe(400);
    const page = await forged.text();
    expect(page).toContain("forged or replayed");
    // Said on the sign-in page itself, whose button starts again.
    expect(page).toContain("Sign in again below.");
    expect(page).toContain("Sign in with Test SSO");
    expect(sessionOf(browser)).toBeUndefined();
    // A failed sign-in in the audit trail, with why (and not what the person was told to do next).
    expect((await app.services.audit.list())[0]).toMatchObject({
      action: "sign_in.failed",
      subject: "single sign-on",
      detail: "oidc: The answer's state is not this sign-in's (a forged or replayed answer).",
    });
  });

  const tampered = async (change: (claims: JWTPayload) => Promise<string>) => {
    provider.tamper = change;
    try {
      const browser = new Browser(app);
      const { res } = await browser.signIn("alice-sub");
      return { browser, res, text: await res.text() };
    } finally {
      provider.tamper = null;
    }
  };

  test("an ID token for another audience is refused", async () => {
    const { browser, res, text } = await tampered((c) =>
      signIdToken({ ...c, aud: "someone-else" }, provider.signingKey),
    );
    expect(res.status).toBe(400);
    expect(text).toContain("aud");
    expect(sessionOf(browser)).toBeUndefined();
  });

  test("an ID token signed by another key is refused, under the provider's key id or another", async () => {
    const impostor = await newSigningKey(provider.signingKey.jwk.kid);
    const sameKid = await tampered((c) => signIdToken(c, impostor));
    expect(sameKid.res.status).toBe(400);
    expect(sameKid.text).toContain("signature verification failed");
    expect(sessionOf(sameKid.browser)).toBeUndefined();
    const otherKid = await tampered(async (c) => signIdToken(c, await newSigningKey()));
    expect(otherKid.res.status).toBe(400);
    expect(otherKid.text).toContain("no applicable key found");
    expect(sessionOf(otherKid.browser)).toBeUndefined();
  });

  test("an expired ID token is refused", async () => {
    const { browser, res, text } = await tampered((c) =>
      signIdToken({ ...c, iat: c.iat! - 7200, exp: c.iat! - 3600 }, provider.signingKey),
    );
    expect(res.status).toBe(400);
    expect(text).toContain("exp");
    expect(sessionOf(browser)).toBeUndefined();
  });

  test("keys rotated at the provider are fetched again", async () => {
    await provider.rotate();
    const browser = new Browser(app);
    const { res } = await browser.signIn("alice-sub");
    expect(res.status).toBe(200);
    expect(sessionOf(browser)).toBeTruthy();
  });

  test("the provider's refusal is said on the sign-in page", async () => {
    const browser = new Browser(app);
    const { res, url } = await browser.signIn("nobody-at-the-provider");
    expect(url.pathname).toBe("/auth/oidc/callback");
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("access_denied");
  });

  test("signing out ends the session and continues at the provider's end-session endpoint", async () => {
    const browser = new Browser(app);
    await browser.signIn("alice-sub");
    const token = sessionOf(browser)!;
    const session = await app.services.accounts.session(token);
    const out = await browser.request(new URL("/logout", BASE), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: session!.csrfToken }).toString(),
    });
    expect(out.status).toBe(200);
    const page = await out.text();
    const end = new URL(/http-equiv="refresh" content="0;url=([^"]+)"/.exec(page)![1]!.replaceAll("&amp;", "&"));
    expect(end.origin).toBe(provider.issuer);
    expect(end.pathname).toBe("/session/end");
    expect(end.searchParams.get("post_logout_redirect_uri")).toBe(`${BASE}/login`);
    expect(await app.services.accounts.session(token)).toBeNull();
  });
});

describe("roles from the provider's groups", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await appWith({
      "oidc-default-role": "none",
      "oidc-roles-claim": "groups",
      "oidc-role-map": "sb-admins=admin,sb-team=member,sb-ro=viewer",
    });
    provider.people.set("bob-sub", {
      email: "bob@example.com",
      preferred_username: "bob",
      groups: ["sb-ro", "sb-admins"],
    });
    provider.people.set("root-sub", { preferred_username: "root", groups: ["sb-ro"] });
    // The owner's account, linked to the provider once (as by a verified e-mail address the first time).
    const root = (await app.services.accounts.list()).find((u) => u.username === "root")!;
    await app.store.users.linkSubject(root.id, "root-sub", Date.now());
    provider.people.set("carol-sub", { email: "carol@example.com", email_verified: true, preferred_username: "carol" });
  });
  afterAll(() => app.close());

  const roleOf = async (name: string) => (await app.services.accounts.list()).find((u) => u.username === name)?.role;

  test("the highest role the groups give, followed at every sign-in; no group, no way in", async () => {
    await new Browser(app).signIn("bob-sub");
    expect(await roleOf("bob")).toBe("admin");
    provider.people.set("bob-sub", { preferred_username: "bob", groups: ["/sb-team"] }); // Keycloak's full path
    await new Browser(app).signIn("bob-sub");
    expect(await roleOf("bob")).toBe("member");
    expect((await app.services.audit.list()).find((e) => e.action === "member.changed")).toMatchObject({
      subject: "user bob",
      detail: "role admin → member (the provider's groups)",
    });
    provider.people.set("bob-sub", { preferred_username: "bob", groups: ["elsewhere"] });
    const browser = new Browser(app);
    const { res } = await browser.signIn("bob-sub");
    expect(res.status).toBe(403);
    expect(sessionOf(browser)).toBeUndefined();
  });

  test("the owner stays the owner, whatever the groups say", async () => {
    const browser = new Browser(app);
    await browser.signIn("root-sub");
    expect(sessionOf(browser)).toBeTruthy();
    expect(await roleOf("root")).toBe("owner");
  });

  test("with the default role none, someone not added is refused until an admin adds them by e-mail", async () => {
    const refused = new Browser(app);
    const { res } = await refused.signIn("carol-sub");
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("Ask an admin to add you");
    expect(await roleOf("carol")).toBeUndefined();
    expect((await app.services.audit.list()).find((e) => e.action === "sign_in.failed")).toMatchObject({
      detail: "oidc: not added",
    });

    await app.services.accounts.createUser({ username: "carol@example.com", password: "a-password-1" }, "member");
    // Added by her e-mail address, she is linked at her next sign-in; the role map rules here, so her group counts.
    provider.people.set("carol-sub", {
      email: "carol@example.com",
      email_verified: true,
      preferred_username: "carol",
      groups: ["sb-team"],
    });
    const welcome = new Browser(app);
    const signedIn = await welcome.signIn("carol-sub");
    expect(signedIn.res.status).toBe(200);
    expect(await roleOf("carol@example.com")).toBe("member");
    expect(await app.services.accounts.list()).not.toContainEqual(expect.objectContaining({ username: "carol" }));
  });
});

describe("the sign-in limit", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await appWith();
  });
  afterAll(() => app.close());

  test("answers sent back by the dozen meet it, as wrong passwords do", async () => {
    const forge = () => app.app.handle(new Request(`${BASE}/auth/oidc/callback?code=x&state=forged`));
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await forge()).status);
    expect(statuses.slice(0, 10).every((s) => s === 400)).toBe(true);
    expect(statuses.at(-1)).toBe(429);
  });
});

describe("password sign-in turned off", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await appWith({ "password-login": "off" });
  });
  afterAll(() => app.close());

  test("the form is gone and a posted password is refused", async () => {
    const page = await (await app.app.handle(new Request(`${BASE}/login`))).text();
    expect(page).toContain("Sign in with Test SSO");
    expect(page).not.toContain('name="password"');
    const form = await app.app.handle(new Request(`${BASE}/login`));
    const cookie = form.headers.getSetCookie()[0]!.split(";")[0]!;
    const token = cookie.split("=")[1]!;
    const res = await app.app.handle(
      new Request(`${BASE}/login`, {
        method: "POST",
        headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ username: "root", password: "root-password", _form: token }).toString(),
      }),
    );
    expect(res.status).toBe(403);
    expect(res.headers.getSetCookie().join()).not.toContain("sb_session");
  });

  test("the second step's page, expired or opened from a bookmark, offers the provider, not the form", async () => {
    const got = await app.app.handle(new Request(`${BASE}/login/second-factor`));
    expect(got.status).toBe(401);
    const page = await got.text();
    expect(page).toContain("That sign-in took too long or was already finished.");
    expect(page).toContain("Sign in with Test SSO");
    expect(page).not.toContain('name="password"');
  });
});

describe("the outbound rules", () => {
  test("apply to the provider: not allowed, it is not reached", async () => {
    const app = await startTestApp(oidcSettings({ "outbound-allow": "" }));
    try {
      await app.services.accounts.createUser({ username: "root", password: "root-password" }, "owner");
      const res = await app.app.handle(new Request(`${BASE}/auth/oidc/start`));
      expect(res.status).toBe(503);
      expect(await res.text()).toContain("SIGNALBOARD_OUTBOUND_ALLOW");
    } finally {
      await app.close();
    }
  });
});

describe("claims that name someone else's account", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await appWith();
    await app.services.accounts.createUser({ username: "boss@example.com", password: "boss-password-1" }, "admin");
    // Anyone may be able to choose these at a provider that lets people register: neither is a verified address.
    provider.people.set("mallory-sub", { email: "boss@example.com", preferred_username: "mallory" });
    provider.people.set("mallory2-sub", {
      email: "boss@example.com",
      email_verified: false,
      preferred_username: "mallory2",
    });
    provider.people.set("eve-sub", { email: "eve@example.com", email_verified: true, preferred_username: "root" });
  });
  afterAll(() => app.close());

  const whoIs = async (browser: Browser) =>
    (await app.services.accounts.session(sessionOf(browser) ?? "none"))?.user.username ?? null;

  test("an e-mail address the provider does not say is verified links no account", async () => {
    for (const sub of ["mallory-sub", "mallory2-sub"]) {
      const browser = new Browser(app);
      const { res } = await browser.signIn(sub);
      expect(res.status).toBe(200);
      expect(await whoIs(browser)).toBe(sub.replace("-sub", ""));
    }
    const boss = (await app.services.accounts.list()).find((u) => u.username === "boss@example.com")!;
    expect(await app.store.users.subjectOf(boss.id)).toBeNull();
  });

  test("a preferred_username that is the owner's never signs in as the owner", async () => {
    const browser = new Browser(app);
    const { res } = await browser.signIn("eve-sub");
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("owner");
    expect(sessionOf(browser)).toBeUndefined();
    const root = (await app.services.accounts.list()).find((u) => u.username === "root")!;
    expect(await app.store.users.subjectOf(root.id)).toBeNull();
    expect((await app.services.audit.list())[0]).toMatchObject({
      action: "sign_in.failed",
      subject: "user root",
      detail: expect.stringContaining("oidc: "),
    });
  });

  test("the owner whose username is their e-mail address is linked by it, verified", async () => {
    const owner = await startTestApp(oidcSettings());
    try {
      await owner.services.accounts.createUser({ username: "chief@example.com", password: "chief-password" }, "owner");
      provider.people.set("chief-sub", { email: "chief@example.com", email_verified: true, preferred_username: "c" });
      const browser = new Browser(owner);
      await browser.signIn("chief-sub");
      const session = await owner.services.accounts.session(sessionOf(browser) ?? "none");
      expect(session?.user).toMatchObject({ username: "chief@example.com", role: "owner" });
    } finally {
      await owner.close();
    }
  });

  test("a pending sign-in's cookie planted with another site as `next` goes home instead", async () => {
    const browser = new Browser(app);
    const start = await browser.request(new URL("/auth/oidc/start?next=/settings/account", BASE));
    const jar = browser.jars.get(BASE)!;
    const pending = JSON.parse(Buffer.from(jar.get("sb_oidc")!, "base64url").toString("utf8"));
    jar.set("sb_oidc", Buffer.from(JSON.stringify({ ...pending, next: "//evil.example/x" })).toString("base64url"));
    let url = new URL(start.headers.get("location")!);
    let res = await browser.request(url);
    while (!(res.status === 303 && url.pathname === "/auth/oidc/callback")) {
      if (url.pathname.startsWith("/interaction/") && res.status === 200)
        res = await browser.request(url, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: "login=alice-sub",
        });
      else {
        url = new URL(res.headers.get("location")!, url);
        res = await browser.request(url);
      }
    }
    expect(res.headers.get("location")).toBe("/");
    expect(sessionOf(browser)).toBeTruthy();
  });

  test("a provider's error said in a huge query is cut short in the audit trail", async () => {
    const res = await app.app.handle(
      new Request(`${BASE}/auth/oidc/callback?error=${"e".repeat(20_000)}&error_description=${"d".repeat(20_000)}`),
    );
    expect(res.status).toBe(400);
    const [entry] = await app.services.audit.list();
    expect(entry).toMatchObject({ action: "sign_in.failed" });
    expect(entry!.detail!.length).toBeLessThan(1000);
  });

  test("a provider's error with markup and line breaks is shown as text, on the sign-in page and in the audit trail", async () => {
    const said = encodeURIComponent("<img src=x onerror=alert(1)>\nsign_in.succeeded user root");
    const res = await app.app.handle(new Request(`${BASE}/auth/oidc/callback?error=${said}&error_description=${said}`));
    const page = await res.text();
    expect(page).not.toContain("<img src=x");
    expect(page).toContain("&lt;img src=x");
    const owner = await signedIn(app, { username: "root", password: "root-password" });
    const audit = await (await owner.request("/settings/audit")).text();
    expect(audit).not.toContain("<img src=x");
    expect(audit).toContain("&lt;img src=x");
  });
});

describe("a provider that is down", () => {
  test("the server starts; the button says so on the sign-in page, the log says why; once it is back, the button works", async () => {
    provider.down = true;
    const app = await appWith();
    try {
      const lines: string[] = [];
      const write = process.stderr.write.bind(process.stderr);
      process.stderr.write = ((chunk: string) => (lines.push(String(chunk)), true)) as typeof process.stderr.write;
      setLogLevel("warn");
      let res: Response;
      try {
        res = await app.app.handle(new Request(`${BASE}/auth/oidc/start`, { headers: { accept: "text/html" } }));
      } finally {
        setLogLevel("silent");
        process.stderr.write = write;
      }
      expect(res.status).toBe(503);
      const page = await res.text();
      // The sign-in page again, with why: the password form and the button are still there to use.
      expect(page).toContain(`The sign-in provider at ${provider.issuer} cannot be reached or answered wrongly`);
      expect(page).toContain('name="password"');
      expect(page).toContain("Sign in with Test SSO");
      const said = lines.map((l) => JSON.parse(l)).find((l) => l.path === "/auth/oidc/start");
      expect(said).toMatchObject({ level: "warn", status: 503, error: "oidc_unavailable" });
      expect(String(said?.message)).toContain(`The sign-in provider at ${provider.issuer} cannot be reached`);
      expect(String(said?.message)).toContain("503");

      provider.down = false;
      const browser = new Browser(app);
      const { res: back } = await browser.signIn("alice-sub");
      expect(back.status).toBe(200);
      expect(sessionOf(browser)).toBeTruthy();
    } finally {
      provider.down = false;
      await app.close();
    }
  });
});
