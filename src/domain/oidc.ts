// Single sign-on with an OpenID Connect provider (SIGNALBOARD_OIDC_ISSUER): the authorization code
// flow with PKCE, state and nonce, spoken by openid-client, which also checks the ID token's iss,
// aud, exp, iat and nonce. Its signature is checked here with jose against the provider's keys:
// openid-client leaves it unchecked for tokens from the token endpoint (as OpenID Connect allows
// over TLS), and its own check would not look for a rotated key for a minute. A person is linked
// by the provider's `sub`; what becomes of an unknown one is accounts' business as for any other
// sign-in: a new person with the default role, an account an admin added (by e-mail address or
// username) linked, or a refusal.
import * as client from "openid-client";
import { createRemoteJWKSet, customFetch as jwksFetch, jwtVerify } from "jose";
import type { RoleMap } from "../config.ts";
import { AppError, Forbidden } from "../errors.ts";
import type { Role, User } from "../model/user.ts";
import type { Store } from "../store/store.ts";
import { type Clock, systemClock } from "../clock.ts";
import type { AccountService, NewSession } from "./accounts.ts";
import { audited, recordAudit } from "./audit.ts";
import { randomToken } from "./tokens.ts";

export type OidcSettings = {
  issuer: string;
  clientId: string;
  clientSecret?: string;
  scopes: string[];
  /** The button's words: "Sign in with <name>". */
  name: string;
  defaultRole: Role | "none";
  rolesClaim?: string;
  roleMap: RoleMap;
  /** {BASE_URL}/auth/oidc/callback */
  redirectUri: string;
  /** Where the provider sends someone back after signing them out there: the sign-in page. */
  afterSignOut: string;
};

/** fetch(), through the outbound rules. */
export type Fetch = (url: string, init: RequestInit) => Promise<Response>;

/** What the browser keeps (in a cookie) between leaving for the provider and coming back. */
export type PendingSignIn = { state: string; nonce: string; verifier: string; next: string; at: number };

/** How long a person may take at the provider. */
export const PENDING_TTL_MS = 10 * 60_000;

const RANK: Record<Role, number> = { viewer: 1, member: 2, admin: 3, owner: 4 };

/** Said after a refusal, on the sign-in page that shows it (its button starts a new sign-in). */
const AGAIN = "Sign in again below.";

/**
 * A refusal of the provider's answer: the sign-in starts again from the sign-in page. `reason` is
 * what the audit trail keeps; the message adds what the person does next.
 */
export class OidcRefused extends AppError {
  constructor(readonly reason: string) {
    super("invalid", "oidc_refused", `${reason} ${AGAIN}`);
  }
}

export function oidcService(
  store: Store,
  accounts: AccountService,
  settings: OidcSettings,
  options: { fetch: Fetch; clock?: Clock },
) {
  const clock = options.clock ?? systemClock;
  // Every request to the provider goes through the outbound rules, with their time limit (services.ts).
  const fetchVia: client.CustomFetch = (url, init) => options.fetch(url, init as RequestInit);
  let found: Promise<{ config: client.Configuration; keys: ReturnType<typeof createRemoteJWKSet> }> | null = null;

  /** The provider's configuration, read once (again after a failure: the provider may have been down). */
  function provider() {
    found ??= (async () => {
      const config = await client.discovery(
        new URL(settings.issuer),
        settings.clientId,
        undefined,
        settings.clientSecret ? client.ClientSecretBasic(settings.clientSecret) : client.None(),
        {
          [client.customFetch]: fetchVia,
          // An http:// issuer is the operator's choice (a provider on the same box or LAN).
          execute: settings.issuer.startsWith("http:") ? [client.allowInsecureRequests] : [],
          timeout: 10,
        },
      );
      const jwksUri = config.serverMetadata().jwks_uri;
      if (!jwksUri) throw new Error("the provider's configuration names no jwks_uri");
      // The token comes straight from the provider, so a key not found means it rotated its keys:
      // they are read again at once (no cooldown).
      const keys = createRemoteJWKSet(new URL(jwksUri), {
        cooldownDuration: 0,
        cacheMaxAge: 10 * 60_000,
        [jwksFetch]: (url, init) => options.fetch(url, init),
      });
      return { config, keys };
    })();
    found.catch(() => (found = null));
    return found;
  }

  async function reach<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw new AppError(
        "unavailable",
        "oidc_unavailable",
        `The sign-in provider at ${settings.issuer} cannot be reached or answered wrongly (${describe(error)}). Try again later.`,
      );
    }
  }

  /** The role the claims give with SIGNALBOARD_OIDC_ROLE_MAP (the highest), or null when none of its groups is there. */
  function mappedRole(claims: Record<string, unknown>): Role | null {
    if (!settings.rolesClaim || !settings.roleMap.length) return null;
    const raw = claims[settings.rolesClaim];
    const groups = new Set<string>();
    for (const g of Array.isArray(raw) ? raw : typeof raw === "string" ? raw.split(/[\s,]+/) : []) {
      if (typeof g !== "string") continue;
      groups.add(g);
      groups.add(g.replace(/^\//, "")); // Keycloak's full group paths
    }
    let best: Role | null = null;
    for (const { group, role } of settings.roleMap)
      if (groups.has(group) && (!best || RANK[role] > RANK[best])) best = role;
    return best;
  }

  /** The username a new person gets: the provider's, else their e-mail address, within the rule. */
  function usernameOf(claims: Record<string, unknown>, sub: string): string {
    const said = [claims.preferred_username, claims.email, claims.nickname].find(
      (v): v is string => typeof v === "string" && v.trim() !== "",
    );
    const cleaned = (said ?? "")
      .toLowerCase()
      .replace(/[^a-z0-9._@+-]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 56);
    return cleaned || `sso-${new Bun.CryptoHasher("sha256").update(sub).digest("hex").slice(0, 10)}`;
  }

  /**
   * An account an admin added for them, not linked to anyone yet: by e-mail address (only one the
   * provider says is verified: `email_verified: true`), then by username. The owner's only by a
   * verified e-mail address: a preferred_username is whatever the provider lets people choose, and
   * must not make anyone the owner ("owner" says that is what it named).
   */
  async function addedFor(claims: Record<string, unknown>): Promise<User | "owner" | null> {
    const names: { name: string; verified: boolean }[] = [];
    if (typeof claims.email === "string" && claims.email_verified === true)
      names.push({ name: claims.email.toLowerCase(), verified: true });
    if (typeof claims.preferred_username === "string")
      names.push({ name: claims.preferred_username.toLowerCase(), verified: false });
    for (const { name, verified } of names) {
      const user = await store.users.findByUsername(name);
      if (user && (await store.users.subjectOf(user.id)) === null) {
        if (user.role === "owner" && !verified) return "owner";
        const { passwordHash: _hash, ...found } = user;
        return found;
      }
    }
    return null;
  }

  async function createPerson(
    claims: Record<string, unknown>,
    sub: string,
    role: Role,
    ip: string | null,
    now: number,
  ) {
    // A password nobody knows: the column needs one, and password sign-in must never match it.
    const passwordHash = await Bun.password.hash(randomToken(), { algorithm: "bcrypt", cost: 4 });
    const base = usernameOf(claims, sub);
    for (let n = 1; n <= 20; n++) {
      const username = n === 1 ? base : `${base}-${n}`;
      const made = await audited(
        store,
        { userId: null, name: username, ip },
        async (tx, note) => {
          const user = await tx.users.create({ username, passwordHash, role, oidcSubject: sub }, now);
          if (user) note("member.added", `user ${user.username}`, `role ${role}; every project; by single sign-on`);
          return user;
        },
        now,
      );
      if (made) return made;
    }
    throw new Forbidden("No free username was found for you. Ask an admin to add you by your e-mail address.");
  }

  async function refuse(name: string, why: string, ip: string | null, now: number, message: string): Promise<never> {
    await recordAudit(
      store,
      { userId: null, name: name.slice(0, 64), ip },
      "sign_in.failed",
      `user ${name.slice(0, 64)}`,
      `oidc: ${why}`,
      now,
    );
    throw new Forbidden(message);
  }

  /** The person these checked claims name: found by subject, linked, or created; their role as the claims say. */
  async function personOf(claims: Record<string, unknown>, ip: string | null, now: number): Promise<User> {
    const sub = String(claims.sub);
    const mapped = mappedRole(claims);
    const fallback = settings.defaultRole;
    const wanted: Role | "none" = mapped ?? fallback;
    let user = await store.users.findBySubject(sub);
    if (!user) {
      const added = await addedFor(claims);
      if (added === "owner")
        return refuse(
          usernameOf(claims, sub),
          "preferred_username names the owner, who is linked only by a verified e-mail address",
          ip,
          now,
          "The provider's username for you is the owner's, and the owner's account is linked to single sign-on only by a verified e-mail address that is its username. Sign in as the owner another way (a password, or `signalboard user sign-in-link`).",
        );
      if (added) {
        if (!(await store.users.linkSubject(added.id, sub, now)))
          return refuse(
            added.username,
            "subject linked to someone else",
            ip,
            now,
            "This account is linked to another sign-in.",
          );
        user = added;
      }
    }
    if (!user) {
      if (wanted === "none")
        return refuse(
          usernameOf(claims, sub),
          "not added",
          ip,
          now,
          "You have no account here yet. Ask an admin to add you by your e-mail address or username, then sign in again.",
        );
      return createPerson(claims, sub, wanted, ip, now);
    }
    // With a role map the role follows the claims at every sign-in; the owner stays the owner.
    if (user.role === "owner" || !settings.rolesClaim || !settings.roleMap.length) return user;
    if (wanted === "none")
      return refuse(
        user.username,
        "no group that gives a role",
        ip,
        now,
        "Your groups at the provider give you no role here. Ask an admin.",
      );
    if (wanted === user.role) return user;
    const from = user.role;
    await audited(
      store,
      { userId: null, name: "single sign-on", ip },
      async (tx, note) => {
        await tx.users.setRole(user.id, wanted, now);
        note(
          "member.changed",
          `user ${user.username}`,
          `role ${from} → ${wanted} (the provider's ${settings.rolesClaim})`,
        );
      },
      now,
    );
    return { ...user, role: wanted, updatedAt: now };
  }

  /** The provider's answer checked, and the person it names signed in (finish, without its audit of refusals). */
  async function finishChecked(
    callback: URL,
    pending: PendingSignIn | null,
    ip: string | null,
    now: number,
  ): Promise<NewSession> {
    const providerError = callback.searchParams.get("error");
    if (providerError) {
      const said = callback.searchParams.get("error_description");
      throw new OidcRefused(
        `The provider did not sign you in (${providerError.slice(0, 100)}${said ? `: ${said.slice(0, 200)}` : ""}).`,
      );
    }
    if (!pending || now - pending.at > PENDING_TTL_MS || now < pending.at)
      throw new OidcRefused(`This sign-in was not started here, or took longer than ten minutes.`);
    if (callback.searchParams.get("state") !== pending.state)
      throw new OidcRefused(`The answer's state is not this sign-in's (a forged or replayed answer).`);
    if (await accounts.needsSetup()) throw new Forbidden("Set up the owner account first.");
    const { config, keys } = await reach(provider);
    let claims: Record<string, unknown>;
    try {
      const tokens = await client.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: pending.verifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      const checked = tokens.claims()!;
      await jwtVerify(tokens.id_token!, keys, {
        issuer: config.serverMetadata().issuer,
        audience: settings.clientId,
      });
      claims = { ...checked };
      // Some providers (Authelia) keep profile and groups for the userinfo endpoint.
      if (config.serverMetadata().userinfo_endpoint) {
        const info = await client.fetchUserInfo(config, tokens.access_token, checked.sub);
        claims = { ...info, ...checked };
      }
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw new OidcRefused(`The provider's answer was refused: ${describe(error)}.`);
    }
    const person = await personOf(claims, ip, now);
    return accounts.openSession(person, "oidc", ip, now);
  }

  return {
    name: settings.name,

    /** Where to send the browser, and what it must keep until it comes back. */
    async begin(next: string, now = clock.now()): Promise<{ url: string; pending: PendingSignIn }> {
      const { config } = await reach(provider);
      const verifier = client.randomPKCECodeVerifier();
      const pending: PendingSignIn = {
        state: client.randomState(),
        nonce: client.randomNonce(),
        verifier,
        next,
        at: now,
      };
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: settings.redirectUri,
        scope: settings.scopes.join(" "),
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: "S256",
        state: pending.state,
        nonce: pending.nonce,
      });
      return { url: url.href, pending };
    },

    /**
     * The provider sent the browser back to `callback` (its query: the code and state, or an
     * error). The code is exchanged, the ID token checked, and the person it names signed in.
     */
    async finish(
      callback: URL,
      pending: PendingSignIn | null,
      ip: string | null = null,
      now = clock.now(),
    ): Promise<NewSession> {
      try {
        return await finishChecked(callback, pending, ip, now);
      } catch (error) {
        // A refused answer (a forged or replayed state, a token that fails its checks) is a failed
        // sign-in in the audit trail; refusals of a known person were written where they were made.
        if (error instanceof OidcRefused) {
          const actor = { userId: null, name: "single sign-on", ip };
          await recordAudit(store, actor, "sign_in.failed", "single sign-on", `oidc: ${error.reason}`, now);
        }
        throw error;
      }
    },

    /** Where signing out continues: the provider's end-session endpoint for someone who signed in there, else null. */
    async signOutUrl(userId: number): Promise<string | null> {
      if ((await store.users.subjectOf(userId)) === null) return null;
      try {
        const { config } = await provider();
        if (!config.serverMetadata().end_session_endpoint) return null;
        return client
          .buildEndSessionUrl(config, { client_id: settings.clientId, post_logout_redirect_uri: settings.afterSignOut })
          .toString();
      } catch {
        return null; // signed out here all the same
      }
    },
  };
}

export type OidcService = ReturnType<typeof oidcService>;

/** What went wrong, in the words of the innermost error (openid-client wraps a refused request as "something went wrong"). */
function describe(error: unknown): string {
  let e = error as { message?: string; error?: string; cause?: unknown } | undefined;
  while (e && e.cause instanceof Error && !e.error) e = e.cause as typeof e;
  if (e?.error) return `${e.error}${e.message ? ` (${e.message})` : ""}`;
  // "unexpected HTTP response status code" names none: the answer it refused does.
  const status = e?.cause instanceof Response ? ` ${e.cause.status}` : "";
  return `${e?.message ?? String(error)}${status}`.slice(0, 300);
}
