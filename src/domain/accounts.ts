// Dashboard accounts: the one-time setup of the owner, members, passwords (Bun.password, argon2id)
// and sessions. A session token is random and lives only in the user's cookie; we keep its hash.
import { timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { Conflict, Forbidden, NotFound } from "../errors.ts";
import type { Credential } from "../model/credential.ts";
import type { Store } from "../store/store.ts";
import { randomToken } from "./tokens.ts";
import { validate } from "./validation.ts";
import type { User } from "../model/user.ts";
import type { Session } from "../model/user.ts";

export const usernameRule = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z0-9._-]{1,64}$/, "must be 1-64 letters, digits, dots, dashes or underscores");
export const passwordRule = z.string().min(8, "must be at least 8 characters").max(256, "must be at most 256 characters");

const credentials = z.object({ username: usernameRule, password: passwordRule });

export type NewSession = { token: string; csrfToken: string; expiresAt: number; user: User };

// Verifying against this when the username is unknown keeps a failed login's timing the same.
// Made on first use: argon2 takes a few hundred milliseconds, which start-up should not pay.
let dummyHash: Promise<string> | null = null;
const DUMMY_HASH = () => (dummyHash ??= Bun.password.hash("signalboard-dummy-password"));

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

export function accountService(store: Store, options: { sessionTtlMs: number }) {
  // While nobody has an account, whoever holds this code (printed at start) may create the owner.
  // It is kept in the database, so every instance of a shared one prints the same link.

  async function startSession(user: User, now: number): Promise<NewSession> {
    const token = randomToken().slice(3);
    const csrfToken = randomToken().slice(3);
    const expiresAt = now + options.sessionTtlMs;
    await store.users.createSession({ tokenHash: sha256(token), userId: user.id, csrfToken, createdAt: now, expiresAt });
    return { token, csrfToken, expiresAt, user };
  }

  /**
   * `roleOf` picks the role from whether this is the first account, inside the transaction that
   * creates it: requests racing with one set-up code cannot make two owners.
   */
  async function newUser(input: { username: string; password: string }, roleOf: (first: boolean) => "owner" | "member", now: number): Promise<User> {
    const { username, password } = validate(credentials, input);
    const passwordHash = await Bun.password.hash(password);
    const user = await store.tx(async (tx) => {
      const first = (await tx.users.count()) === 0;
      const created = await tx.users.create({ username, passwordHash, role: roleOf(first) }, now);
      if (created && first) await tx.meta.set(SETUP_CODE, ""); // used up
      return created;
    });
    if (!user) throw new Conflict(`A user named "${username}" already exists.`);
    return user;
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

    /** Creates the owner with the setup code and signs them in. */
    async setup(code: string, input: { username: string; password: string }, now = Date.now()): Promise<NewSession> {
      if (!(await this.checkSetupCode(code))) throw new Forbidden(SETUP_USED);
      const owner = await newUser(
        input,
        (first) => {
          if (!first) throw new Forbidden(SETUP_USED);
          return "owner";
        },
        now,
      );
      return startSession(owner, now);
    },

    /** From the CLI: the first user created becomes the owner. */
    async createUser(input: { username: string; password: string }, role?: "owner" | "member", now = Date.now()): Promise<User> {
      return newUser(input, (first) => role ?? (first ? "owner" : "member"), now);
    },

    async resetPassword(username: string, password: string, now = Date.now()): Promise<User> {
      const valid = validate(credentials, { username, password });
      const user = await store.users.findByUsername(valid.username);
      if (!user) throw new NotFound(`No user named "${username}".`);
      const hash = await Bun.password.hash(valid.password);
      await store.tx(async (tx) => {
        await tx.users.setPassword(user.id, hash, now);
        await tx.users.deleteSessionsOf(user.id); // a new password signs out everywhere
      });
      return user;
    },

    list(): Promise<User[]> {
      return store.users.list();
    },

    /**
     * Removes a member and signs them out everywhere. The API tokens they created are revoked and
     * the integrations they added turned off, unless `keepTokens` (a token or a webhook may serve
     * something that should outlive the person who made it); either way they stop reaching them.
     */
    async removeUser(id: number, by: User, { keepTokens = false } = {}, now = Date.now()): Promise<{ user: User; revokedTokens: number; disabledIntegrations: number }> {
      if (by.role !== "owner") throw new Forbidden("Only the owner can remove members.");
      const user = await store.users.findById(id);
      if (!user) throw new NotFound("That user no longer exists.");
      if (user.id === by.id) throw new Forbidden("You cannot remove yourself.");
      return store.tx(async (tx) => {
        await tx.users.delete(id);
        if (keepTokens) return { user, revokedTokens: 0, disabledIntegrations: 0 };
        return { user, revokedTokens: await tx.tokens.revokeCreatedBy(id, now), disabledIntegrations: await tx.notifications.disableCreatedBy(id) };
      });
    },

    /** A new session for the right username and password, or null. Always costs one hash check. */
    async login(username: string, password: string, now = Date.now()): Promise<NewSession | null> {
      const parsed = usernameRule.safeParse(username);
      const user = parsed.success ? await store.users.findByUsername(parsed.data) : null;
      const ok = await Bun.password.verify(password.slice(0, 256), user?.passwordHash ?? (await DUMMY_HASH()));
      if (!user || !ok) return null;
      const { passwordHash: _hash, ...publicUser } = user;
      return startSession(publicUser, now);
    },

    /** What keeps a dashboard's stream open: its session, not ended and not expired. */
    credential(session: Session): Credential {
      return { key: `session:${session.sessionId}`, expiresAt: session.expiresAt, valid: () => store.users.sessionActive(session.sessionId, Date.now()) };
    },

    session(token: string, now = Date.now()): Promise<Session | null> {
      return store.users.findSession(sha256(token), now);
    },

    async logout(token: string): Promise<void> {
      await store.users.deleteSession(sha256(token));
    },

    async pruneSessions(now = Date.now()): Promise<number> {
      return store.users.deleteExpiredSessions(now);
    },
  };
}

export type AccountService = ReturnType<typeof accountService>;
