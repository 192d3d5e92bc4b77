// The dashboard's guard: session cookies, sign-in checks and CSRF protection.
//
// - The session cookie is HttpOnly and SameSite=Lax, Secure when the dashboard is served over
//   https (BASE_URL, or X-Forwarded-Proto from a trusted proxy).
// - Behind a sign-in proxy (SIGNALBOARD_AUTH_PROXY_HEADER), the proxy's header is the sign-in: a
//   request from a trusted proxy that names someone the session is not theirs of gets a new
//   session for them (the cookie is set on its answer), and the session it came with ends, so a
//   header that changes to another person never keeps the first person's session. A request that
//   names the session's own person goes on with it, as does one without the header.
// - Every state-changing request must carry the session's CSRF token (X-CSRF-Token, which htmx
//   sends, or a _csrf form field), and an Origin header, when present, must be ours.
// - Forms shown before sign-in (setup, login) use a double-submit cookie instead.
import { timingSafeEqual } from "node:crypto";
import type { Server } from "bun";
import type { Config } from "../config.ts";
import type { AccountService } from "../domain/accounts.ts";
import type { ProxySignIn } from "../domain/proxy-sign-in.ts";
import { randomToken } from "../domain/tokens.ts";
import { readForm, readJson, WEB_BODY_LIMIT } from "./body.ts";
import { clientIp } from "./client-ip.ts";
import { proxyHeader } from "./proxy-auth.ts";
import { Forbidden, SignInRequired } from "../errors.ts";
import type { Session } from "../model/user.ts";

export const SESSION_COOKIE = "sb_session";
export const FORM_COOKIE = "sb_form";
/** The half-signed-in's second step (a code after the password): not a session, it opens nothing else. */
export const SECOND_STEP_COOKIE = "sb_second_step";

export function parseCookies(header: string | null): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at < 1) continue;
    const name = part.slice(0, at).trim();
    try {
      out[name] = decodeURIComponent(part.slice(at + 1).trim());
    } catch {
      // a malformed cookie is ignored, like a missing one
    }
  }
  return out;
}

function equal(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export type WebGuard = ReturnType<typeof createWebGuard>;

export function createWebGuard(
  accounts: AccountService,
  config: Pick<Config, "baseUrl" | "trustProxy" | "sessionTtl" | "authProxyHeader" | "authProxyTrusted">,
  proxy: ProxySignIn | null = null,
) {
  const baseOrigin = new URL(config.baseUrl).origin;
  const header = proxy ? proxyHeader(config) : null;
  /** The session a sign-in proxy's header made during a request: the request goes on with it, and its answer sets the cookie. */
  const made = new WeakMap<Request, { token: string; setCookie: string }>();

  /** The session the request's cookie names, or the one made for it during this request. */
  function tokenOf(request: Request): string | undefined {
    return made.get(request)?.token ?? parseCookies(request.headers.get("cookie"))[SESSION_COOKIE];
  }

  /**
   * The session for the person a trusted proxy names; `current`, the cookie's, when it is theirs.
   * Another person's ends. Null without the header (or from an untrusted peer: ignored).
   */
  async function proxied(
    request: Request,
    server: Server<unknown> | null,
    current: Session | null,
  ): Promise<Session | null | undefined> {
    const name = header!.named(request, server);
    if (name === null) return undefined;
    if (current?.user.username === name.toLowerCase()) return current;
    const token = tokenOf(request);
    if (current && token) await accounts.logout(token);
    const ip = clientIp(request, server, config.trustProxy);
    const fresh = await proxy!.signIn(name, ip);
    if (!fresh) return null;
    made.set(request, {
      token: fresh.token,
      setCookie: cookie(SESSION_COOKIE, fresh.token, Math.floor(config.sessionTtl / 1000), request, server),
    });
    return accounts.session(fresh.token);
  }

  function secure(request: Request, server?: Server<unknown> | null): boolean {
    if (config.baseUrl.startsWith("https:")) return true;
    const peer = clientIp(request, server, []);
    return config.trustProxy.includes(peer) && request.headers.get("x-forwarded-proto") === "https";
  }

  function cookie(
    name: string,
    value: string,
    maxAgeSeconds: number,
    request: Request,
    server?: Server<unknown> | null,
  ): string {
    return `${name}=${encodeURIComponent(value)}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure(request, server) ? "; Secure" : ""}`;
  }

  function checkOrigin(request: Request): void {
    const origin = request.headers.get("origin");
    if (!origin) return;
    const host = request.headers.get("host");
    const own = host ? [`http://${host}`, `https://${host}`] : [];
    if (origin !== baseOrigin && !own.includes(origin))
      throw new Forbidden("This request came from another site and was refused (CSRF protection).");
  }

  return {
    /**
     * The request's session. Given the `server` it came through (a dashboard route's first look),
     * a trusted sign-in proxy's header is read too, and may make a new one (see the top).
     */
    async session(request: Request, server?: Server<unknown> | null): Promise<Session | null> {
      const token = tokenOf(request);
      const current = token ? await accounts.session(token) : null;
      if (!header || server === undefined || made.has(request)) return current;
      const signedIn = await proxied(request, server, current);
      return signedIn === undefined ? current : signedIn;
    },

    /** The signed-in session; without one, the visitor is sent to sign in (or to set up the owner), then back here. */
    async requireSession(request: Request, server?: Server<unknown> | null): Promise<Session> {
      const session = await this.session(request, server);
      if (session) return session;
      throw new SignInRequired(await accounts.needsSetup());
    },

    /** `response`, with the cookie of a session a sign-in proxy's header made during its request. */
    withSessionCookie(request: Request, response: Response): Response {
      const setCookie = made.get(request)?.setCookie;
      if (!setCookie) return response;
      const headers = new Headers(response.headers);
      headers.append("Set-Cookie", setCookie);
      return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
    },

    /**
     * The form of a signed-in page's POST: read (capped), then the session checked again, since it
     * may have ended (a sign-out, a removed member) while the body came in, then its CSRF token.
     */
    async form(request: Request, session: Session): Promise<Record<string, string | string[]>> {
      const body = await readForm(request, WEB_BODY_LIMIT);
      await this.stillSignedIn(request, session);
      this.verifyCsrf(request, session, body._csrf);
      return body;
    },

    /** A signed-in page's JSON body (sent by its script, with the CSRF header): as form(), for JSON. */
    async json(request: Request, session: Session, limit: number): Promise<unknown> {
      const body = await readJson(request, limit);
      await this.stillSignedIn(request, session);
      this.verifyCsrf(request, session);
      return body;
    },

    /** Throws as requireSession does unless `session` still is the request's live session. */
    async stillSignedIn(request: Request, session: Session): Promise<void> {
      if ((await this.session(request))?.sessionId !== session.sessionId) await this.requireSession(request);
    },

    requireOwner(session: Session): void {
      if (session.user.role !== "owner") throw new Forbidden("Only the owner can do this.");
    },

    /** For POST/DELETE from a signed-in page: the session's CSRF token, from a header or the form. */
    verifyCsrf(request: Request, session: Session, formToken?: unknown): void {
      checkOrigin(request);
      const sent = request.headers.get("x-csrf-token") ?? (typeof formToken === "string" ? formToken : "");
      if (!sent || !equal(sent, session.csrfToken))
        throw new Forbidden("The form's security token is missing or stale. Reload the page and try again.");
    },

    /** A double-submit token for forms shown before sign-in; set its cookie on the response. */
    formToken(request: Request, server?: Server<unknown> | null): { token: string; setCookie: string | null } {
      const existing = parseCookies(request.headers.get("cookie"))[FORM_COOKIE];
      if (existing && /^[A-Za-z0-9]{40}$/.test(existing)) return { token: existing, setCookie: null };
      const token = randomToken().slice(3);
      return { token, setCookie: cookie(FORM_COOKIE, token, 3600, request, server) };
    },

    verifyFormToken(request: Request, formToken: unknown): void {
      checkOrigin(request);
      const expected = parseCookies(request.headers.get("cookie"))[FORM_COOKIE];
      if (!expected || typeof formToken !== "string" || !equal(formToken, expected)) {
        throw new Forbidden("The form's security token is missing or stale. Reload the page and try again.");
      }
    },

    /** A cookie of the sign-in's own (HttpOnly, SameSite=Lax, Secure over https); Max-Age 0 clears it. */
    cookie,

    sessionCookie(token: string, request: Request, server?: Server<unknown> | null): string {
      return cookie(SESSION_COOKIE, token, Math.floor(config.sessionTtl / 1000), request, server);
    },

    secondStepCookie(token: string, maxAgeMs: number, request: Request, server?: Server<unknown> | null): string {
      return cookie(SECOND_STEP_COOKIE, token, Math.floor(maxAgeMs / 1000), request, server);
    },

    /** The token of the second step this browser is in, if any. */
    secondStepToken(request: Request): string | null {
      return parseCookies(request.headers.get("cookie"))[SECOND_STEP_COOKIE] || null;
    },

    clearSessionCookie(request: Request, server?: Server<unknown> | null): string {
      return cookie(SESSION_COOKIE, "", 0, request, server);
    },
  };
}
