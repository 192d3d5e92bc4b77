// Dashboard accounts: the one-time setup of the owner, accounts made from the command line,
// passwords (Bun.password, argon2id), sign-ins and sessions. A session token is random and lives
// only in the user's cookie; we keep its hash. What admins and the owner do to others' accounts
// is members.ts.
import { timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { Conflict, Forbidden, NotFound, ValidationError } from "../errors.ts";
import { type Actor, COMMAND_LINE } from "../model/audit.ts";
import type { Credential } from "../model/credential.ts";
import type { Role, Session, User } from "../model/user.ts";
import { type Clock, systemClock } from "../clock.ts";
import type { SignInChallenge, Store } from "../store/store.ts";
import { audited, recordAudit } from "./audit.ts";
import { within } from "./access.ts";
import { projectIdsOf } from "./projects.ts";
import {
  checkCode,
  type CodeKind,
  newTotpSecret,
  recoveryCodeHash,
  newRecoveryCodes,
  RECOVERY_CODES,
  secondFactorRequired,
  stepOfCode,
} from "./second-factor.ts";
import { randomToken } from "./tokens.ts";
import { validate } from "./validation.ts";

export const usernameRule = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z0-9._@+-]{1,64}$/, "must be 1-64 letters, digits, dots, dashes, underscores, @ or +");
export const passwordRule = z
  .string()
  .min(8, "must be at least 8 characters")
  .max(256, "must be at most 256 characters");

const credentials = z.object({ username: usernameRule, password: passwordRule });

export type NewSession = { token: string; csrfToken: string; expiresAt: number; user: User };

/**
 * A right password for someone with a second factor (or without one where one is required): not a
 * session, only the token of the step that comes next ("verify": a code; "enroll": set one up).
 */
export type SecondStep = { secondStep: "verify" | "enroll"; token: string; expiresAt: number };

/** How long the half-signed-in may take over the second step. */
export const SECOND_STEP_TTL_MS = 5 * 60_000;

/** A half sign-in waiting for its second step, with its person. */
export type SecondStepOf = SignInChallenge & { purpose: "verify" | "enroll"; user: User };

/** How long a sign-in link made on the command line is good for (once). */
export const SIGN_IN_LINK_TTL_MS = 15 * 60_000;

/** The method of a sign-in, as the audit trail records it (the detail of its "sign_in.succeeded"). */
export const signInMethod = (kind: CodeKind | null) => (kind ? `password + ${kind}` : "password");

/**
 * Argon2id's cost for new password hashes: Bun.password's default unless given. Tests ask for less
 * (a sign-in at the default cost takes a few hundred milliseconds); a hash names its own cost, so
 * it verifies the same either way.
 */
export type PasswordCost = { memoryCost: number; timeCost: number };

function hashPassword(password: string, cost: PasswordCost | undefined): Promise<string> {
  return cost ? Bun.password.hash(password, { algorithm: "argon2id", ...cost }) : Bun.password.hash(password);
}

// Verifying against this when the username is unknown keeps a failed login's timing the same (at
// the same cost as real hashes). Made on first use: argon2 takes a few hundred milliseconds, which
// start-up should not pay.
const dummyHashes = new Map<string, Promise<string>>();
function dummyHash(cost: PasswordCost | undefined): Promise<string> {
  const key = JSON.stringify(cost ?? null);
  let made = dummyHashes.get(key);
  if (!made) dummyHashes.set(key, (made = hashPassword("signalboard-dummy-password", cost)));
  return made;
}

function sha256(text: string): string {
  return new Bun.CryptoHasher("sha256").update(text).digest("hex");
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(sha256(a));
  const y = Buffer.from(sha256(b));
  return timingSafeEqual(x, y);
}

const SETUP_USED = "The setup code is wrong or was already used. Use the link the server printed at start.";

const SETUP_CODE = "setup_code";

/** How a user's projects read in the trail and in messages. */
export const projectsText = (projects: string[] | null) =>
  projects === null ? "every project" : projects.length ? projects.join(", ") : "no project";

export type NewAccount = { username: string; password: string; role: Role; projects?: string[] | null };

/**
 * Makes an account, with its audit entry. `roleOf` picks the role from whether this is the first
 * account, inside the transaction that creates it: requests racing with one set-up code cannot
 * make two owners. An actor without a user id is the new account itself (the owner setting up).
 */
export async function createAccount(
  store: Store,
  input: NewAccount,
  actor: Actor,
  roleOf: (first: boolean) => Role = () => input.role,
  now = Date.now(),
  cost?: PasswordCost,
): Promise<User> {
  const { username, password } = validate(credentials, input);
  const passwordHash = await hashPassword(password, cost);
  const user = await audited(
    store,
    actor,
    async (tx, note) => {
      const first = (await tx.users.count()) === 0;
      const role = roleOf(first);
      const projectIds = role === "owner" || !input.projects ? null : await projectIdsOf(tx, input.projects);
      const created = await tx.users.create({ username, passwordHash, role, projectIds }, now);
      if (!created) return null;
      if (first) await tx.meta.set(SETUP_CODE, ""); // used up
      if (role === "owner") note("owner.created", `user ${created.username}`);
      else note("member.added", `user ${created.username}`, `role ${role}; ${projectsText(created.projects)}`);
      return created;
    },
    now,
  );
  if (!user) throw new Conflict(`A user named "${username}" already exists.`);
  return user;
}

export type AccountOptions = { sessionTtlMs: number; clock?: Clock; passwordCost?: PasswordCost };

export function accountService(store: Store, options: AccountOptions) {
  const clock = options.clock ?? systemClock;
  const cost = options.passwordCost;
  async function startSession(user: User, now: number): Promise<NewSession> {
    const token = randomToken().slice(3);
    const csrfToken = randomToken().slice(3);
    const expiresAt = now + options.sessionTtlMs;
    await store.users.createSession({
      tokenHash: sha256(token),
      userId: user.id,
      csrfToken,
      createdAt: now,
      expiresAt,
    });
    return { token, csrfToken, expiresAt, user };
  }

  /** A wrong code at the second step: a failed sign-in in the audit trail. */
  function wrongCode(actor: Actor, now: number): Promise<void> {
    const subject = `user ${actor.name}`;
    return recordAudit(store, actor, "sign_in.failed", subject, "wrong second-factor code", now);
  }

  return {
    /** The setup code, while the instance has no owner yet (made at the first ask, by whichever instance asks first). */
    async setupCode(): Promise<string | null> {
      if ((await store.users.count()) > 0) return null;
      const kept = await store.meta.get(SETUP_CODE);
      if (kept) return kept;
      return store.tx(async (tx) => {
        const raced = await tx.meta.get(SETUP_CODE);
        if (raced) return raced;
        const code = randomToken().slice(3, 27);
        await tx.meta.set(SETUP_CODE, code);
        return code;
      });
    },

    async needsSetup(): Promise<boolean> {
      return (await store.users.count()) === 0;
    },

    async checkSetupCode(code: string): Promise<boolean> {
      const current = await this.setupCode();
      return current !== null && sameSecret(code, current);
    },

    /** Creates the owner with the setup code and signs them in; `ip`: where the form came from. */
    async setup(
      code: string,
      input: { username: string; password: string },
      ip: string | null = null,
      now = clock.now(),
    ): Promise<NewSession> {
      if (!(await this.checkSetupCode(code))) throw new Forbidden(SETUP_USED);
      const firstOnly = (first: boolean): Role => {
        if (!first) throw new Forbidden(SETUP_USED);
        return "owner";
      };
      const name = usernameRule.safeParse(input.username).data ?? input.username.slice(0, 64);
      const owner = await createAccount(
        store,
        { ...input, role: "owner" },
        { userId: null, name, ip },
        firstOnly,
        now,
        cost,
      );
      return startSession(owner, now);
    },

    /**
     * From the command line: the first user created becomes the owner, the others members (or
     * `role`), seeing every project unless limited to `projects`.
     */
    async createUser(
      input: { username: string; password: string },
      role?: Role,
      options: { projects?: string[] | null; by?: Actor } = {},
      now = clock.now(),
    ): Promise<User> {
      const by = options.by ?? COMMAND_LINE;
      return createAccount(
        store,
        { ...input, role: role ?? "member", projects: options.projects },
        by,
        (first) => role ?? (first ? "owner" : "member"),
        now,
        cost,
      );
    },

    /** From the command line: a new password, and every session of theirs ends. */
    async resetPassword(
      username: string,
      password: string,
      by: Actor = COMMAND_LINE,
      now = clock.now(),
    ): Promise<User> {
      const valid = validate(credentials, { username, password });
      const user = await store.users.findByUsername(valid.username);
      if (!user) throw new NotFound(`No user named "${username}".`);
      const hash = await hashPassword(valid.password, cost);
      await audited(
        store,
        by,
        async (tx, note) => {
          await tx.users.setPassword(user.id, hash, now);
          await tx.users.deleteSessionsOf(user.id); // a new password signs out everywhere
          note("password.changed", `user ${user.username}`, "set from the command line; every session ended");
        },
        now,
      );
      const { passwordHash: _hash, ...publicUser } = user;
      return publicUser;
    },

    /**
     * From the command line: a link that signs `username` in once, within SIGN_IN_LINK_TTL_MS: the way
     * in when passwords are off (SIGNALBOARD_PASSWORD_LOGIN=off) and the provider is not there. Whoever
     * runs commands on the server's machine is trusted already, so it asks for no second factor.
     */
    async signInLink(username: string, now = clock.now()): Promise<{ token: string; user: User; expiresAt: number }> {
      const parsed = usernameRule.safeParse(username);
      const found = parsed.success ? await store.users.findByUsername(parsed.data) : null;
      if (!found) throw new NotFound(`No user named "${username}".`);
      const { passwordHash: _hash, ...user } = found;
      const token = randomToken().slice(3);
      const expiresAt = now + SIGN_IN_LINK_TTL_MS;
      await audited(
        store,
        COMMAND_LINE,
        async (tx, note) => {
          await tx.factors.createChallenge(sha256(token), {
            userId: user.id,
            purpose: "link",
            secret: null,
            next: "/",
            createdAt: now,
            expiresAt,
          });
          note("sign_in.link", `user ${user.username}`, "good once, for 15 minutes");
        },
        now,
      );
      return { token, user, expiresAt };
    },

    /** The person a sign-in link is for, while it is good (it is not used up by looking). */
    async signInLinkFor(token: string, now = clock.now()): Promise<User | null> {
      const challenge = await store.factors.findChallenge(sha256(token), now);
      return challenge?.purpose === "link" ? store.users.findById(challenge.userId) : null;
    },

    /** Uses a sign-in link up: a session, or null when it is wrong, used or expired. */
    async useSignInLink(token: string, ip: string | null = null, now = clock.now()): Promise<NewSession | null> {
      const taken = await store.factors.takeChallenge(sha256(token), "link", now);
      const user = taken && (await store.users.findById(taken.userId));
      return user ? this.openSession(user, "command-line link", ip, now) : null;
    },

    /**
     * A signed-in user changes their own password: the current one is asked for, the new one twice.
     * Their other sessions end; this one stays.
     */
    async changePassword(
      session: Session,
      input: { current: string; password: string; confirm: string },
      ip: string | null = null,
      now = clock.now(),
    ): Promise<void> {
      const record = await store.users.findByUsername(session.user.username);
      if (!record || record.id !== session.user.id) throw new NotFound("Your account no longer exists.");
      const issues = [];
      if (!(await Bun.password.verify(input.current.slice(0, 256), record.passwordHash)))
        issues.push({ path: "current", type: "wrong_password", message: "current: this is not your current password" });
      const next = passwordRule.safeParse(input.password);
      if (!next.success)
        issues.push({ path: "password", type: "invalid", message: `password: ${next.error.issues[0]!.message}` });
      else if (input.password !== input.confirm)
        issues.push({ path: "confirm", type: "mismatch", message: "confirm: the two new passwords differ" });
      if (issues.length) throw new ValidationError(issues);
      const hash = await hashPassword(input.password, cost);
      const actor = { userId: session.user.id, name: session.user.username, ip };
      await audited(
        store,
        actor,
        async (tx, note) => {
          await tx.users.setPassword(session.user.id, hash, now);
          await tx.users.deleteSessionsOf(session.user.id, session.sessionId);
          note(
            "password.changed",
            `user ${session.user.username}`,
            "changed by themselves; their other sessions ended",
          );
        },
        now,
      );
    },

    list(): Promise<User[]> {
      return store.users.list();
    },

    /**
     * A session for someone another party vouched for (the OpenID provider, a sign-in proxy): `method` is how they
     * signed in, written as the sign-in entry's detail.
     */
    async openSession(user: User, method: string, ip: string | null = null, now = clock.now()): Promise<NewSession> {
      const session = await startSession(user, now);
      const actor = { userId: user.id, name: user.username, ip };
      await recordAudit(store, actor, "sign_in.succeeded", `user ${user.username}`, method, now);
      return session;
    },

    /**
     * A new session for the right username and password, or null. Always costs one hash check.
     * Each attempt is in the audit trail, with `ip` (the client's address as the server sees it).
     * Someone with a second factor (or without one where one is required) gets no session yet, only
     * the second step (`SecondStep`), which goes on to `next` once it is done.
     */
    async login(
      username: string,
      password: string,
      ip: string | null = null,
      now = clock.now(),
      next = "/",
    ): Promise<NewSession | SecondStep | null> {
      const parsed = usernameRule.safeParse(username);
      const user = parsed.success ? await store.users.findByUsername(parsed.data) : null;
      const ok = await Bun.password.verify(password.slice(0, 256), user?.passwordHash ?? (await dummyHash(cost)));
      const name = parsed.success ? parsed.data : username.slice(0, 64);
      const actor = { userId: user?.id ?? null, name, ip };
      if (!user || !ok) {
        await recordAudit(
          store,
          actor,
          "sign_in.failed",
          `user ${name}`,
          user ? "wrong password" : "no such user",
          now,
        );
        return null;
      }
      const { passwordHash: _hash, ...publicUser } = user;
      // A passkey is a second factor as an authenticator is (also where one is required).
      const factor = await store.factors.totp(user.id);
      const hasFactor = !!factor?.confirmedAt || (await store.factors.passkeys(user.id)).length > 0;
      const purpose = hasFactor ? "verify" : (await secondFactorRequired(store)) ? "enroll" : null;
      if (purpose) {
        const token = randomToken().slice(3);
        const expiresAt = now + SECOND_STEP_TTL_MS;
        await store.factors.createChallenge(sha256(token), {
          userId: user.id,
          purpose,
          secret: purpose === "enroll" ? newTotpSecret() : null,
          next,
          createdAt: now,
          expiresAt,
        });
        return { secondStep: purpose, token, expiresAt };
      }
      const session = await startSession(publicUser, now);
      await recordAudit(store, actor, "sign_in.succeeded", `user ${name}`, signInMethod(null), now);
      return session;
    },

    /** The half-signed-in step of this token, with its person, while it has not expired. */
    async secondStep(token: string, now = clock.now()): Promise<SecondStepOf | null> {
      const challenge = await store.factors.findChallenge(sha256(token), now);
      if (!challenge || challenge.purpose === "link") return null; // a sign-in link is not a half sign-in
      const user = await store.users.findById(challenge.userId);
      return user ? { ...challenge, purpose: challenge.purpose, user } : null;
    },

    /**
     * The second step: a code from their authenticator or a recovery code. A session when it is
     * right (the step is over), "expired" when there is no such step (any more), "wrong" otherwise
     * (recorded as a failed sign-in; the step stays until it expires).
     */
    async verifySecondStep(
      token: string,
      code: string,
      ip: string | null = null,
      now = clock.now(),
    ): Promise<{ session: NewSession; next: string; recoveryCodes: null } | "expired" | "wrong"> {
      const step = await this.secondStep(token, now);
      if (!step || step.purpose !== "verify") return "expired";
      const actor = { userId: step.user.id, name: step.user.username, ip };
      const kind = await checkCode(store, step.user.id, code, now);
      if (!kind) {
        await wrongCode(actor, now);
        return "wrong";
      }
      // Taken once: a code and a recovery code sent at the same moment open one session, not two.
      if (!(await store.factors.takeChallenge(sha256(token), "verify", now))) return "expired";
      const session = await startSession(step.user, now);
      await recordAudit(store, actor, "sign_in.succeeded", `user ${step.user.username}`, signInMethod(kind), now);
      return { session, next: step.next, recoveryCodes: null };
    },

    /**
     * The second step passed another way (a passkey, checked by the passkeys service for this
     * step's person): the step is over, and a session begins with `method` in the audit trail.
     */
    async passSecondStep(
      token: string,
      userId: number,
      method: string,
      ip: string | null = null,
      now = clock.now(),
    ): Promise<{ session: NewSession; next: string } | "expired"> {
      const step = await this.secondStep(token, now);
      if (!step || step.purpose !== "verify" || step.user.id !== userId) return "expired";
      if (!(await store.factors.takeChallenge(sha256(token), "verify", now))) return "expired";
      return { session: await this.openSession(step.user, method, ip, now), next: step.next };
    },

    /**
     * The second step where a factor is required and they have none: the code of the secret
     * offered proves their app has it; the factor is on, with recovery codes to show once.
     */
    async enrollAtSignIn(
      token: string,
      code: string,
      ip: string | null = null,
      now = clock.now(),
    ): Promise<{ session: NewSession; next: string; recoveryCodes: string[] } | "expired" | "wrong"> {
      const step = await this.secondStep(token, now);
      if (!step || step.purpose !== "enroll" || !step.secret) return "expired";
      const actor = { userId: step.user.id, name: step.user.username, ip };
      const at = stepOfCode(step.secret, code, now);
      if (at === null) {
        await wrongCode(actor, now);
        return "wrong";
      }
      const codes = newRecoveryCodes();
      const secret = step.secret;
      const enabled = await audited(
        store,
        actor,
        async (tx, note) => {
          if (!(await tx.factors.enableTotp(step.user.id, secret, at, codes.map(recoveryCodeHash), now))) return false;
          await tx.factors.deleteChallenge(sha256(token));
          note(
            "second_factor.enabled",
            `user ${step.user.username}`,
            `TOTP authenticator, at sign-in; ${RECOVERY_CODES} recovery codes`,
          );
          return true;
        },
        now,
      );
      if (!enabled) return "expired";
      const session = await startSession(step.user, now);
      await recordAudit(store, actor, "sign_in.succeeded", `user ${step.user.username}`, signInMethod("totp"), now);
      return { session, next: step.next, recoveryCodes: codes };
    },

    /**
     * What keeps a dashboard's stream open: its session, not ended and not expired, and every
     * project its person saw when it opened still theirs (the page's own, and those its toasts come
     * from). When one is taken from them, the stream ends; a page of a project still theirs
     * reconnects at once and is told only of what they see now.
     */
    credential(session: Session): Credential {
      const seen = session.user.projects;
      const key = `session:${session.sessionId}:${seen === null ? "*" : seen.join(",")}`;
      const valid = async () => {
        if (!(await store.users.sessionActive(session.sessionId, clock.now()))) return false;
        const user = await store.users.findById(session.user.id);
        return user !== null && within(seen, user.projects);
      };
      return { key, expiresAt: session.expiresAt, valid };
    },

    session(token: string, now = clock.now()): Promise<Session | null> {
      return store.users.findSession(sha256(token), now);
    },

    async logout(token: string): Promise<void> {
      await store.users.deleteSession(sha256(token));
    },

    async pruneSessions(now = clock.now()): Promise<number> {
      await store.factors.deleteExpiredChallenges(now);
      return store.users.deleteExpiredSessions(now);
    },
  };
}

export type AccountService = ReturnType<typeof accountService>;
