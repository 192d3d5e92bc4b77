// Passkeys: added in Settings → Account and used after the password or alone, against a software
// authenticator written here (an ES256 key from node:crypto, "none" attestation in CBOR), so the
// server's real WebAuthn verification runs. Refusals: a bad signature, an unknown credential, a
// replayed or expired challenge, a counter going backwards, another origin; the sign-in limit;
// the audit trail's words; removing one; reset-2fa; a passkey counting where a factor is required.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from "node:crypto";
import { isoBase64URL, isoCBOR } from "@simplewebauthn/server/helpers";
import { TestClock } from "../clock.ts";
import { Agent, signedIn, startTestApp, type TestApp } from "../helpers.ts";

const ANN = { username: "ann", password: "ann password 1" };
const BEN = { username: "ben", password: "ben password 1" };
const ORIGIN = "http://signalboard.test"; // the in-process app's BASE_URL
const RP_ID = "signalboard.test";

const b64 = (bytes: Uint8Array) => isoBase64URL.fromBuffer(new Uint8Array(bytes));
const sha256 = (bytes: Uint8Array | string) => new Uint8Array(createHash("sha256").update(bytes).digest());
const u32 = (n: number) => {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, n);
  return out;
};
const concat = (...parts: Uint8Array[]) => new Uint8Array(Buffer.concat(parts));

const UP = 0x01;
const UV = 0x04;
const AT = 0x40;

/** One credential on a software authenticator: a P-256 key, its id, its counter. */
class SoftKey {
  readonly id = new Uint8Array(randomBytes(16));
  readonly privateKey: KeyObject;
  readonly cose: Uint8Array;
  counter = 0;
  userHandle = "";
  constructor(readonly origin = ORIGIN) {
    const pair = generateKeyPairSync("ec", { namedCurve: "P-256" });
    this.privateKey = pair.privateKey;
    const jwk = pair.publicKey.export({ format: "jwk" });
    const coseKey = new Map<number, number | Uint8Array>([
      [1, 2], // kty: EC2
      [3, -7], // alg: ES256
      [-1, 1], // crv: P-256
      [-2, isoBase64URL.toBuffer(jwk.x!)],
      [-3, isoBase64URL.toBuffer(jwk.y!)],
    ]);
    this.cose = isoCBOR.encode(coseKey);
  }

  private clientData(type: string, challenge: string, origin = this.origin) {
    return new TextEncoder().encode(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }

  /** navigator.credentials.create's answer, as @simplewebauthn/browser sends it. */
  create(options: { challenge: string; user: { id: string } }, flags = UP | UV | AT) {
    this.userHandle = options.user.id;
    const clientDataJSON = this.clientData("webauthn.create", options.challenge);
    const authData = concat(
      sha256(RP_ID),
      new Uint8Array([flags]),
      u32(this.counter),
      new Uint8Array(16), // aaguid
      new Uint8Array([0, this.id.length]),
      this.id,
      this.cose,
    );
    const attestationObject = isoCBOR.encode(
      new Map<string, unknown>([
        ["fmt", "none"],
        ["attStmt", new Map()],
        ["authData", authData],
      ]) as never,
    );
    return {
      id: b64(this.id),
      rawId: b64(this.id),
      type: "public-key",
      response: {
        clientDataJSON: b64(clientDataJSON),
        attestationObject: b64(attestationObject),
        transports: ["internal"],
      },
      clientExtensionResults: {},
      authenticatorAttachment: "platform",
    };
  }

  /** navigator.credentials.get's answer; `tamper` breaks the signature, `origin` signs for another site. */
  get(
    options: { challenge: string },
    opts: { tamper?: boolean; origin?: string; counter?: number; flags?: number } = {},
  ) {
    const counter = opts.counter ?? ++this.counter; // a stale counter given is not kept
    const clientDataJSON = this.clientData("webauthn.get", options.challenge, opts.origin);
    const authenticatorData = concat(sha256(RP_ID), new Uint8Array([opts.flags ?? UP | UV]), u32(counter));
    const signature = new Uint8Array(
      sign("sha256", concat(authenticatorData, sha256(clientDataJSON)), this.privateKey),
    );
    if (opts.tamper) signature[signature.length - 1]! ^= 0xff;
    return {
      id: b64(this.id),
      rawId: b64(this.id),
      type: "public-key",
      response: {
        clientDataJSON: b64(clientDataJSON),
        authenticatorData: b64(authenticatorData),
        signature: b64(signature),
        userHandle: this.userHandle,
      },
      clientExtensionResults: {},
      authenticatorAttachment: "platform",
    };
  }
}

const JSON_ACCEPT = { Accept: "application/json" };

/** Adds `key` to `agent`'s account in Settings → Account, named `name`. */
async function addPasskey(agent: Agent, key: SoftKey, name: string) {
  const csrf = await agent.csrf();
  const optionsRes = await agent.request("/settings/account/passkeys/options", {
    method: "POST",
    headers: JSON_ACCEPT,
    form: { _csrf: csrf },
  });
  expect(optionsRes.status).toBe(200);
  const options = await optionsRes.json();
  expect(options.rp).toEqual({ name: "Signalboard", id: RP_ID });
  expect(options.authenticatorSelection).toMatchObject({ residentKey: "preferred", userVerification: "preferred" });
  const res = await agent.request("/settings/account/passkeys", {
    method: "POST",
    headers: JSON_ACCEPT,
    form: { _csrf: csrf, name, response: JSON.stringify(key.create(options)) },
  });
  return { res, options };
}

/** Asks for sign-in options (alone, or the second step) and answers with `answer(options)`. */
async function passkeySignIn(
  agent: Agent,
  answer: (options: { challenge: string; allowCredentials?: { id: string }[] }) => unknown | Promise<unknown>,
  step = false,
) {
  const base = step ? "/login/second-factor/passkey" : "/login/passkey";
  const form = await agent.formToken(step ? "/login/second-factor" : "/login");
  const optionsRes = await agent.request(`${base}/options`, {
    method: "POST",
    headers: JSON_ACCEPT,
    form: { _form: form },
  });
  expect(optionsRes.status).toBe(200);
  const options = await optionsRes.json();
  const res = await agent.request(base, {
    method: "POST",
    headers: JSON_ACCEPT,
    form: { _form: form, next: "/p/default", response: JSON.stringify(await answer(options)) },
  });
  return { res, options, form };
}

describe("passkeys", () => {
  let app: TestApp;
  const clock = new TestClock(Date.UTC(2026, 0, 5, 9, 0, 5), { stopped: true });
  const laptop = new SoftKey();
  beforeAll(async () => {
    app = await startTestApp({}, undefined, { clock });
    await app.services.accounts.createUser({ username: "owner", password: "owner password 1" }, "owner");
    await app.services.accounts.createUser(ANN, "member");
    await app.services.accounts.createUser(BEN, "member");
  });
  afterAll(() => app.close());
  const audit = async () => app.services.audit.list();

  test("are added in Settings → Account, listed with their name, and in the audit trail", async () => {
    const agent = await signedIn(app, ANN);
    const { res } = await addPasskey(agent, laptop, "Laptop");
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ name: "Laptop", next: "/settings/account" });
    const page = await (await agent.request("/settings/account")).text();
    expect(page).toContain('data-testid="passkey-item-name">Laptop<');
    expect(page).toContain("never used");
    expect((await audit())[0]).toMatchObject({
      action: "second_factor.enabled",
      subject: "user ann",
      detail: 'passkey "Laptop"',
    });
    // The next offer leaves it out (excludeCredentials), and the same credential twice is refused.
    const again = await addPasskey(agent, laptop, "Laptop again");
    expect(again.options.excludeCredentials).toEqual([
      { id: b64(laptop.id), type: "public-key", transports: ["internal"] },
    ]);
    expect(again.res.status).toBe(409);
  });

  test("a registration's challenge is single use, for its person, and its answer must be for our origin", async () => {
    const agent = await signedIn(app, BEN);
    const csrf = await agent.csrf();
    const options = await (
      await agent.request("/settings/account/passkeys/options", {
        method: "POST",
        headers: JSON_ACCEPT,
        form: { _csrf: csrf },
      })
    ).json();
    const elsewhere = new SoftKey("https://evil.test");
    const wrongOrigin = await agent.request("/settings/account/passkeys", {
      method: "POST",
      headers: JSON_ACCEPT,
      form: { _csrf: csrf, name: "Phish", response: JSON.stringify(elsewhere.create(options)) },
    });
    expect(wrongOrigin.status).toBe(400);
    expect((await wrongOrigin.json()).message).toContain("origin");
    const replay = await agent.request("/settings/account/passkeys", {
      method: "POST",
      headers: JSON_ACCEPT,
      form: { _csrf: csrf, name: "Phone", response: JSON.stringify(new SoftKey().create(options)) },
    });
    expect(replay.status).toBe(400);
    expect(await replay.json()).toMatchObject({ error: "challenge_expired" });
    const unnamed = await addPasskey(agent, new SoftKey(), "  ");
    expect(unnamed.res.status).toBe(400);
    expect((await unnamed.res.json()).message).toContain("name");
    expect(await app.services.passkeys.list((await app.store.users.findByUsername("ben"))!.id)).toEqual([]);
  });

  test("after the right password, the passkey is the second step: a session, 'password + passkey'", async () => {
    const agent = new Agent(app);
    const first = await agent.login(ANN.username, ANN.password);
    expect(first.headers.get("location")).toBe("/login/second-factor");
    const page = await (await agent.request("/login/second-factor")).text();
    expect(page).toContain("Use a passkey");
    expect(page).not.toContain('name="code"'); // no authenticator app: no code field
    const { res, options } = await passkeySignIn(agent, (o) => laptop.get(o), true);
    expect(options.allowCredentials).toEqual([{ id: b64(laptop.id), type: "public-key", transports: ["internal"] }]);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ next: "/" });
    expect(agent.cookies.has("sb_session")).toBe(true);
    expect((await agent.request("/settings/account")).status).toBe(200);
    expect((await audit())[0]).toMatchObject({
      action: "sign_in.succeeded",
      subject: "user ann",
      detail: "password + passkey",
    });
    expect(await (await agent.request("/settings/account")).text()).toContain("last used");
  });

  test("the second step takes only that person's passkey", async () => {
    const bens = new SoftKey();
    expect((await addPasskey(await signedIn(app, BEN), bens, "Ben's")).res.status).toBe(200);
    const agent = new Agent(app);
    await agent.login(BEN.username, BEN.password);
    const { res } = await passkeySignIn(agent, (o) => laptop.get(o), true); // ann's
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: "passkey_unknown" });
    expect(agent.cookies.has("sb_session")).toBe(false);
  });

  test("alone, a passkey signs in: the credential names the person, 'passkey' in the trail", async () => {
    const agent = new Agent(app);
    expect(await (await agent.request("/login")).text()).toContain("Sign in with a passkey");
    const { res, options } = await passkeySignIn(agent, (o) => laptop.get(o));
    expect(options.allowCredentials ?? []).toEqual([]); // discoverable: the authenticator offers its own
    expect(options.userVerification).toBe("required");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ next: "/p/default" });
    expect(agent.cookies.has("sb_session")).toBe(true);
    expect((await audit())[0]).toMatchObject({ action: "sign_in.succeeded", subject: "user ann", detail: "passkey" });
  });

  test("alone, a passkey that did not verify its user (no PIN, no fingerprint) is refused", async () => {
    const { res } = await passkeySignIn(new Agent(app), (o) => laptop.get(o, { flags: UP }));
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: "passkey_refused" });
  });

  test("refusals: a bad signature, an unknown credential, another origin, a counter going back", async () => {
    const cases = [
      {
        answer: (o: { challenge: string }) => laptop.get(o, { tamper: true }),
        code: "passkey_refused",
        why: "signature",
      },
      { answer: (o: { challenge: string }) => new SoftKey().get(o), code: "passkey_unknown", why: "not known here" },
      {
        answer: (o: { challenge: string }) => laptop.get(o, { origin: "https://evil.test" }),
        code: "passkey_refused",
        why: "origin",
      },
      { answer: (o: { challenge: string }) => laptop.get(o, { counter: 1 }), code: "passkey_refused", why: "counter" },
    ];
    for (const c of cases) {
      const agent = new Agent(app);
      const { res } = await passkeySignIn(agent, c.answer);
      expect(res.status).toBe(401);
      const body = await res.json();
      expect(body).toMatchObject({ success: false, statusCode: 401, error: c.code });
      expect(body.message.toLowerCase()).toContain(c.why === "not known here" ? "not known here" : c.why);
      expect(agent.cookies.has("sb_session")).toBe(false);
      const entry = (await audit())[0]!;
      expect(entry.action).toBe("sign_in.failed");
      expect(entry.detail).toStartWith("passkey: ");
      expect(entry.detail!.toLowerCase()).toContain(c.why);
    }
  });

  test("a challenge is single use and expires: a replayed answer and a late one open nothing", async () => {
    const agent = new Agent(app);
    const form = await agent.formToken("/login");
    const options = await (
      await agent.request("/login/passkey/options", { method: "POST", headers: JSON_ACCEPT, form: { _form: form } })
    ).json();
    const answer = JSON.stringify(laptop.get(options));
    const send = () =>
      agent.request("/login/passkey", {
        method: "POST",
        headers: JSON_ACCEPT,
        form: { _form: form, response: answer },
      });
    expect((await send()).status).toBe(200);
    const replay = await send();
    expect(replay.status).toBe(400);
    expect(await replay.json()).toMatchObject({ error: "challenge_expired" });
    expect((await audit())[0]).toMatchObject({
      action: "sign_in.failed",
      detail: "passkey: an expired or used challenge",
    });

    const late = await passkeySignIn(new Agent(app), async (o) => {
      await clock.advance(5 * 60_000 + 1);
      return laptop.get(o);
    });
    expect(late.res.status).toBe(400);
    expect(await late.res.json()).toMatchObject({ error: "challenge_expired" });
  });

  test("a form without its token, or not JSON, is refused plainly", async () => {
    const agent = new Agent(app);
    await agent.formToken("/login");
    const noToken = await agent.request("/login/passkey/options", { method: "POST", headers: JSON_ACCEPT, form: {} });
    expect(noToken.status).toBe(403);
    const form = await agent.formToken("/login");
    const bad = await agent.request("/login/passkey", {
      method: "POST",
      headers: JSON_ACCEPT,
      form: { _form: form, response: "not json" },
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: "validation_error" });
  });
});

describe("removing, reset-2fa, and a factor required of everyone", () => {
  let app: TestApp;
  const clock = new TestClock(Date.UTC(2026, 0, 6, 9, 0, 5), { stopped: true });
  beforeAll(async () => {
    app = await startTestApp({}, undefined, { clock });
    await app.services.accounts.createUser(ANN, "owner");
  });
  afterAll(() => app.close());

  test("a passkey is removed with the password (a wrong one is refused and changes nothing)", async () => {
    const agent = await signedIn(app, ANN);
    await addPasskey(agent, new SoftKey(), "Phone");
    const page = await (await agent.request("/settings/account")).text();
    const action = /action="(\/settings\/account\/passkeys\/\d+\/remove)"/.exec(page)![1]!;
    const csrf = await agent.csrf();
    const wrong = await agent.request(action, { method: "POST", form: { _csrf: csrf, confirm: "not my password" } });
    expect(wrong.status).toBe(422);
    expect(await wrong.text()).toContain("not your password");
    const done = await agent.request(action, { method: "POST", form: { _csrf: csrf, confirm: ANN.password } });
    expect(done.status).toBe(200);
    expect(await done.text()).toContain('data-testid="passkey-removed"');
    expect((await app.services.audit.list())[0]).toMatchObject({
      action: "second_factor.disabled",
      detail: 'passkey "Phone"; removed by themselves, with their password',
    });
    const gone = await agent.request(action, { method: "POST", form: { _csrf: csrf, confirm: ANN.password } });
    expect(gone.status).toBe(404);
  });

  test("reset-2fa removes the passkeys too, and says so", async () => {
    const agent = await signedIn(app, ANN);
    await addPasskey(agent, new SoftKey(), "A");
    await addPasskey(agent, new SoftKey(), "B");
    expect(await app.services.secondFactor.reset("ann")).toEqual({ totp: false, passkeys: 2 });
    expect((await app.services.audit.list())[0]).toMatchObject({
      action: "second_factor.reset",
      detail: "2 passkeys removed from the command line (a lost authenticator)",
    });
    expect(await app.services.secondFactor.reset("ann")).toEqual({ totp: false, passkeys: 0 });
  });

  test("where a second factor is required, a passkey counts as one: asked for, not set up anew", async () => {
    const key = new SoftKey();
    await addPasskey(await signedIn(app, ANN), key, "Laptop");
    await app.services.secondFactor.setRequired(true, { userId: null, name: "test", ip: null });
    const agent = new Agent(app);
    await agent.login(ANN.username, ANN.password);
    const page = await (await agent.request("/login/second-factor")).text();
    expect(page).toContain('data-testid="second-step"');
    expect(page).toContain("Use a passkey");
    const { res } = await passkeySignIn(agent, (o) => key.get(o), true);
    expect(res.status).toBe(200);
  });
});

describe("the sign-in limit", () => {
  test("failed passkey answers count as failed sign-ins, under the passwords' limit", async () => {
    const clock = new TestClock(Date.UTC(2026, 0, 7, 9, 0, 5), { stopped: true });
    const app = await startTestApp({ "rate-limit-login": "4/m" }, undefined, { clock });
    await app.services.accounts.createUser(ANN, "owner");
    const key = new SoftKey();
    await addPasskey(await signedIn(app, ANN), key, "Laptop");
    const statuses = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await passkeySignIn(new Agent(app), (o) => key.get(o, { tamper: true }))).res.status);
    const right = await passkeySignIn(new Agent(app), (o) => key.get(o));
    statuses.push(right.res.status);
    expect(statuses).toEqual([401, 401, 401, 401, 429]);
    await app.close();
  });

  test("with password sign-in turned off, the sign-in page still offers a passkey", async () => {
    const app = await startTestApp({ "password-login": "off" });
    await app.services.accounts.createUser(ANN, "owner");
    const page = await (await new Agent(app).request("/login")).text();
    expect(page).not.toContain('name="password"');
    expect(page).toContain("Sign in with a passkey");
    await app.close();
  });
});
