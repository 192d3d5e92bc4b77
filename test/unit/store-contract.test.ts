// The repositories' contract, run against the store of the pass (SQLite, or PostgreSQL in npm
// test's second pass): what each plain aggregate (src/store/aggregates) promises, written once.
// Every write goes through the store's front (a transaction of its own), as services call it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { openPgStore } from "../../src/store/pg/index.ts";
import { openSqliteStore } from "../../src/store/sqlite/index.ts";
import { IDEMPOTENCY_TTL_MS } from "../../src/store/aggregates/idempotency.ts";
import { ACCESS, type Store } from "../../src/store/store.ts";
import type { NewAlert } from "../../src/model/alert.ts";
import type { NewCheck } from "../../src/model/check.ts";
import type { NewEvent } from "../../src/model/event.ts";
import type { NewToken } from "../../src/model/token.ts";
import { createDatabase, dropDatabase } from "../pg-cluster.ts";
import { POSTGRES, tempDir } from "../helpers.ts";

const NOW = Date.UTC(2026, 10, 1);

let store: Store;
let close: () => Promise<void>;
let names = 0;

beforeAll(async () => {
  if (POSTGRES) {
    const url = await createDatabase(POSTGRES);
    const pg = await openPgStore(url);
    store = pg;
    close = async () => {
      await pg.close();
      await dropDatabase(POSTGRES!, url);
    };
  } else {
    const sqlite = openSqliteStore(join(tempDir(), "signalboard.db"));
    store = sqlite;
    close = () => sqlite.close();
  }
});
afterAll(() => close());

const nameOf = async (projectId: number) => (await store.projects.findById(projectId))!.name;

/** A project of its own for each test. */
async function project(): Promise<number> {
  const made = await store.projects.create(`contract-${++names}`, NOW);
  return made!.id;
}

describe("the store's front", () => {
  test("has every method ACCESS declares, and no other", () => {
    for (const [aggregate, methods] of Object.entries(ACCESS)) {
      const front = (store as unknown as Record<string, Record<string, unknown>>)[aggregate]!;
      expect({ aggregate, methods: Object.keys(front).sort() }).toEqual({
        aggregate,
        methods: Object.keys(methods).sort(),
      });
    }
  });

  test("runs a write that throws as a transaction undone alone", async () => {
    const id = await project();
    await expect(
      store.tx(async (r) => {
        await r.charts.create({ projectId: id, kind: "series", name: "gone", definition: {}, createdAt: NOW }, NOW);
        throw new Error("changed my mind");
      }),
    ).rejects.toThrow("changed my mind");
    expect(await store.charts.list(id)).toEqual([]);
  });
});

describe("charts", () => {
  test("are created, found, listed in order, changed and deleted", async () => {
    const projectId = await project();
    const definition = { event: "Signed up", interval: "day", nested: { a: [1, "ü"] } };
    const a = await store.charts.create(
      { projectId, kind: "series", name: "Sign-ups", definition, createdAt: NOW },
      NOW,
    );
    const b = await store.charts.create(
      { projectId, kind: "funnel", name: "Checkout", definition: { steps: ["a", "b"] }, createdAt: NOW },
      NOW + 1,
    );
    expect(a).toEqual({
      id: a.id,
      projectId,
      kind: "series",
      name: "Sign-ups",
      definition,
      createdAt: NOW,
      updatedAt: NOW,
    });
    expect(await store.charts.find(a.id)).toEqual(a);
    expect((await store.charts.list(projectId)).map((c) => c.id)).toEqual([a.id, b.id]);

    const changed = await store.charts.update(a.id, { name: "Sign ups" }, NOW + 5);
    expect(changed).toEqual({ ...a, name: "Sign ups", updatedAt: NOW + 5 });
    expect(await store.charts.update(a.id, { definition: { event: "x" } }, NOW + 6)).toMatchObject({
      name: "Sign ups",
      definition: { event: "x" },
    });
    expect(await store.charts.update(999_999, { name: "none" }, NOW)).toBeNull();

    expect(await store.charts.delete(a.id)).toBe(true);
    expect(await store.charts.delete(a.id)).toBe(false);
    expect(await store.charts.find(a.id)).toBeNull();
  });

  test("keep a dashboard's layout, and a locked read of one never arranged finds none", async () => {
    const projectId = await project();
    expect(await store.charts.layout(projectId)).toBeNull();
    expect(await store.tx((r) => r.charts.layout(projectId, { lock: true }))).toBeNull();
    await store.charts.setLayout(projectId, ["activity", 3, 1], NOW);
    expect(await store.charts.layout(projectId)).toEqual(["activity", 3, 1]);
    await store.tx(async (r) => {
      const cards = await r.charts.layout(projectId, { lock: true });
      await r.charts.setLayout(projectId, [...(cards ?? []), 7], NOW + 1);
    });
    expect(await store.charts.layout(projectId)).toEqual(["activity", 3, 1, 7]);
  });
});

describe("hooks", () => {
  test("are created, found by id, listed in order, changed and deleted; their project's deletion takes them", async () => {
    const projectId = await project();
    const config = { mapping: { event: "$.title", tags: { env: "$.env" } }, signature_header: "X-Sig" };
    const a = await store.hooks.create({
      id: "hookAAAAAAAAAAAAAAAAAAAA",
      projectId,
      kind: "generic",
      name: "Deploys",
      channel: "hooks",
      secret: null,
      config,
      createdAt: NOW,
    });
    const b = await store.hooks.create({
      id: "hookBBBBBBBBBBBBBBBBBBBB",
      projectId,
      kind: "stripe",
      name: "Payments",
      channel: "stripe",
      secret: "whsec_x",
      config: {},
      createdAt: NOW + 1,
    });
    expect(a).toEqual({
      id: "hookAAAAAAAAAAAAAAAAAAAA",
      projectId,
      kind: "generic",
      name: "Deploys",
      channel: "hooks",
      secret: null,
      config,
      createdAt: NOW,
    });
    expect(await store.hooks.find(b.id)).toEqual(b);
    expect(await store.hooks.find("nothing-here")).toBeNull();
    expect((await store.hooks.list(projectId)).map((h) => h.id)).toEqual([a.id, b.id]);
    expect(await store.hooks.update(b.id, { name: "Billing", secret: "whsec_y" })).toEqual({
      ...b,
      name: "Billing",
      secret: "whsec_y",
    });
    expect(await store.hooks.update("nothing-here", { name: "x" })).toBeNull();
    expect(await store.hooks.delete(a.id)).toBe(true);
    expect(await store.hooks.delete(a.id)).toBe(false);
    await store.projects.delete(projectId);
    expect(await store.hooks.find(b.id)).toBeNull();
  });
});

describe("tokens", () => {
  const token = (name: string, more: Partial<NewToken> = {}): NewToken => ({
    name,
    kind: "full",
    projectId: null,
    channel: null,
    prefix: `sb_${name}`,
    hash: `hash of ${name}`,
    mayNotify: false,
    createdBy: null,
    createdByUserId: null,
    createdAt: NOW,
    projectIds: null,
    ...more,
  });

  test("are inserted with their project and limits, found by prefix and id, listed newest first", async () => {
    const a = await project();
    const b = await project();
    const names = [await nameOf(a), await nameOf(b)].sort();
    const full = await store.tokens.insert(token(`full${a}`, { createdBy: "ann", createdByUserId: 7 }));
    expect(full).toEqual({
      id: full.id,
      name: `full${a}`,
      kind: "full",
      projectId: null,
      project: null,
      projects: null,
      channel: null,
      prefix: `sb_full${a}`,
      hash: `hash of full${a}`,
      mayNotify: false,
      createdBy: "ann",
      createdByUserId: 7,
      createdAt: NOW,
      lastUsedAt: null,
      revokedAt: null,
    });
    const limited = await store.tokens.insert(token(`limited${a}`, { projectIds: [b, a], createdAt: NOW + 1 }));
    expect(limited.projects).toEqual(names);
    const none = await store.tokens.insert(token(`none${a}`, { projectIds: [], createdAt: NOW + 1 }));
    expect(none.projects).toEqual([]);
    const pub = await store.tokens.insert(
      token(`public${a}`, { kind: "public", projectId: a, channel: "web", mayNotify: true, createdAt: NOW + 2 }),
    );
    expect(pub).toMatchObject({ projectId: a, project: await nameOf(a), channel: "web", mayNotify: true });

    expect(await store.tokens.findByPrefix(`sb_limited${a}`)).toEqual(limited);
    expect(await store.tokens.findByPrefix(`sb_public${a}`)).toEqual(pub);
    expect(await store.tokens.findById(full.id)).toEqual(full);
    expect(await store.tokens.findByPrefix("sb_nobody")).toBeNull();
    expect(await store.tokens.findById(999_999)).toBeNull();

    const mine = (list: { id: number }[]) =>
      list.map((t) => t.id).filter((id) => [full.id, limited.id, none.id, pub.id].includes(id));
    expect(mine(await store.tokens.list())).toEqual([pub.id, none.id, limited.id, full.id]);
    expect((await store.tokens.list()).find((t) => t.id === limited.id)).toEqual(limited);
  });

  test("are revoked once, by id or by maker, and leave the list of live ones", async () => {
    const a = await project();
    const one = await store.tokens.insert(token(`one${a}`));
    expect(await store.tokens.activeNamed(`one${a}`)).toBe(true);
    expect(await store.tx((r) => r.tokens.activeNamed(`one${a}`))).toBe(true);
    expect(await store.tx((r) => r.tokens.activeNamed(`two${a}`))).toBe(false);
    expect(await store.tokens.revoke(one.id, NOW + 5)).toBe(true);
    expect(await store.tokens.revoke(one.id, NOW + 6)).toBe(false);
    expect((await store.tokens.findById(one.id))!.revokedAt).toBe(NOW + 5);
    expect(await store.tokens.activeNamed(`one${a}`)).toBe(false);
    expect((await store.tokens.list()).some((t) => t.id === one.id)).toBe(false);
    expect((await store.tokens.list(true)).some((t) => t.id === one.id)).toBe(true);

    const maker = 1000 + a;
    await store.tokens.insert(token(`m1${a}`, { createdByUserId: maker }));
    await store.tokens.insert(token(`m2${a}`, { createdByUserId: maker }));
    expect(await store.tokens.revokeCreatedBy(maker, NOW)).toBe(2);
    expect(await store.tokens.revokeCreatedBy(maker, NOW)).toBe(0);
  });

  test("of a maker narrowed to some projects: public ones elsewhere revoked, full ones limited", async () => {
    const a = await project();
    const b = await project();
    const c = await project();
    const maker = 2000 + a;
    const mine = { createdByUserId: maker };
    const pubA = await store.tokens.insert(token(`pa${a}`, { ...mine, kind: "public", projectId: a }));
    const pubB = await store.tokens.insert(token(`pb${a}`, { ...mine, kind: "public", projectId: b }));
    const every = await store.tokens.insert(token(`every${a}`, mine));
    const some = await store.tokens.insert(token(`some${a}`, { ...mine, projectIds: [a, c] }));
    const other = await store.tokens.insert(token(`other${a}`, { createdByUserId: maker + 1 }));

    expect(await store.tokens.narrowCreatedBy(maker, [a, b], NOW + 9)).toBe(0);
    expect(await store.tokens.narrowCreatedBy(maker, [a], NOW + 9)).toBe(1);
    expect((await store.tokens.findById(pubA.id))!.revokedAt).toBeNull();
    expect((await store.tokens.findById(pubB.id))!.revokedAt).toBe(NOW + 9);
    expect((await store.tokens.findById(every.id))!.projects).toEqual([await nameOf(a)]);
    expect((await store.tokens.findById(some.id))!.projects).toEqual([await nameOf(a)]);
    expect((await store.tokens.findById(other.id))!.projects).toBeNull();
    expect(await store.tokens.narrowCreatedBy(maker, [], NOW)).toBe(1);
    expect((await store.tokens.findById(every.id))!.projects).toEqual([]);
  });

  test("keep whether they may notify and when they were last used", async () => {
    const a = await project();
    const pub = await store.tokens.insert(token(`n${a}`, { kind: "public", projectId: a }));
    await store.tokens.setMayNotify(pub.id, true);
    await store.tokens.touch(pub.id, NOW + 77);
    expect(await store.tokens.findById(pub.id)).toEqual({ ...pub, mayNotify: true, lastUsedAt: NOW + 77 });
    await store.tokens.setMayNotify(pub.id, false);
    expect((await store.tokens.findByPrefix(pub.prefix))!.mayNotify).toBe(false);
  });

  test("a revocation changes the access version; a touch does not", async () => {
    const a = await project();
    const one = await store.tokens.insert(token(`v${a}`));
    const before = store.accessVersion();
    await store.tokens.touch(one.id, NOW);
    expect(store.accessVersion()).toBe(before);
    await store.tokens.revoke(one.id, NOW);
    expect(store.accessVersion()).not.toBe(before);
  });
});

describe("factors", () => {
  const person = async () =>
    (await store.users.create(
      { username: `factor-${Math.random().toString(36).slice(2, 10)}`, passwordHash: "h", role: "member" },
      NOW,
    ))!;

  test("a TOTP factor is kept once confirmed, takes each step once, and goes with its recovery codes", async () => {
    const u = await person();
    const other = await person();
    expect(await store.factors.totp(u.id)).toBeNull();
    expect(await store.factors.takeStep(u.id, 10)).toBe(false); // no factor: nothing to take
    expect(await store.factors.enableTotp(u.id, "SECRET", 10, ["h1", "h2"], NOW)).toBe(true);
    expect(await store.factors.enableTotp(u.id, "OTHER", 11, ["h3"], NOW)).toBe(false); // one is on already
    expect(await store.factors.totp(u.id)).toEqual({
      secret: "SECRET",
      confirmedAt: NOW,
      lastStep: 10,
      createdAt: NOW,
    });
    expect(await store.factors.withFactor([u.id, other.id, 999_999])).toEqual([u.id]);
    expect(await store.factors.withFactor([])).toEqual([]);
    expect(await store.factors.takeStep(u.id, 10)).toBe(false); // the step it was confirmed with
    expect(await store.factors.takeStep(u.id, 12)).toBe(true);
    expect(await store.factors.takeStep(u.id, 12)).toBe(false); // a replay
    expect(await store.factors.takeStep(u.id, 11)).toBe(false); // an older code after a newer one
    expect(await store.factors.recoveryCodesLeft(u.id)).toBe(2);
    expect(await store.factors.useRecoveryCode(other.id, "h1", NOW)).toBe(false); // not theirs
    expect(await store.factors.useRecoveryCode(u.id, "h1", NOW)).toBe(true);
    expect(await store.factors.useRecoveryCode(u.id, "h1", NOW)).toBe(false);
    expect(await store.factors.recoveryCodesLeft(u.id)).toBe(1);
    expect(await store.factors.removeTotp(u.id)).toBe(true);
    expect(await store.factors.removeTotp(u.id)).toBe(false);
    expect(await store.factors.totp(u.id)).toBeNull();
    expect(await store.factors.recoveryCodesLeft(u.id)).toBe(0);
    expect(await store.factors.enableTotp(u.id, "NEW", 20, ["h9"], NOW + 1)).toBe(true); // set up again
    await store.users.delete(u.id);
    expect(await store.factors.totp(u.id)).toBeNull();
  });

  test("a sign-in's second step is found until it expires, ended once, and pruned", async () => {
    const u = await person();
    const step = {
      userId: u.id,
      purpose: "enroll" as const,
      secret: "S",
      next: "/p/x",
      createdAt: NOW,
      expiresAt: NOW + 100,
    };
    await store.factors.createChallenge(`step-${u.id}`, step);
    await store.factors.createChallenge(`old-${u.id}`, {
      ...step,
      purpose: "verify",
      secret: null,
      expiresAt: NOW - 1,
    });
    expect(await store.factors.findChallenge(`step-${u.id}`, NOW)).toEqual(step);
    expect(await store.factors.findChallenge(`step-${u.id}`, NOW + 100)).toBeNull();
    expect(await store.factors.findChallenge(`old-${u.id}`, NOW)).toBeNull();
    expect(await store.factors.deleteExpiredChallenges(NOW)).toBeGreaterThanOrEqual(1);
    expect(await store.factors.findChallenge(`step-${u.id}`, NOW)).toEqual(step);
    await store.factors.deleteChallenge(`step-${u.id}`);
    expect(await store.factors.findChallenge(`step-${u.id}`, NOW)).toBeNull();
  });

  test("a challenge is taken once, only for its purpose and before it expires", async () => {
    const u = await person();
    const link = {
      userId: u.id,
      purpose: "link" as const,
      secret: null,
      next: "/",
      createdAt: NOW,
      expiresAt: NOW + 100,
    };
    await store.factors.createChallenge(`link-${u.id}`, link);
    expect(await store.factors.takeChallenge(`link-${u.id}`, "verify", NOW)).toBeNull();
    expect(await store.factors.takeChallenge(`link-${u.id}`, "link", NOW + 100)).toBeNull();
    const taken = await Promise.all([1, 2].map(() => store.factors.takeChallenge(`link-${u.id}`, "link", NOW)));
    expect(taken.filter(Boolean)).toEqual([link]);
    expect(await store.factors.findChallenge(`link-${u.id}`, NOW)).toBeNull();
  });

  test("passkeys are kept once per credential, listed, used with a counter that only goes up, and removed", async () => {
    const u = await person();
    const other = await person();
    const key = (credentialId: string, name: string, createdAt = NOW) => ({
      userId: u.id,
      credentialId,
      publicKey: "pk",
      counter: 0,
      transports: ["internal", "hybrid"],
      name,
      createdAt,
    });
    const cred = `cred-${u.id}`;
    const laptop = (await store.factors.addPasskey(key(cred, "Laptop")))!;
    expect(laptop).toEqual({ id: laptop.id, ...key(cred, "Laptop"), lastUsedAt: null });
    expect(await store.factors.addPasskey({ ...key(cred, "Again"), userId: other.id })).toBeNull(); // one owner
    const phone = (await store.factors.addPasskey({ ...key(`${cred}-2`, "Phone", NOW + 1), transports: [] }))!;
    expect((await store.factors.passkeys(u.id)).map((p) => p.name)).toEqual(["Laptop", "Phone"]);
    expect((await store.factors.passkeyByCredential(`${cred}-2`))?.transports).toEqual([]);
    expect(await store.factors.passkeyByCredential("nobody")).toBeNull();
    expect(await store.factors.withFactor([u.id, other.id])).toEqual([u.id]); // a passkey is a factor
    // Authenticators without a counter send 0 each time; one with a counter never goes back.
    expect(await store.factors.usePasskey(laptop.id, 0, NOW + 5)).toBe(true);
    expect(await store.factors.usePasskey(laptop.id, 7, NOW + 6)).toBe(true);
    expect(await store.factors.usePasskey(laptop.id, 7, NOW + 7)).toBe(false); // a replay
    expect(await store.factors.usePasskey(laptop.id, 3, NOW + 7)).toBe(false); // a clone behind
    expect(await store.factors.usePasskey(laptop.id, 0, NOW + 7)).toBe(false);
    expect(await store.factors.passkeyByCredential(cred)).toMatchObject({ counter: 7, lastUsedAt: NOW + 6 });
    expect(await store.factors.removePasskey(other.id, laptop.id)).toBeNull(); // not theirs
    expect((await store.factors.removePasskey(u.id, laptop.id))?.name).toBe("Laptop");
    expect(await store.factors.removePasskey(u.id, laptop.id)).toBeNull();
    expect(await store.factors.removePasskeys(u.id)).toBe(1);
    expect(await store.factors.passkeys(u.id)).toEqual([]);
    await store.factors.addPasskey(key(`${cred}-3`, "Key"));
    await store.users.delete(u.id);
    expect(await store.factors.passkeyByCredential(`${cred}-3`)).toBeNull();
    expect(phone.name).toBe("Phone");
  });

  test("a passkey challenge is taken once, not after it expired, and pruned", async () => {
    const u = await person();
    const c = {
      challenge: `ch-${u.id}`,
      purpose: "register" as const,
      userId: u.id,
      createdAt: NOW,
      expiresAt: NOW + 100,
    };
    await store.factors.createPasskeyChallenge(c);
    await store.factors.createPasskeyChallenge({ ...c, challenge: `open-${u.id}`, purpose: "sign_in", userId: null });
    await store.factors.createPasskeyChallenge({ ...c, challenge: `late-${u.id}`, expiresAt: NOW - 1 });
    expect(await store.factors.takePasskeyChallenge(`late-${u.id}`, NOW)).toBeNull();
    expect(await store.factors.takePasskeyChallenge(c.challenge, NOW)).toEqual(c);
    expect(await store.factors.takePasskeyChallenge(c.challenge, NOW)).toBeNull(); // single use
    expect(await store.factors.deleteExpiredChallenges(NOW + 101)).toBeGreaterThanOrEqual(1);
    expect(await store.factors.takePasskeyChallenge(`open-${u.id}`, NOW)).toBeNull(); // pruned
  });
});

describe("users", () => {
  let people = 0;
  const username = () => `person-${++people}-${Math.random().toString(36).slice(2, 8)}`;

  test("are created once per name, found, listed by name, and limited to projects by name", async () => {
    const a = await project();
    const b = await project();
    const before = await store.users.count();
    const name = username();
    const ann = await store.users.create({ username: name, passwordHash: "h1", role: "admin" }, NOW);
    expect(ann).toEqual({ id: ann!.id, username: name, role: "admin", projects: null, createdAt: NOW, updatedAt: NOW });
    expect(await store.users.create({ username: name, passwordHash: "h2", role: "viewer" }, NOW)).toBeNull();
    expect(await store.users.count()).toBe(before + 1);
    expect(await store.users.findByUsername(name)).toEqual({ ...ann!, passwordHash: "h1" });
    expect(await store.users.findByUsername("nobody at all")).toBeNull();
    expect(await store.users.findById(ann!.id)).toEqual(ann);
    expect(await store.users.findById(999_999)).toBeNull();

    const bob = await store.users.create(
      { username: `0${username()}`, passwordHash: "h", role: "member", projectIds: [b, a] },
      NOW + 1,
    );
    expect(bob!.projects).toEqual([await nameOf(a), await nameOf(b)].sort());
    const none = await store.users.create(
      { username: username(), passwordHash: "h", role: "viewer", projectIds: [] },
      NOW,
    );
    expect(none!.projects).toEqual([]);
    const list = await store.users.list();
    expect(list.map((u) => u.username)).toEqual(list.map((u) => u.username).sort());
    expect(list.find((u) => u.id === bob!.id)).toEqual(bob!);
  });

  test("are linked to one OpenID subject each, made with it or linked later", async () => {
    const subject = `sub-${username()}`;
    const made = (await store.users.create(
      { username: username(), passwordHash: "h", role: "viewer", oidcSubject: subject },
      NOW,
    ))!;
    expect(await store.users.findBySubject(subject)).toEqual(made);
    expect(await store.users.subjectOf(made.id)).toBe(subject);
    const later = (await store.users.create({ username: username(), passwordHash: "h", role: "member" }, NOW))!;
    expect(await store.users.subjectOf(later.id)).toBeNull();
    expect(await store.users.linkSubject(later.id, subject, NOW + 1)).toBe(false);
    expect(await store.users.findBySubject(subject)).toEqual(made);
    expect(await store.users.linkSubject(later.id, `${subject}-2`, NOW + 1)).toBe(true);
    expect(await store.users.findBySubject(`${subject}-2`)).toMatchObject({ id: later.id, updatedAt: NOW + 1 });
    expect(await store.users.findBySubject("nobody's subject")).toBeNull();
  });

  test("change their password, role and projects; a project is added only to a limited user", async () => {
    const a = await project();
    const b = await project();
    const name = username();
    const u = (await store.users.create({ username: name, passwordHash: "old", role: "member" }, NOW))!;
    await store.users.setPassword(u.id, "new", NOW + 1);
    expect(await store.users.findByUsername(name)).toMatchObject({ passwordHash: "new", updatedAt: NOW + 1 });
    await store.users.setRole(u.id, "viewer", NOW + 2);
    expect(await store.users.findById(u.id)).toMatchObject({ role: "viewer", updatedAt: NOW + 2 });

    await store.users.addProject(u.id, a);
    expect((await store.users.findById(u.id))!.projects).toBeNull();
    await store.users.setProjects(u.id, [a], NOW + 3);
    expect(await store.users.findById(u.id)).toMatchObject({ projects: [await nameOf(a)], updatedAt: NOW + 3 });
    await store.users.addProject(u.id, b);
    await store.users.addProject(u.id, b);
    expect((await store.users.findById(u.id))!.projects).toEqual([await nameOf(a), await nameOf(b)].sort());
    expect((await store.users.limitedReach()).find((r) => r.userId === u.id)!.projectIds.sort()).toEqual([a, b].sort());
    await store.users.setProjects(u.id, [], NOW + 4);
    expect((await store.users.findById(u.id))!.projects).toEqual([]);
    expect((await store.users.limitedReach()).find((r) => r.userId === u.id)).toEqual({ userId: u.id, projectIds: [] });
    await store.users.setProjects(u.id, null, NOW + 5);
    expect((await store.users.findById(u.id))!.projects).toBeNull();
    expect((await store.users.limitedReach()).some((r) => r.userId === u.id)).toBe(false);
  });

  test("keep sessions until they expire, end, or their user goes", async () => {
    const a = await project();
    const u = (await store.users.create(
      { username: username(), passwordHash: "h", role: "member", projectIds: [a] },
      NOW,
    ))!;
    const session = (hash: string, expiresAt: number) =>
      store.users.createSession({
        tokenHash: `${hash}-${u.id}`,
        userId: u.id,
        csrfToken: `csrf ${hash}`,
        createdAt: NOW,
        expiresAt,
      });
    await session("one", NOW + 100);
    await session("two", NOW + 200);
    await session("old", NOW - 1);

    const found = (await store.users.findSession(`one-${u.id}`, NOW))!;
    expect(found).toEqual({ sessionId: found.sessionId, csrfToken: "csrf one", expiresAt: NOW + 100, user: u });
    expect(await store.users.findSession(`one-${u.id}`, NOW + 100)).toBeNull();
    expect(await store.users.findSession(`old-${u.id}`, NOW)).toBeNull();
    expect(await store.users.findSession("unknown", NOW)).toBeNull();
    expect(await store.users.sessionActive(found.sessionId, NOW)).toBe(true);
    expect(await store.users.sessionActive(found.sessionId, NOW + 100)).toBe(false);
    expect(await store.users.activeSessions(u.id, NOW)).toBe(2);
    expect(await store.users.activeSessions(u.id, NOW + 150)).toBe(1);

    expect(await store.users.deleteExpiredSessions(NOW)).toBeGreaterThanOrEqual(1);
    expect(await store.users.deleteExpiredSessions(NOW)).toBe(0);

    const before = store.accessVersion();
    await store.users.deleteSessionsOf(u.id, found.sessionId);
    expect(store.accessVersion()).not.toBe(before);
    expect(await store.users.activeSessions(u.id, NOW)).toBe(1);
    await store.users.deleteSession(`one-${u.id}`);
    expect(await store.users.sessionActive(found.sessionId, NOW)).toBe(false);

    await session("three", NOW + 100);
    await store.users.delete(u.id);
    expect(await store.users.findById(u.id)).toBeNull();
    expect(await store.users.findSession(`three-${u.id}`, NOW)).toBeNull();
  });
});

describe("projects", () => {
  const event = (p: { id: number; name: string }, channel: { id: number; name: string }, n: number): NewEvent => ({
    projectId: p.id,
    project: p.name,
    channelId: channel.id,
    channel: channel.name,
    name: `event ${n}`,
    description: null,
    icon: null,
    notify: false,
    parser: "text",
    userId: null,
    tags: { n },
    ts: NOW + n,
    receivedAt: NOW + n,
    historical: false,
  });

  test("are created once per name, found by name and id, listed by name, and keep a retention", async () => {
    const name = `contract-p-${++names}`;
    const made = (await store.projects.create(name, NOW))!;
    expect(made).toEqual({ id: made.id, name, retentionDays: null, createdAt: NOW });
    expect(await store.projects.create(name, NOW)).toBeNull();
    expect(await store.projects.findByName(name)).toEqual(made);
    expect(await store.projects.findById(made.id)).toEqual(made);
    expect(await store.projects.findByName("no such project")).toBeNull();
    expect(await store.projects.findByName("nul\u0000name")).toBeNull();
    expect(await store.projects.findById(999_999)).toBeNull();
    const listed = (await store.projects.list()).map((p) => p.name);
    expect(listed).toEqual([...listed].sort());
    expect(listed).toContain(name);

    await store.projects.setRetention(made.id, 30);
    expect(await store.projects.findByName(name)).toEqual({ ...made, retentionDays: 30 });
    expect(await store.projects.findById(made.id)).toEqual({ ...made, retentionDays: 30 });
    await store.projects.setRetention(made.id, null);
    expect((await store.projects.findByName(name))!.retentionDays).toBeNull();
  });

  test("have channels, made once, found, listed by name, counted and deleted", async () => {
    const id = await project();
    const p = (await store.projects.findById(id))!;
    const shop = (await store.projects.createChannel(id, "shop", NOW))!;
    expect(shop).toEqual({ id: shop.id, projectId: id, name: "shop", createdAt: NOW });
    expect(await store.projects.createChannel(id, "shop", NOW)).toBeNull();
    expect(await store.projects.ensureChannel(id, "shop", NOW)).toEqual({ id: shop.id, created: false });
    const made = await store.projects.ensureChannel(id, "app", NOW + 1);
    expect(made.created).toBe(true);
    expect(await store.projects.ensureChannel(id, "app", NOW + 2)).toEqual({ id: made.id, created: false });
    expect(await store.tx((r) => r.projects.ensureChannel(id, "ops", NOW))).toMatchObject({ created: true });
    expect(await store.projects.findChannel(id, "app")).toEqual({
      id: made.id,
      projectId: id,
      name: "app",
      createdAt: NOW + 1,
    });
    expect(await store.projects.findChannel(id, "none")).toBeNull();
    expect(await store.projects.findChannel(id, "a\u0000b")).toBeNull();
    expect((await store.projects.listChannels(id)).map((c) => c.name)).toEqual(["app", "ops", "shop"]);

    await store.events.insert(event(p, shop, 1));
    await store.events.insert(event(p, shop, 2));
    await store.events.insert(event(p, { id: made.id, name: "app" }, 3));
    expect(await store.projects.countEvents({ projectId: id })).toBe(3);
    expect(await store.projects.countEvents({ channelId: shop.id })).toBe(2);
    expect(await store.projects.countEvents({ channelId: (await store.projects.findChannel(id, "ops"))!.id })).toBe(0);

    const ops = (await store.projects.findChannel(id, "ops"))!;
    await store.projects.deleteChannel(ops);
    expect(await store.projects.findChannel(id, "ops")).toBeNull();
    expect(await store.projects.ensureChannel(id, "ops", NOW)).toMatchObject({ created: true });
  });

  test("are deleted with their channels and tokens, and found no more by name", async () => {
    const id = await project();
    const p = (await store.projects.findById(id))!;
    const channel = await store.projects.ensureChannel(id, "gone", NOW);
    await store.events.insert(event(p, { id: channel.id, name: "gone" }, 1));
    const token = await store.tokens.insert({
      name: `pub${id}`,
      kind: "public",
      projectId: id,
      channel: null,
      prefix: `sb_pub${id}`,
      hash: "h",
      mayNotify: false,
      createdBy: null,
      createdByUserId: null,
      createdAt: NOW,
      projectIds: null,
    });
    expect(await store.projects.findByName(p.name)).toEqual(p); // remembered, where a store remembers
    const before = store.accessVersion();
    await store.events.deleteBatch({ projectId: id }, 1000);
    await store.projects.delete(id);
    expect(store.accessVersion()).not.toBe(before);
    expect(await store.projects.findByName(p.name)).toBeNull();
    expect(await store.projects.findById(id)).toBeNull();
    expect(await store.projects.listChannels(id)).toEqual([]);
    expect(await store.tokens.findById(token.id)).toBeNull();
    const again = (await store.projects.create(p.name, NOW))!;
    expect(await store.projects.findByName(p.name)).toEqual(again);
    expect(await store.projects.ensureChannel(again.id, "gone", NOW)).toMatchObject({ created: true });
  });
});

describe("profiles", () => {
  test("merge what identify sends: a new value replaces the old, null removes the key", async () => {
    const id = await project();
    expect(await store.profiles.find(id, "ann")).toBeNull();
    await store.profiles.identify(id, "ann", { plan: "free", name: "Ann", gone: null }, NOW);
    expect(await store.profiles.find(id, "ann")).toEqual({
      projectId: id,
      userId: "ann",
      properties: { plan: "free", name: "Ann" },
      createdAt: NOW,
      updatedAt: NOW,
    });
    await store.profiles.identify(id, "ann", { plan: "pro", name: null, seats: 3, beta: true }, NOW + 1);
    expect(await store.profiles.find(id, "ann")).toEqual({
      projectId: id,
      userId: "ann",
      properties: { plan: "pro", seats: 3, beta: true },
      createdAt: NOW,
      updatedAt: NOW + 1,
    });
    expect(await store.profiles.find(id, "bob")).toBeNull();
    expect(await store.profiles.find(id, "a\u0000n")).toBeNull();
    expect(await store.profiles.find(await project(), "ann")).toBeNull();
  });

  test("have groups, merged alike, and members added once", async () => {
    const id = await project();
    await store.profiles.group(id, "acme", { tier: "gold", size: 10 }, NOW);
    await store.profiles.group(id, "acme", { size: null, region: "eu" }, NOW + 1);
    await store.profiles.group(id, "umbrella", {}, NOW);
    await store.profiles.addMember(id, "acme", "ann", NOW);
    await store.profiles.addMember(id, "acme", "ann", NOW + 1);
    await store.profiles.addMember(id, "umbrella", "ann", NOW);
    await store.profiles.addMember(id, "umbrella", "bob", NOW);
    const groups = await store.profiles.groupsOf(id, "ann");
    expect(groups.sort((a, b) => a.groupId.localeCompare(b.groupId))).toEqual([
      { groupId: "acme", properties: { tier: "gold", region: "eu" } },
      { groupId: "umbrella", properties: {} },
    ]);
    expect(await store.profiles.groupsOf(id, "bob")).toEqual([{ groupId: "umbrella", properties: {} }]);
    expect(await store.profiles.groupsOf(id, "carol")).toEqual([]);
  });

  test("identify's profile is what the users list shows of them", async () => {
    const id = await project();
    await store.profiles.identify(id, "dana", { plan: "pro" }, NOW);
    expect(await store.profiles.summary(id, "dana")).toMatchObject({ userId: "dana", properties: { plan: "pro" } });
    expect(await store.profiles.summary(id, "nobody")).toBeNull();
  });
});

describe("alert rules", () => {
  /** A count rule as the API makes one. */
  const rule = (projectId: number, name: string, paused = false): NewAlert => ({
    projectId,
    paused,
    kind: "count",
    name,
    repeat: null,
    notifyAfter: 1,
    filter: { channel: "shop", tags: { plan: "pro" } },
    window: 60_000,
    threshold: { compare: "above", limit: 10 },
  });

  test("are created ok, found, listed in order, changed and deleted; the paused ones are not active", async () => {
    const projectId = await project();
    const a = await store.alerts.create(rule(projectId, "Too many"), NOW);
    expect(a).toEqual({
      ...rule(projectId, "Too many"),
      id: a.id,
      state: "ok",
      since: NOW,
      lastChecked: null,
      lastNotified: null,
      streak: 0,
      notified: "ok",
      createdAt: NOW,
      updatedAt: NOW,
    });
    const b = await store.alerts.create(rule(projectId, "Paused", true), NOW + 1);
    expect(await store.alerts.find(a.id)).toEqual(a);
    expect(await store.alerts.find(999_999)).toBeNull();
    expect((await store.alerts.list(projectId)).map((r) => r.id)).toEqual([a.id, b.id]);
    const active = (await store.alerts.active()).map((r) => r.id);
    expect(active).toContain(a.id);
    expect(active).not.toContain(b.id);
    expect(active).toEqual([...active].sort((x, y) => x - y));

    const fewer = {
      kind: "count" as const,
      name: "Too few",
      repeat: 60_000,
      notifyAfter: 3,
      filter: { event: "x" },
      window: 120_000,
      threshold: { compare: "below" as const, limit: 2 },
    };
    const changed = await store.alerts.update(a.id, fewer, NOW + 5);
    expect(changed).toEqual({ ...a, ...fewer, updatedAt: NOW + 5 });
    expect(await store.alerts.update(a.id, { state: "firing", since: NOW + 6 }, NOW + 6)).toMatchObject({
      ...fewer,
      state: "firing",
      since: NOW + 6,
    });
    // A rule of another kind keeps nothing of the last one's fields.
    const absence = {
      kind: "absence" as const,
      name: "Quiet",
      repeat: null,
      notifyAfter: 1,
      filter: { channel: "cron" },
      schedule: { cron: "0 3 * * *", tz: "Europe/Paris" },
      grace: 300_000,
    };
    expect(await store.alerts.update(a.id, { ...absence, paused: true }, NOW + 7)).toEqual({
      ...absence,
      id: a.id,
      projectId,
      paused: true,
      state: "firing",
      since: NOW + 6,
      lastChecked: null,
      lastNotified: null,
      streak: 0,
      notified: "ok",
      createdAt: NOW,
      updatedAt: NOW + 7,
    });
    const metric = {
      kind: "metric" as const,
      name: "Disk",
      repeat: null,
      notifyAfter: 2,
      filter: {},
      metric: "disk",
      threshold: { compare: "above" as const, limit: 0.9 },
    };
    expect(await store.alerts.update(a.id, metric, NOW + 8)).toMatchObject(metric);
    expect(await store.alerts.find(a.id)).toMatchObject({ ...metric, paused: true });
    expect(await store.alerts.update(999_999, { paused: true }, NOW)).toBeNull();
    expect(await store.alerts.delete(b.id)).toBe(true);
    expect(await store.alerts.delete(b.id)).toBe(false);
    expect(await store.alerts.find(b.id)).toBeNull();
  });

  test("change state only from the state a round saw, once, and never while paused", async () => {
    const projectId = await project();
    const a = await store.alerts.create(rule(projectId, "Once"), NOW);
    const from = { state: "ok" as const, since: NOW, lastNotified: null, streak: 0, notified: "ok" as const };
    const to = {
      state: "firing" as const,
      since: NOW + 10,
      lastNotified: NOW + 10,
      streak: 1,
      notified: "firing" as const,
    };
    expect(await store.alerts.transition({ id: a.id, from, to }, NOW + 10)).toBe(true);
    expect(await store.alerts.transition({ id: a.id, from, to }, NOW + 11)).toBe(false);
    expect(await store.alerts.find(a.id)).toMatchObject({ ...to, lastChecked: NOW + 10 });
    const back = { state: "ok" as const, since: NOW + 20, lastNotified: NOW + 20, streak: 0, notified: "ok" as const };
    expect(await store.alerts.transition({ id: a.id, from: { ...to, lastNotified: null }, to: back }, NOW)).toBe(false);
    expect(await store.alerts.transition({ id: a.id, from: to, to: back }, NOW + 20)).toBe(true);

    await store.alerts.update(a.id, { paused: true }, NOW + 21);
    expect(await store.alerts.transition({ id: a.id, from: back, to }, NOW + 22)).toBe(false);
    expect(await store.alerts.find(a.id)).toMatchObject({ ...back, paused: true });
  });

  test("count a streak and what was told only from what a round saw, and start afresh when resumed", async () => {
    const projectId = await project();
    const a = await store.alerts.create({ ...rule(projectId, "Flaps"), notifyAfter: 3 }, NOW);
    expect(a).toMatchObject({ notifyAfter: 3, streak: 0, notified: "ok" });
    const first = { state: "firing" as const, since: NOW + 1, lastNotified: null, streak: 1, notified: "ok" as const };
    const from = { state: "ok" as const, since: NOW, lastNotified: null, streak: 0, notified: "ok" as const };
    expect(await store.alerts.transition({ id: a.id, from, to: first }, NOW + 1)).toBe(true);
    const second = { ...first, streak: 2 };
    // Two writers that saw the first round: one counts the second.
    expect(await store.alerts.transition({ id: a.id, from: first, to: second }, NOW + 2)).toBe(true);
    expect(await store.alerts.transition({ id: a.id, from: first, to: second }, NOW + 2)).toBe(false);
    const told = { ...second, streak: 3, notified: "firing" as const, lastNotified: NOW + 3 };
    expect(await store.alerts.transition({ id: a.id, from: { ...second, notified: "firing" }, to: told }, NOW)).toBe(
      false,
    );
    expect(await store.alerts.transition({ id: a.id, from: second, to: told }, NOW + 3)).toBe(true);
    expect(await store.alerts.find(a.id)).toMatchObject(told);
    await store.alerts.update(a.id, { paused: true }, NOW + 4);
    expect(
      await store.alerts.update(
        a.id,
        { paused: false, state: "ok", since: NOW + 5, streak: 0, notified: "ok" },
        NOW + 5,
      ),
    ).toMatchObject({ paused: false, state: "ok", since: NOW + 5, streak: 0, notified: "ok", lastNotified: NOW + 3 });
  });

  test("record when a round checked them, all at once", async () => {
    const projectId = await project();
    const a = await store.alerts.create(rule(projectId, "A"), NOW);
    const b = await store.alerts.create(rule(projectId, "B"), NOW);
    const c = await store.alerts.create(rule(projectId, "C"), NOW);
    await store.alerts.checked([a.id, c.id], NOW + 30);
    await store.alerts.checked([], NOW + 31);
    expect((await store.alerts.list(projectId)).map((r) => [r.id, r.lastChecked])).toEqual([
      [a.id, NOW + 30],
      [b.id, null],
      [c.id, NOW + 30],
    ]);
  });
});

describe("checks", () => {
  let n = 0;
  const check = (projectId: number, slug: string, more: Partial<NewCheck> = {}): NewCheck => ({
    projectId,
    name: `Job ${slug}`,
    slug,
    schedule: { kind: "period", seconds: 60 },
    grace: 30,
    channel: "checks",
    uuid: `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`,
    pushToken: `push-token-${String(n).padStart(21, "0")}`,
    paused: false,
    notifyAfter: 1,
    ...more,
  });

  test("are created new (or paused), found by id, UUID, push token and slug, listed, changed and deleted", async () => {
    const projectId = await project();
    const a = await store.checks.create(check(projectId, "backup"), NOW);
    expect(a).toMatchObject({
      state: "new",
      since: NOW,
      lastPing: null,
      nextDue: null,
      runs: {},
      lastDurationMs: null,
      notifyAfter: 1,
      streak: 0,
      notified: "up",
      counted: null,
    });
    const b = await store.checks.create(
      check(projectId, "report", { schedule: { kind: "cron", expr: "0 3 * * *", tz: "Europe/Berlin" }, paused: true }),
      NOW + 1,
    );
    expect(b).toMatchObject({ state: "paused", schedule: { kind: "cron", expr: "0 3 * * *", tz: "Europe/Berlin" } });
    expect(await store.checks.find(a.id)).toEqual(a);
    expect(await store.checks.find(999_999)).toBeNull();
    expect(await store.checks.findBy({ uuid: a.uuid })).toEqual([a]);
    expect(await store.checks.findBy({ pushToken: b.pushToken })).toEqual([b]);
    expect(await store.checks.findBy({ projectId, slug: "report" })).toEqual([b]);
    expect(await store.checks.findBy({ projectId, slug: "nothing" })).toEqual([]);
    expect(await store.checks.findBy({ uuid: "\u0000" })).toEqual([]);
    expect(await store.tx((r) => r.checks.findBy({ uuid: a.uuid }, { lock: true }))).toEqual([a]);
    expect((await store.checks.list(projectId)).map((c) => c.id)).toEqual([a.id, b.id]);

    const changed = await store.checks.update(
      a.id,
      { schedule: { kind: "cron", expr: "*/5 * * * *", tz: "UTC" }, state: "up", lastPing: NOW + 5, runs: { r1: NOW } },
      NOW + 5,
    );
    expect(changed).toMatchObject({
      schedule: { kind: "cron", expr: "*/5 * * * *", tz: "UTC" },
      state: "up",
      lastPing: NOW + 5,
      runs: { r1: NOW },
      name: "Job backup",
      updatedAt: NOW + 5,
    });
    expect(await store.checks.update(a.id, { schedule: { kind: "period", seconds: 90 } }, NOW + 6)).toMatchObject({
      schedule: { kind: "period", seconds: 90 },
    });
    expect(await store.checks.update(999_999, { paused: true }, NOW)).toBeNull();
    expect(await store.checks.delete(b.id)).toBe(true);
    expect(await store.checks.delete(b.id)).toBe(false);
    expect(await store.checks.find(b.id)).toBeNull();
  });

  test("a slug left twice by hand is found twice; names are locked in a write", async () => {
    const projectId = await project();
    await store.checks.create(check(projectId, "twice"), NOW);
    await store.checks.create(check(projectId, "twice"), NOW);
    expect(await store.checks.findBy({ projectId, slug: "twice" })).toHaveLength(2);
    await store.tx(async (r) => {
      await r.checks.lockNames();
    });
  });

  test("due ones come soonest first, up to a limit; a transition happens once", async () => {
    const projectId = await project();
    const a = await store.checks.create(check(projectId, "a"), NOW);
    const b = await store.checks.create(check(projectId, "b"), NOW);
    const c = await store.checks.create(check(projectId, "c"), NOW);
    await store.checks.update(a.id, { state: "up", nextDue: NOW + 300 }, NOW);
    await store.checks.update(b.id, { state: "up", nextDue: NOW + 100 }, NOW);
    await store.checks.update(c.id, { state: "up", nextDue: NOW + 10_000_000 }, NOW);
    const mine = async (now: number, limit = 100) =>
      (await store.checks.due(now, limit)).filter((x) => x.projectId === projectId).map((x) => x.id);
    expect(await mine(NOW + 50)).toEqual([]);
    expect(await mine(NOW + 300)).toEqual([b.id, a.id]);
    expect(await mine(NOW + 1_000)).toEqual([b.id, a.id]);
    const from = { state: "up" as const, nextDue: NOW + 100, streak: 0, notified: "up" as const };
    const down = { state: "down" as const, nextDue: null, streak: 1, counted: NOW + 200, notified: "down" as const };
    expect(await store.checks.transition(b.id, from, { ...down, since: NOW + 200 }, NOW + 200)).toBe(true);
    expect(await store.checks.transition(b.id, from, { ...down, since: NOW + 201 }, NOW + 201)).toBe(false);
    expect(await store.checks.find(b.id)).toMatchObject({ ...down, since: NOW + 200 });
    expect(await mine(NOW + 1_000)).toEqual([a.id]);
    // What was told and the streak are part of where it stands: a writer that saw others changes nothing.
    const stale = { state: "up" as const, nextDue: NOW + 300, streak: 1, notified: "up" as const };
    expect(await store.checks.transition(a.id, stale, { state: "down" }, NOW + 300)).toBe(false);
    const notYetTold = { state: "up" as const, nextDue: NOW + 300, streak: 0, notified: "down" as const };
    expect(await store.checks.transition(a.id, notYetTold, { state: "down" }, NOW + 300)).toBe(false);
    expect(await store.checks.find(a.id)).toMatchObject({ state: "up", notifyAfter: 1, streak: 0, notified: "up" });
  });

  test("a project's ping key is made, found, replaced, and names its project", async () => {
    const projectId = await project();
    expect(await store.checks.pingKey(projectId)).toBeNull();
    await store.checks.setPingKey(projectId, "key-one-aaaaaaaaaaaaaa", NOW);
    expect(await store.checks.pingKey(projectId)).toBe("key-one-aaaaaaaaaaaaaa");
    expect(await store.checks.projectOfPingKey("key-one-aaaaaaaaaaaaaa")).toBe(projectId);
    await store.checks.setPingKey(projectId, "key-two-bbbbbbbbbbbbbb", NOW + 1);
    expect(await store.checks.pingKey(projectId)).toBe("key-two-bbbbbbbbbbbbbb");
    expect(await store.checks.projectOfPingKey("key-one-aaaaaaaaaaaaaa")).toBeNull();
    expect(await store.checks.projectOfPingKey("key-two-bbbbbbbbbbbbbb")).toBe(projectId);
  });

  test("a project's badge key is kept beside its ping key, replaced, and names its project", async () => {
    const projectId = await project();
    await store.checks.setPingKey(projectId, "key-badge-aaaaaaaaaaaa", NOW);
    expect(await store.checks.badgeKey(projectId)).toBeNull();
    await store.checks.setBadgeKey(projectId, "badge-one");
    expect(await store.checks.badgeKey(projectId)).toBe("badge-one");
    expect(await store.checks.projectOfBadgeKey("badge-one")).toBe(projectId);
    await store.checks.setBadgeKey(projectId, "badge-two");
    expect(await store.checks.projectOfBadgeKey("badge-one")).toBeNull();
    expect(await store.checks.projectOfBadgeKey("badge-two")).toBe(projectId);
    expect(await store.checks.projectOfBadgeKey("\u0000")).toBeNull();
    // A new ping key leaves the badge key as it was.
    await store.checks.setPingKey(projectId, "key-badge-bbbbbbbbbbbb", NOW + 1);
    expect(await store.checks.badgeKey(projectId)).toBe("badge-two");
  });

  test("runs: each check's latest finishes from its ping events, oldest first, in one read for all", async () => {
    const projectId = await project();
    const name = await nameOf(projectId);
    const channel = await store.projects.ensureChannel(projectId, "checks", NOW);
    let at = 0;
    const ping = (slug: string, tags: Record<string, string | number>) =>
      store.events.insert({
        projectId,
        project: name,
        channelId: channel.id,
        channel: "checks",
        name: `${slug}: ${tags.kind}`,
        description: null,
        icon: null,
        notify: false,
        parser: "text",
        userId: null,
        tags: { check: slug, ...tags },
        ts: NOW + ++at,
        receivedAt: NOW + at,
        historical: false,
      });
    await ping("backup", { kind: "start" });
    await ping("backup", { kind: "success", duration: 1.5 });
    await ping("backup", { kind: "log" });
    await ping("backup", { kind: "exit", "exit-status": 3 });
    await ping("report", { kind: "fail" });
    for (let i = 0; i < 5; i++) await ping("often", { kind: "success" });
    const runs = await store.checks.runs(projectId, ["backup", "report", "often", "never"], 3);
    expect(runs.backup).toEqual([
      { at: NOW + 2, ok: true, label: "success", durationMs: 1500 },
      { at: NOW + 4, ok: false, label: "exit 3", durationMs: null },
    ]);
    expect(runs.report).toEqual([{ at: NOW + 5, ok: false, label: "fail", durationMs: null }]);
    expect(runs.often!.map((r) => r.at)).toEqual([NOW + 8, NOW + 9, NOW + 10]);
    expect(runs.never).toEqual([]);
    expect(await store.checks.runs(projectId, [], 3)).toEqual({});
  });
});

describe("maintenance windows", () => {
  test("are created (once or on a schedule), found, listed by project in order, and deleted; a project's go with it", async () => {
    const projectId = await project();
    const other = await project();
    const once = await store.maintenance.create(
      { projectId, name: "Upgrade", schedule: { kind: "once", startsAt: NOW + 1000, endsAt: NOW + 5000 } },
      NOW,
    );
    expect(once).toEqual({
      id: once.id,
      projectId,
      name: "Upgrade",
      schedule: { kind: "once", startsAt: NOW + 1000, endsAt: NOW + 5000 },
      createdAt: NOW,
    });
    const nightly = await store.maintenance.create(
      { projectId, name: "", schedule: { kind: "cron", cron: "0 3 * * *", tz: "Europe/Berlin", length: 3_600_000 } },
      NOW + 1,
    );
    expect(nightly.schedule).toEqual({ kind: "cron", cron: "0 3 * * *", tz: "Europe/Berlin", length: 3_600_000 });
    const elsewhere = await store.maintenance.create(
      { projectId: other, name: "x", schedule: { kind: "once", startsAt: NOW, endsAt: NOW + 1 } },
      NOW,
    );
    expect(await store.maintenance.find(nightly.id)).toEqual(nightly);
    expect(await store.maintenance.find(999_999)).toBeNull();
    expect((await store.maintenance.list(projectId)).map((w) => w.id)).toEqual([once.id, nightly.id]);
    expect(await store.maintenance.delete(once.id)).toBe(true);
    expect(await store.maintenance.delete(once.id)).toBe(false);
    expect(await store.maintenance.list(projectId)).toEqual([nightly]);
    await store.projects.delete(other);
    expect(await store.maintenance.find(elsewhere.id)).toBeNull();
  });
});

describe("shares", () => {
  test("are created (with a status page's time zone), found by id and by key, listed by project in order, and revoked once (a revoked key finds nothing); a project's go with it", async () => {
    const projectId = await project();
    const other = await project();
    const base = {
      projectId,
      title: "",
      text: "",
      timeZone: "UTC",
      createdBy: "ada",
      charts: [],
      checks: [],
      alerts: [],
      metrics: [],
    };
    const board = await store.shares.create({ ...base, kind: "dashboard", key: "k".repeat(43), charts: [3, 1] }, NOW);
    expect(board).toEqual({
      ...base,
      id: board.id,
      kind: "dashboard",
      key: "k".repeat(43),
      charts: [3, 1],
      createdAt: NOW,
      revokedAt: null,
    });
    const status = await store.shares.create(
      {
        ...base,
        kind: "status",
        key: "s".repeat(43),
        checks: [2],
        alerts: [4],
        metrics: ["MRR"],
        title: "Up?",
        text: "All of it.",
        timeZone: "America/New_York",
      },
      NOW + 1,
    );
    const elsewhere = await store.shares.create(
      { ...base, projectId: other, kind: "dashboard", key: "o".repeat(43) },
      NOW,
    );
    expect(await store.shares.find(status.id)).toEqual(status);
    expect(await store.shares.findByKey("s".repeat(43))).toEqual(status);
    expect(await store.shares.findByKey("x".repeat(43))).toBeNull();
    expect(await store.shares.findByKey("s\u0000")).toBeNull();
    expect((await store.shares.list(projectId)).map((x) => x.id)).toEqual([board.id, status.id]);
    expect(await store.shares.revoke(board.id, NOW + 5)).toBe(true);
    expect(await store.shares.revoke(board.id, NOW + 6)).toBe(false);
    expect(await store.shares.findByKey("k".repeat(43))).toBeNull();
    expect((await store.shares.find(board.id))?.revokedAt).toBe(NOW + 5);
    expect(await store.shares.list(projectId)).toEqual([status]);
    await store.projects.delete(other);
    expect(await store.shares.find(elsewhere.id)).toBeNull();
  });
});

describe("metrics", () => {
  const MINUTE = 60_000;

  test("keep a current value and a point a minute, listed by title, found, deleted", async () => {
    const projectId = await project();
    const name = await nameOf(projectId);
    const saved = await store.metrics.save({ projectId, title: "users", value: 5, icon: "👥", now: NOW });
    expect(saved).toEqual({ id: saved.id, icon: "👥" });
    expect(await store.metrics.current(projectId, "users")).toEqual({ id: saved.id, value: 5, icon: "👥" });
    // A later value in the same minute replaces its point; an icon left out keeps the last one.
    await store.metrics.save({ projectId, title: "users", value: 6, icon: null, now: NOW + 1000 });
    await store.metrics.save({ projectId, title: "users", value: 9, icon: null, now: NOW + 2 * MINUTE });
    await store.metrics.save({ projectId, title: "mode", value: "maintenance", icon: null, now: NOW });
    await store.metrics.save({ projectId, title: "flag", value: true, icon: null, now: NOW });
    expect(await store.metrics.current(projectId, "nothing")).toBeNull();

    const users = {
      id: saved.id,
      projectId,
      project: name,
      title: "users",
      value: 9,
      icon: "👥",
      updatedAt: NOW + 2 * MINUTE,
    };
    expect(await store.metrics.find(projectId, "users")).toEqual(users);
    expect(await store.metrics.find(projectId, "nothing")).toBeNull();
    expect(await store.metrics.find(projectId, "a\u0000b")).toBeNull();
    expect((await store.metrics.list(projectId)).map((m) => [m.title, m.value])).toEqual([
      ["flag", true],
      ["mode", "maintenance"],
      ["users", 9],
    ]);

    const early = { at: NOW, value: 6 };
    const late = { at: NOW + 2 * MINUTE, value: 9 };
    const points = [early, late];
    expect(await store.metrics.history(saved.id, NOW, NOW + 10 * MINUTE, 10)).toEqual(points);
    expect(await store.metrics.history(saved.id, NOW, NOW + 10 * MINUTE, 10, "desc")).toEqual([...points].reverse());
    expect(await store.metrics.history(saved.id, NOW, NOW + 10 * MINUTE, 1)).toEqual([early]);
    expect(await store.metrics.history(saved.id, NOW + MINUTE, NOW + 10 * MINUTE, 10)).toEqual([late]);
    expect(await store.metrics.pointBefore(saved.id, NOW + 2 * MINUTE)).toEqual(early);
    expect(await store.metrics.pointBefore(saved.id, NOW)).toBeNull();
    expect((await store.metrics.buckets(saved.id, NOW, NOW + 10 * MINUTE, 10 * MINUTE)).length).toBeGreaterThan(0);

    await store.metrics.delete(saved.id);
    expect(await store.metrics.find(projectId, "users")).toBeNull();
    expect(await store.metrics.history(saved.id, NOW, NOW + 10 * MINUTE, 10)).toEqual([]);
  });

  test("add to a number, start a new one at the delta, and leave text alone", async () => {
    const projectId = await project();
    const first = await store.metrics.increment({ projectId, title: "hits", delta: 2, icon: null, now: NOW });
    expect(first).toEqual({ id: (first as { id: number }).id, value: 2, icon: null });
    expect(
      await store.metrics.increment({ projectId, title: "hits", delta: 3.5, icon: "🎯", now: NOW + MINUTE }),
    ).toEqual({ id: (first as { id: number }).id, value: 5.5, icon: "🎯" });
    expect(await store.metrics.history((first as { id: number }).id, NOW, NOW + MINUTE, 10)).toEqual([
      { at: NOW, value: 2 },
      { at: NOW + MINUTE, value: 5.5 },
    ]);
    await store.metrics.save({ projectId, title: "mode", value: "on", icon: null, now: NOW });
    expect(await store.metrics.increment({ projectId, title: "mode", delta: 1, icon: null, now: NOW })).toEqual({
      holds: "on",
    });
    expect((await store.metrics.current(projectId, "mode"))!.value).toBe("on");
  });
});

describe("meta", () => {
  test("keeps a value by key, replaced by the next, and a probe leaves nothing", async () => {
    expect(await store.meta.get("contract.none")).toBeNull();
    await store.meta.set("contract.key", "one");
    expect(await store.meta.get("contract.key")).toBe("one");
    await store.meta.set("contract.key", "two ü");
    expect(await store.meta.get("contract.key")).toBe("two ü");
    await store.meta.probe();
    await store.tx((r) => r.meta.probe());
    expect(await store.meta.get("readiness.probe")).toBeNull();
  });
});

describe("audit", () => {
  test("lists newest first, pages by id, and prunes all but the newest", async () => {
    const entry = (subject: string) => ({
      at: NOW,
      action: "token.created" as const,
      actor: "ann",
      actorUserId: null,
      ip: "192.0.2.1",
      subject,
      detail: null,
    });
    for (const subject of ["a", "b", "c"]) await store.audit.record(entry(subject));
    const [c, b] = await store.audit.list({ limit: 2 });
    expect([c?.subject, b?.subject]).toEqual(["c", "b"]);
    expect(c).toEqual({ id: c!.id, ...entry("c") });
    expect((await store.audit.list({ before: c!.id, limit: 10 })).map((e) => e.subject).slice(0, 2)).toEqual([
      "b",
      "a",
    ]);
    expect(await store.audit.prune(1)).toBeGreaterThanOrEqual(2);
    expect((await store.audit.list({ limit: 10 })).map((e) => e.subject)).toEqual(["c"]);
    expect(await store.audit.prune(1)).toBe(0);
  });
});

describe("idempotency", () => {
  test("a key is claimed once per token, keeps its answer, and is free again after a day", async () => {
    const [token, other] = [900_001, 900_002];
    expect(await store.idempotency.claim(token, "k", "fp1", NOW)).toBeNull();
    expect(await store.idempotency.claim(token, "k", "fp2", NOW + 1)).toEqual({ fingerprint: "fp1", response: "" });
    expect(await store.idempotency.claim(other, "k", "fp2", NOW + 1)).toBeNull();
    await store.idempotency.complete(token, "k", '{"ok":true}');
    expect(await store.idempotency.claim(token, "k", "fp2", NOW + 2)).toEqual({
      fingerprint: "fp1",
      response: '{"ok":true}',
    });
    expect(await store.idempotency.claim(token, "k", "fp3", NOW + IDEMPOTENCY_TTL_MS - 1)).not.toBeNull();
    expect(await store.idempotency.claim(token, "k", "fp3", NOW + IDEMPOTENCY_TTL_MS)).toBeNull();
    expect(await store.idempotency.claim(token, "k", "fp4", NOW + IDEMPOTENCY_TTL_MS)).toEqual({
      fingerprint: "fp3",
      response: "",
    });
  });

  test("prune forgets the keys older than a day", async () => {
    const token = 900_003;
    await store.idempotency.claim(token, "old", "fp", NOW - 10);
    await store.idempotency.claim(token, "new", "fp", NOW);
    expect(await store.idempotency.prune(NOW + IDEMPOTENCY_TTL_MS - 5)).toBeGreaterThanOrEqual(1);
    expect(await store.idempotency.claim(token, "new", "again", NOW + 1)).toEqual({ fingerprint: "fp", response: "" });
    expect(await store.idempotency.claim(token, "old", "again", NOW + 1)).toBeNull();
  });

  test("a key claimed to be kept longer is held, and survives prune, for as long as its claim asked", async () => {
    const token = 900_004;
    const keep = 4 * IDEMPOTENCY_TTL_MS;
    expect(await store.idempotency.claim(token, "delivery", "fp", NOW, keep)).toBeNull();
    await store.idempotency.complete(token, "delivery", "{}");
    await store.idempotency.prune(NOW + 3 * IDEMPOTENCY_TTL_MS);
    expect(await store.idempotency.claim(token, "delivery", "fp", NOW + keep - 1, keep)).toEqual({
      fingerprint: "fp",
      response: "{}",
    });
    expect(await store.idempotency.prune(NOW + keep)).toBeGreaterThanOrEqual(1);
    expect(await store.idempotency.claim(token, "delivery", "fp", NOW + keep, keep)).toBeNull();
  });
});

describe("digests", () => {
  const digest = (projectId: number, name: string) => ({
    projectId,
    name,
    frequency: "weekly" as const,
    hour: 8,
    weekday: 1,
    timeZone: "Europe/Berlin",
    integrationIds: [3, 1],
    emails: ["ann@example.com"],
    lastPeriod: null,
  });

  test("are created, found, listed in order, changed and deleted", async () => {
    const projectId = await project();
    const a = await store.digests.create(digest(projectId, "Weekly"), NOW);
    const b = await store.digests.create({ ...digest(projectId, "Daily"), frequency: "daily", weekday: null }, NOW);
    expect(a).toEqual({
      id: a.id,
      ...digest(projectId, "Weekly"),
      enabled: true,
      createdAt: NOW,
      lastSentAt: null,
      lastSuccessAt: null,
      lastError: null,
      lastErrorAt: null,
    });
    expect(await store.digests.find(a.id)).toEqual(a);
    expect(await store.digests.find(999_999)).toBeNull();
    expect((await store.digests.list(projectId)).map((d) => d.id)).toEqual([a.id, b.id]);

    const changed = await store.digests.update(a.id, { name: "Mondays", emails: [], enabled: false });
    expect(changed).toEqual({ ...a, name: "Mondays", emails: [], enabled: false });
    expect(await store.digests.update(999_999, { name: "none" })).toBeNull();
    const enabled = (await store.digests.enabled()).map((d) => d.id);
    expect([enabled.includes(a.id), enabled.includes(b.id)]).toEqual([false, true]);

    await store.digests.delete(a.id);
    expect(await store.digests.find(a.id)).toBeNull();
    expect((await store.digests.list(projectId)).map((d) => d.id)).toEqual([b.id]);
  });

  test("claim a period once, only from the period they last sent, and record outcomes", async () => {
    const { id } = await store.digests.create(digest(await project(), "Weekly"), NOW);
    expect(await store.digests.claimPeriod(id, "2026-10-26", "2026-11-02", NOW)).toBe(false);
    expect(await store.digests.claimPeriod(id, null, "2026-11-02", NOW + 1)).toBe(true);
    expect(await store.digests.claimPeriod(id, null, "2026-11-02", NOW + 2)).toBe(false);
    expect(await store.digests.claimPeriod(id, "2026-11-02", "2026-11-09", NOW + 3)).toBe(true);
    await store.digests.recordOutcome(id, { ok: false, error: "refused" }, NOW + 4);
    await store.digests.recordOutcome(id, { ok: true, error: null }, NOW + 5);
    expect(await store.digests.find(id)).toMatchObject({
      lastPeriod: "2026-11-09",
      lastSentAt: NOW + 3,
      lastSuccessAt: NOW + 5,
      lastError: "refused",
      lastErrorAt: NOW + 4,
    });
  });
});

describe("notifications", () => {
  const device = (userId: number, endpoint: string) => ({
    userId,
    endpoint,
    p256dh: "key",
    auth: "secret",
    deviceName: "Phone",
  });

  async function user(): Promise<number> {
    const made = await store.users.create({ username: `contract-${++names}`, passwordHash: "x", role: "member" }, NOW);
    return made!.id;
  }

  test("devices are saved once per endpoint, refreshed by their owner, routed, and pruned", async () => {
    const [ann, bob] = [await user(), await user()];
    const endpoint = `https://push.example/${ann}`;
    const a = await store.notifications.saveSubscription(device(ann, endpoint), NOW);
    expect(a).toEqual({
      id: a.id,
      ...device(ann, endpoint),
      filters: null,
      tags: null,
      minPriority: 1,
      createdAt: NOW,
      refreshedAt: NOW,
      lastSuccessAt: null,
      lastError: null,
      lastErrorAt: null,
    });
    const again = await store.notifications.saveSubscription({ ...device(ann, endpoint), p256dh: "new" }, NOW + 5);
    expect(again).toEqual({ ...a, p256dh: "new", refreshedAt: NOW + 5 });
    const b = await store.notifications.saveSubscription(device(ann, `${endpoint}/b`), NOW + 1);

    expect(await store.notifications.refreshSubscription(bob, endpoint, NOW + 6)).toBe(false);
    expect(await store.notifications.refreshSubscription(ann, endpoint, NOW + 7)).toBe(true);
    expect((await store.notifications.subscriptionsOf(ann)).map((s) => s.id)).toEqual([a.id, b.id]);
    expect(await store.notifications.subscriptionsOf(bob)).toEqual([]);
    expect((await store.notifications.allSubscriptions()).map((s) => s.id)).toContain(b.id);
    expect(await store.notifications.subscriptionsWithOwner(b.id)).toEqual([
      { ...b, username: `contract-${names - 1}` },
    ]);

    await store.notifications.setFilters(a.id, '[{"project":"shop","channels":null}]');
    await store.notifications.setSubscriptionRoute(a.id, { tags: '{"plan":"pro"}', minPriority: 3 });
    await store.notifications.recordSubscriptionOutcome(a.id, { ok: false, error: "410" }, NOW + 8);
    expect(await store.notifications.subscription(a.id)).toEqual({
      ...again,
      refreshedAt: NOW + 7,
      filters: '[{"project":"shop","channels":null}]',
      tags: '{"plan":"pro"}',
      minPriority: 3,
      lastError: "410",
      lastErrorAt: NOW + 8,
    });
    expect(await store.notifications.subscription(999_999)).toBeNull();

    expect(await store.notifications.pruneSubscriptions(NOW + 2)).toBeGreaterThanOrEqual(1);
    expect((await store.notifications.subscriptionsOf(ann)).map((s) => s.id)).toEqual([a.id]);
    await store.notifications.deleteSubscription(a.id);
    expect(await store.notifications.subscription(a.id)).toBeNull();
  });

  test("integrations are created, listed in order, changed, counted by their maker and turned off", async () => {
    const [projectId, maker] = [await project(), await user()];
    const made = {
      projectId,
      kind: "webhook" as const,
      name: "Hook",
      config: { url: "https://hooks.example/a", method: "POST" },
      secrets: { secret: "s3cr3t" },
      filter: { channels: ["orders"], min_priority: 2 },
      template: { title: "{{event}}" },
      createdByUserId: maker,
    };
    const a = await store.notifications.createIntegration(made, NOW);
    const b = await store.notifications.createIntegration(
      { ...made, name: "Other", filter: null, template: null },
      NOW,
    );
    expect(a).toEqual({
      id: a.id,
      ...made,
      enabled: true,
      createdAt: NOW,
      lastSuccessAt: null,
      lastError: null,
      lastErrorAt: null,
    });
    expect(await store.notifications.integration(a.id)).toEqual(a);
    expect(await store.notifications.integration(999_999)).toBeNull();
    expect((await store.notifications.integrationsOf(projectId)).map((i) => i.id)).toEqual([a.id, b.id]);

    const changed = await store.notifications.updateIntegration(a.id, { name: "Hook 2", filter: null, secrets: {} });
    expect(changed).toEqual({ ...a, name: "Hook 2", filter: null, secrets: {} });
    expect(await store.notifications.updateIntegration(999_999, { name: "none" })).toBeNull();

    expect(await store.notifications.integrationsCreatedBy(maker)).toBe(2);
    await store.notifications.setIntegrationEnabled(b.id, false);
    expect(await store.notifications.integrationsCreatedBy(maker)).toBe(1);
    expect(await store.notifications.disableCreatedBy(maker)).toBe(1);
    expect(await store.notifications.disableCreatedBy(maker)).toBe(0);
    expect(await store.notifications.integration(a.id)).toMatchObject({ enabled: false });

    await store.notifications.recordIntegrationOutcome(a.id, { ok: true, error: null }, NOW + 3);
    expect(await store.notifications.integration(a.id)).toMatchObject({ lastSuccessAt: NOW + 3, lastError: null });
    await store.notifications.deleteIntegration(a.id);
    expect((await store.notifications.integrationsOf(projectId)).map((i) => i.id)).toEqual([b.id]);
  });

  test("the queue leases due deliveries once, one per target, and settles them only under the lease", async () => {
    const T = NOW + 1_000_000;
    const queued = (targetId: number, payload: string) => ({
      target: "integration" as const,
      targetId,
      eventId: null,
      payload,
    });
    expect(await store.notifications.enqueue([], T)).toBe(0);
    expect(await store.notifications.enqueue([queued(1, "a1"), queued(1, "a2"), queued(2, "b1")], T)).toBe(3);
    await store.notifications.enqueue([queued(3, "c1")], T + 1);
    const pending = await store.notifications.pendingCount();
    expect(pending).toBeGreaterThanOrEqual(4);

    const lease = (owner: string) => ({ owner, until: T + 100 });
    const except = [{ target: "integration" as const, targetId: 3 }];
    const [first, second] = await Promise.all([
      store.notifications.claim(T + 1, 10, lease("w1"), except),
      store.notifications.claim(T + 1, 10, lease("w2"), except),
    ]);
    // Each claim takes one per target (the oldest), none of `except`'s; two claims at once never
    // take the same delivery (on PostgreSQL the second may skip what the first holds).
    const ids = [...first!, ...second!].map((d) => d.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const claim of [first!, second!]) expect(new Set(claim.map((d) => d.targetId)).size).toBe(claim.length);
    const byPayload = new Map([...first!, ...second!].map((d) => [d.payload, d]));
    expect(byPayload.has("a1") && byPayload.has("b1") && !byPayload.has("c1")).toBe(true);
    for (const d of byPayload.values()) expect(d).toMatchObject({ status: "pending", leaseUntil: T + 100 });
    const a1 = byPayload.get("a1")!;
    expect(a1.leaseOwner).toBe(first!.includes(a1) ? "w1" : "w2");
    const b1 = byPayload.get("b1")!;

    // What is leased is not due again while the lease lasts.
    const rest = await store.notifications.claim(T + 2, 10, lease("w3"), []);
    expect([...byPayload.keys(), ...rest.map((d) => d.payload)].sort()).toEqual(["a1", "a2", "b1", "c1"]);
    expect(await store.notifications.claim(T + 3, 10, lease("w3"), [])).toEqual([]);

    expect(
      await store.notifications.settle(
        a1.id,
        "someone else",
        { ok: true, status: 200, error: null },
        { status: "sent" },
        T + 4,
      ),
    ).toBe(false);
    expect(await store.notifications.attemptsOf(a1.id)).toEqual([]);
    const attempt = { ok: false, status: 500, error: "HTTP 500" };
    expect(
      await store.notifications.settle(
        a1.id,
        a1.leaseOwner!,
        attempt,
        { status: "pending", nextAttemptAt: T + 500 },
        T + 5,
      ),
    ).toBe(true);
    expect(await store.notifications.delivery(a1.id)).toEqual({
      ...a1,
      attempts: 1,
      nextAttemptAt: T + 500,
      lastError: "HTTP 500",
      finishedAt: null,
      leaseOwner: null,
      leaseUntil: null,
    });
    const [kept] = await store.notifications.attemptsOf(a1.id);
    expect(kept).toEqual({ id: kept!.id, deliveryId: a1.id, at: T + 5, ...attempt });
    expect(await store.notifications.delivery(999_999_999)).toBeNull();

    // A lease that ran out (its worker died) is due again; released leases are free at once.
    expect((await store.notifications.claim(T + 101, 10, lease("w4"), [])).map((d) => d.id)).toContain(b1.id);
    expect(await store.notifications.releaseLeases("w4")).toBeGreaterThanOrEqual(1);
    expect(await store.notifications.releaseLeases("w4")).toBe(0);
    const again = await store.notifications.claim(T + 102, 10, lease("w5"), []);
    expect(again.map((d) => d.id)).toContain(b1.id);
    expect(
      await store.notifications.settle(
        b1.id,
        "w5",
        { ok: true, status: 204, error: null },
        { status: "sent" },
        T + 103,
      ),
    ).toBe(true);
    expect(await store.notifications.delivery(b1.id)).toMatchObject({
      status: "sent",
      attempts: 1,
      finishedAt: T + 103,
    });

    // A gone target's pending deliveries are dropped; finished ones are listed, then pruned with their attempts.
    await store.notifications.releaseLeases();
    await store.notifications.abandon("integration", 3, T + 104);
    expect(await store.notifications.delivery(again.find((d) => d.payload === "c1")?.id ?? -1)).toMatchObject({
      status: "gone",
    });
    expect((await store.notifications.deliveriesFor("integration", [1, 2, 3], 2)).map((d) => d.payload)).toEqual([
      "c1",
      "b1",
    ]);
    expect(await store.notifications.deliveriesFor("integration", [])).toEqual([]);
    expect(await store.notifications.pendingCount()).toBe(pending - 2);
    expect(await store.notifications.pruneDeliveries(T + 104)).toBe(1);
    expect(await store.notifications.delivery(b1.id)).toBeNull();
    expect(await store.notifications.attemptsOf(b1.id)).toEqual([]);
    expect(await store.notifications.pruneDeliveries(T + 105)).toBe(1);
  });
});
