// Sign-in by a trusted proxy (Authelia, Authentik's proxy outpost, oauth2-proxy, Caddy's
// forward_auth): the proxy has signed the person in and names them in a header, which the HTTP
// edge believes only from the proxies the operator listed (http/proxy-auth.ts). Here: who that
// name is. An account by its username; someone without one gets an account with
// SIGNALBOARD_OIDC_DEFAULT_ROLE (the same setting OpenID Connect uses), or is refused when it is
// `none`, until an admin adds them.
import { Conflict, Forbidden } from "../errors.ts";
import type { Role, User } from "../model/user.ts";
import { type Clock, systemClock } from "../clock.ts";
import type { Store } from "../store/store.ts";
import { type AccountService, createAccount, type NewSession, type PasswordCost, usernameRule } from "./accounts.ts";
import { recordAudit } from "./audit.ts";
import { randomToken } from "./tokens.ts";

/** The method a proxy's sign-ins are recorded with in the audit trail. */
export const PROXY_METHOD = "proxy";

export type DefaultRole = Exclude<Role, "owner"> | "none";

export type ProxySignInOptions = { defaultRole: DefaultRole; clock?: Clock; passwordCost?: PasswordCost };

export function proxySignIn(store: Store, accounts: AccountService, options: ProxySignInOptions) {
  const clock = options.clock ?? systemClock;

  /** The account of someone the proxy names and who has none yet, made with the default role; null while the instance has no owner. */
  async function newcomer(username: string, ip: string | null, now: number): Promise<User | null> {
    // Before setup, the owner is made with the setup link: a proxy's first visitor must not take the instance.
    if (await accounts.needsSetup()) return null;
    const role = options.defaultRole;
    if (role === "none") {
      const actor = { userId: null, name: username, ip };
      const why = `${PROXY_METHOD}: no such user; SIGNALBOARD_OIDC_DEFAULT_ROLE=none lets no one in by themselves`;
      await recordAudit(store, actor, "sign_in.failed", `user ${username}`, why, now);
      throw new Forbidden(
        `The sign-in proxy says you are “${username}”, but there is no account by that name here, and new people are not let in by themselves. Ask an admin to add “${username}” in Settings → Members.`,
      );
    }
    // No one knows this password: the person signs in through the proxy, or an admin sets one.
    const input = { username, password: randomToken(), role, projects: null };
    try {
      return await createAccount(
        store,
        input,
        { userId: null, name: username, ip },
        () => role,
        now,
        options.passwordCost,
      );
    } catch (error) {
      // Two first requests at once: the other made the account.
      if (!(error instanceof Conflict)) throw error;
      return publicOf(await store.users.findByUsername(username));
    }
  }

  return {
    /**
     * A session for the person the proxy names (`name`, the header's value), or null while the
     * instance is not set up. Throws Forbidden for a name that cannot be a username, or someone
     * without an account when new people are refused.
     */
    async signIn(name: string, ip: string | null, now = clock.now()): Promise<NewSession | null> {
      const parsed = usernameRule.safeParse(name);
      if (!parsed.success) {
        const said = name.slice(0, 64);
        const why = `${PROXY_METHOD}: not a username (have the proxy send a username or an e-mail address)`;
        await recordAudit(store, { userId: null, name: said, ip }, "sign_in.failed", `user ${said}`, why, now);
        throw new Forbidden(
          `The sign-in proxy names you “${name.slice(0, 64)}”, which cannot be a username here: a username ${parsed.error.issues[0]!.message}. Have the proxy send a username or an e-mail address, not a display name.`,
        );
      }
      const username = parsed.data;
      const user = publicOf(await store.users.findByUsername(username)) ?? (await newcomer(username, ip, now));
      return user ? accounts.openSession(user, PROXY_METHOD, ip, now) : null;
    },
  };
}

export type ProxySignIn = ReturnType<typeof proxySignIn>;

function publicOf(record: (User & { passwordHash?: string }) | null): User | null {
  if (!record) return null;
  const { passwordHash: _hash, ...user } = record;
  return user;
}
