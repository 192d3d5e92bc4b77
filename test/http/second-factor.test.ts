// A second factor: TOTP set up in Settings → Account and asked for after the password, recovery
// codes (each once), replays, the sign-in limits, the half-signed-in state (no session, expiring),
// turning it off, and an admin requiring it of everyone. Codes are computed by otpauth at the
// test's own clock.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Secret, TOTP } from "otpauth";
import { TestClock } from "../clock.ts";
import { Agent, signedIn, startTestApp, startTestServer, type TestApp } from "../helpers.ts";

const OWNER = { username: "owner", password: "owner password 1" };
const ANN = { username: "ann", password: "ann password 1" };
const BEN = { username: "ben", password: "ben password 1" };

/** The code an authenticator app with this key shows at `at`. */
const codeAt = (secret: string, at: number) =>
  new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: "SHA1" }).generate({ timestamp: at });

/** Turns TOTP on through Settings → Account as `agent`; its secret and the recovery codes. */
async function turnOn(agent: Agent, clock: TestClock): Promise<{ secret: string; codes: string[] }> {
  const csrf = await agent.csrf();
  const offer = await agent.request("/settings/account/totp", { method: "POST", form: { _csrf: csrf } });
  expect(offer.status).toBe(200);
  const page = await offer.text();
  expect(page).toContain("<svg"); // the QR code, inline
  const secret = /name="secret" value="([A-Z2-7]+)"/.exec(page)![1]!;
  expect(page.replace(/<[^>]+>/g, "")).toContain(secret.slice(0, 4) + " " + secret.slice(4, 8)); // the key written out
  const wrong = await agent.request("/settings/account/totp", {
    method: "POST",
    form: { _csrf: csrf, secret, code: codeAt(secret, clock.now() - 5 * 60_000) },
  });
  expect(wrong.status).toBe(422);
  const done = await agent.request("/settings/account/totp", {
    method: "POST",
    form: { _csrf: csrf, secret, code: codeAt(secret, clock.now()) },
  });
  expect(done.status).toBe(200);
  const codes = [...(await done.text()).matchAll(/<li><code>([a-z0-9]{5}-[a-z0-9]{5})<\/code><\/li>/g)].map(
    (m) => m[1]!,
  );
  expect(codes).toHaveLength(10);
  return { secret, codes };
}

/** Password then code; the response of the code's page. */
async function signInWithCode(app: TestApp, user: typeof ANN, code: string, agent = new Agent(app)) {
  const first = await agent.login(user.username, user.password);
  expect(first.status).toBe(303);
  expect(first.headers.get("location")).toBe("/login/second-factor");
  expect(agent.cookies.has("sb_session")).toBe(false);
  const form = await agent.formToken("/login/second-factor");
  const res = await agent.request("/login/second-factor", { method: "POST", form: { _form: form, code } });
  return { agent, res };
}

describe("TOTP after the password", () => {
  let app: TestApp;
  const clock = new TestClock(Date.UTC(2026, 0, 5, 9, 0, 5), { stopped: true });
  let secret = "";
  let recovery: string[] = [];
  beforeAll(async () => {
    app = await startTestApp({}, undefined, { clock });
    await app.services.accounts.createUser(OWNER, "owner");
    await app.services.accounts.createUser(ANN, "member");
    ({ secret, codes: recovery } = await turnOn(await signedIn(app, ANN), clock));
  });
  afterAll(() => app.close());

  test("the password alone is no session: every page still sends to sign in, until the code", async () => {
    await clock.advance(31_000); // the step used to turn it on is taken
    const agent = new Agent(app);
    await agent.login(ANN.username, ANN.password);
    expect(agent.cookies.has("sb_second_step")).toBe(true);
    const page = await agent.request("/p/default");
    expect(page.status).toBe(303);
    expect(page.headers.get("location")).toStartWith("/login");
    expect((await agent.request("/settings/account")).status).toBe(303);
    const { res } = await signInWithCode(app, ANN, codeAt(secret, clock.now()), agent);
    expect(res.status).toBe(303);
    expect(agent.cookies.has("sb_session")).toBe(true);
    expect((await agent.request("/p/default")).status).toBe(200);
    const entry = (await app.services.audit.list()).find((e) => e.action === "sign_in.succeeded");
    expect(entry).toMatchObject({ subject: "user ann", detail: "password + totp" });
  });

  test("a code is taken once: the same code again (a replay in its 30 s) opens nothing", async () => {
    await clock.advance(30_000);
    const code = codeAt(secret, clock.now());
    expect((await signInWithCode(app, ANN, code)).res.status).toBe(303);
    const replay = await signInWithCode(app, ANN, code);
    expect(replay.res.status).toBe(401);
    expect(replay.agent.cookies.has("sb_session")).toBe(false);
    expect(await replay.res.text()).toContain("not right, or was used already");
    const failed = (await app.services.audit.list()).find((e) => e.action === "sign_in.failed");
    expect(failed).toMatchObject({ subject: "user ann", detail: "wrong second-factor code" });
  });

  test("a recovery code signs in once; it counts down in Settings → Account", async () => {
    await clock.advance(60_000);
    const { res, agent } = await signInWithCode(app, ANN, recovery[0]!.toUpperCase());
    expect(res.status).toBe(303);
    expect((await app.services.audit.list())[0]).toMatchObject({ detail: "password + recovery code" });
    expect(await (await agent.request("/settings/account")).text()).toContain("9 of 10 recovery codes left");
    expect((await signInWithCode(app, ANN, recovery[0]!)).res.status).toBe(401);
    expect((await signInWithCode(app, ANN, recovery[1]!)).res.status).toBe(303);
    await clock.advance(60_000);
  });

  test("the second step expires: after five minutes its code opens nothing, and the password is asked again", async () => {
    await clock.advance(60_000);
    const agent = new Agent(app);
    await agent.login(ANN.username, ANN.password);
    const form = await agent.formToken("/login/second-factor");
    await clock.advance(5 * 60_000 + 1);
    expect((await agent.request("/login/second-factor")).status).toBe(401);
    const late = await agent.request("/login/second-factor", {
      method: "POST",
      form: { _form: form, code: codeAt(secret, clock.now()) },
    });
    expect(late.status).toBe(401);
    expect(await late.text()).toContain("Sign in again");
    expect(agent.cookies.has("sb_session")).toBe(false);
    // A forged cookie is no step either.
    const forged = new Agent(app);
    forged.cookies.set("sb_second_step", "not-a-step");
    expect((await forged.request("/login/second-factor")).status).toBe(401);
    await clock.advance(60_000);
  });

  test("turning it off needs a code (a wrong one refused), then the password alone signs in", async () => {
    await clock.advance(60_000);
    const { agent } = await signInWithCode(app, ANN, codeAt(secret, clock.now()));
    await clock.advance(30_000);
    const csrf = await agent.csrf();
    const wrong = await agent.request("/settings/account/totp/off", {
      method: "POST",
      form: { _csrf: csrf, code: "123456" },
    });
    expect(wrong.status).toBe(422);
    expect(
      await app.services.secondFactor.status(
        (await app.services.accounts.list()).find((u) => u.username === "ann")!.id,
      ),
    ).toMatchObject({ enabled: true });
    const off = await agent.request("/settings/account/totp/off", {
      method: "POST",
      form: { _csrf: csrf, code: codeAt(secret, clock.now()) },
    });
    expect(off.status).toBe(200);
    expect(await off.text()).toContain("Set up an authenticator");
    const trail = (await app.services.audit.list()).map((e) => e.action);
    expect(trail).toContain("second_factor.disabled");
    expect(trail).toContain("second_factor.enabled");
    const plain = new Agent(app);
    expect((await plain.login(ANN.username, ANN.password)).headers.get("location")).toBe("/");
    expect((await app.services.audit.list())[0]).toMatchObject({ action: "sign_in.succeeded", detail: "password" });
  });
});

describe("the sign-in limits", () => {
  const clock = new TestClock(Date.UTC(2026, 0, 7, 9, 0, 5), { stopped: true });
  test("wrong codes count as failed sign-ins under the same limit, and then even the right code waits", async () => {
    const app = await startTestApp({ "rate-limit-login": "4/m" }, undefined, { clock });
    await app.services.accounts.createUser(ANN, "member");
    const { secret } = await turnOn(await signedIn(app, ANN), clock);
    await clock.advance(30_000);
    const agent = new Agent(app);
    await agent.login(ANN.username, ANN.password); // charged, then given back: the password was right
    const form = await agent.formToken("/login/second-factor");
    const statuses = [];
    for (const code of ["000000", "111111", "222222", "333333", "444444"])
      statuses.push(
        (await agent.request("/login/second-factor", { method: "POST", form: { _form: form, code } })).status,
      );
    expect(statuses).toEqual([401, 401, 401, 401, 429]);
    const right = await agent.request("/login/second-factor", {
      method: "POST",
      form: { _form: form, code: codeAt(secret, clock.now()) },
    });
    expect(right.status).toBe(429);
    expect(agent.cookies.has("sb_session")).toBe(false);
    await app.close();
  });
});

describe("codes sent at once", () => {
  const clock = new TestClock(Date.UTC(2026, 0, 9, 9, 0, 5), { stopped: true });
  test("the same code, or the same recovery code, sent from three sign-ins at once signs in one", async () => {
    const app = await startTestApp({}, undefined, { clock });
    try {
      await app.services.accounts.createUser(ANN, "member");
      const { secret, codes } = await turnOn(await signedIn(app, ANN), clock);
      await clock.advance(30_000);
      for (const code of [codeAt(secret, clock.now()), codes[0]!]) {
        const agents = [new Agent(app), new Agent(app), new Agent(app)];
        const forms: string[] = [];
        for (const agent of agents) {
          await agent.login(ANN.username, ANN.password);
          forms.push(await agent.formToken("/login/second-factor"));
        }
        const answers = await Promise.all(
          agents.map((agent, i) =>
            agent.request("/login/second-factor", { method: "POST", form: { _form: forms[i]!, code } }),
          ),
        );
        expect(answers.map((r) => r.status).sort()).toEqual([303, 401, 401]);
        expect(agents.filter((a) => a.cookies.has("sb_session"))).toHaveLength(1);
      }
    } finally {
      await app.close();
    }
  });

  test("a code and a recovery code sent at once in one sign-in open one session", async () => {
    const app = await startTestApp({}, undefined, { clock });
    try {
      await app.services.accounts.createUser(ANN, "member");
      const { secret, codes } = await turnOn(await signedIn(app, ANN), clock);
      await clock.advance(30_000);
      const agent = new Agent(app);
      await agent.login(ANN.username, ANN.password);
      const form = await agent.formToken("/login/second-factor");
      const answers = await Promise.all(
        [codeAt(secret, clock.now()), codes[0]!].map((code) =>
          agent.request("/login/second-factor", { method: "POST", form: { _form: form, code } }),
        ),
      );
      expect(answers.map((r) => r.status).sort()).toEqual([303, 401]);
      const opened = (await app.services.audit.list()).filter((e) => e.action === "sign_in.succeeded");
      expect(opened.filter((e) => e.detail !== "password")).toHaveLength(1);
    } finally {
      await app.close();
    }
  });
});

describe("wrong codes from many addresses", () => {
  const clock = new TestClock(Date.UTC(2026, 0, 8, 9, 0, 5), { stopped: true });
  test("are limited per person too: someone with the password cannot guess codes from address after address", async () => {
    // Behind a trusted reverse proxy, so that each guess can come from an address of its own.
    const server = await startTestServer({ "rate-limit-login": "4/m", "trust-proxy": "127.0.0.1" }, undefined, {
      clock,
    });
    try {
      await server.services.accounts.createUser(ANN, "member");
      const { secret } = await turnOn(await signedIn(server, ANN), clock);
      await clock.advance(30_000);
      const agent = new Agent(server);
      await agent.login(ANN.username, ANN.password);
      const form = await agent.formToken("/login/second-factor");
      const from = (n: number, code: string) =>
        agent.request("/login/second-factor", {
          method: "POST",
          headers: { "X-Forwarded-For": `203.0.113.${n}` },
          form: { _form: form, code },
        });
      const statuses = [];
      for (let n = 1; n <= 6; n++) statuses.push((await from(n, String(n).repeat(6))).status);
      expect(statuses).toEqual([401, 401, 401, 401, 429, 429]);
      // Even the right code, from yet another address, waits.
      expect((await from(99, codeAt(secret, clock.now()))).status).toBe(429);
      expect(agent.cookies.has("sb_session")).toBe(false);
    } finally {
      await server.close();
    }
  });
});

describe("a second factor required of everyone", () => {
  let app: TestApp;
  const clock = new TestClock(Date.UTC(2026, 0, 6, 9, 0, 5), { stopped: true });
  beforeAll(async () => {
    app = await startTestApp({}, undefined, { clock });
    await app.services.accounts.createUser(OWNER, "owner");
    await app.services.accounts.createUser(BEN, "member");
  });
  afterAll(() => app.close());

  test("only an admin sets it, on the Members page; it is in the audit trail", async () => {
    const ben = await signedIn(app, BEN);
    const refused = await ben.request("/settings/second-factor", {
      method: "POST",
      form: { _csrf: await ben.csrf(), required: "on" },
    });
    expect(refused.status).toBe(403);
    const owner = await signedIn(app, OWNER);
    const saved = await owner.request("/settings/second-factor", {
      method: "POST",
      form: { _csrf: await owner.csrf(), required: "on" },
    });
    expect(saved.status).toBe(303);
    expect(await app.services.secondFactor.required()).toBe(true);
    const page = await (await owner.request("/settings/members")).text();
    expect(page).toContain('data-testid="require-factor" checked');
    expect((await app.services.audit.list())[0]).toMatchObject({ action: "second_factor.required" });
  });

  test("someone without one sets it up right after the password, before any session; then it is asked for", async () => {
    const agent = new Agent(app);
    const first = await agent.login(BEN.username, BEN.password);
    expect(first.headers.get("location")).toBe("/login/second-factor");
    const page = await (await agent.request("/login/second-factor")).text();
    expect(page).toContain("Set up a second factor");
    expect(page).toContain("<svg");
    const secret = /data-testid="totp-key">([A-Z2-7 ]+)</.exec(page)![1]!.replace(/ /g, "");
    expect((await agent.request("/p/default")).status).toBe(303);
    const form = /name="_form" value="([^"]+)"/.exec(page)![1]!;
    const wrong = await agent.request("/login/second-factor", {
      method: "POST",
      form: { _form: form, code: "000000" },
    });
    expect(wrong.status).toBe(401);
    const done = await agent.request("/login/second-factor", {
      method: "POST",
      form: { _form: form, code: codeAt(secret, clock.now()) },
    });
    expect(done.status).toBe(200);
    expect([...(await done.text()).matchAll(/<li><code>/g)]).toHaveLength(10);
    expect((await agent.request("/p/default")).status).toBe(200);
    await clock.advance(30_000);
    const again = await signInWithCode(app, BEN, codeAt(secret, clock.now()));
    expect(again.res.status).toBe(303);
    // Turned off while required: the next sign-in asks to set one up again.
    await clock.advance(30_000);
    const csrf = await again.agent.csrf();
    await again.agent.request("/settings/account/totp/off", {
      method: "POST",
      form: { _csrf: csrf, code: codeAt(secret, clock.now()) },
    });
    const next = new Agent(app);
    await next.login(BEN.username, BEN.password);
    expect(await (await next.request("/login/second-factor")).text()).toContain("Set up a second factor");
  });
});
