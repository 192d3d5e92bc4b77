// Single sign-on: leaving for the OpenID provider, and coming back from it (domain/oidc.ts).
import type { Server } from "bun";
import { z } from "zod";
import { AppError, NotFound } from "../errors.ts";
import type { Edge } from "../http/edge.ts";
import { statusOf } from "../http/errors.ts";
import { requestId } from "../http/request-log.ts";
import { log } from "../logger.ts";
import { type Route, route } from "../http/routes.ts";
import { parseCookies } from "../http/session.ts";
import { PENDING_TTL_MS, type PendingSignIn } from "../domain/oidc.ts";
import type { Services } from "../services.ts";
import { param, safeNext } from "./form.ts";
import type { Kit } from "./kit.ts";
import { paths } from "./paths.ts";
import { loginPage } from "./views/auth.ts";

/** Holds the state, nonce and PKCE verifier of the sign-in under way, for this browser only. */
export const OIDC_COOKIE = "sb_oidc";

const NOT_SET_UP = "Single sign-on is not set up here (SIGNALBOARD_OIDC_ISSUER).";

export function oidcRoutes(services: Services, edge: Edge, kit: Kit): Route[] {
  return [startOidc(services, edge, kit), finishOidc(services, edge, kit)];
}

const pendingShape = z.object({
  state: z.string(),
  nonce: z.string(),
  verifier: z.string(),
  next: z.string(),
  at: z.number(),
});

function pendingOf(request: Request): PendingSignIn | null {
  const raw = parseCookies(request.headers.get("cookie"))[OIDC_COOKIE];
  if (!raw) return null;
  try {
    // Its `next` is checked again: a cookie planted by someone else must not send anyone off-site.
    const pending = pendingShape.parse(JSON.parse(Buffer.from(raw, "base64url").toString("utf8")));
    return { ...pending, next: safeNext(pending.next) };
  } catch {
    return null; // a cookie we did not write starts nothing
  }
}

const startOidc = ({ oidc, accounts, config }: Services, { web }: Edge, kit: Kit) =>
  route({
    method: "GET",
    path: paths.oidcStart,
    access: "visitor",
    query: z.object({ next: param.transform((next) => safeNext(next ?? "/")) }),
    async handle({ request, server, query: { next } }) {
      if (!oidc) throw new NotFound(NOT_SET_UP);
      if (await accounts.needsSetup()) return kit.redirect(request, paths.login);
      let begun: Awaited<ReturnType<typeof oidc.begin>>;
      try {
        begun = await oidc.begin(next);
      } catch (error) {
        // The provider down or misconfigured: the sign-in page again, saying so, with its other ways in.
        if (!(error instanceof AppError) || error.kind !== "unavailable") throw error;
        const [status, code, message] = [statusOf(error), error.code, error.message];
        log.warn("request failed", {
          id: requestId(request),
          method: "GET",
          path: paths.oidcStart,
          status,
          error: code,
          message,
        });
        return signInPageWith(request, server, { web, kit, config, oidcName: oidc.name }, next, error);
      }
      const { url, pending } = begun;
      const value = Buffer.from(JSON.stringify(pending)).toString("base64url");
      return new Response(null, {
        status: 303,
        headers: {
          Location: url,
          "Cache-Control": "no-store",
          "Set-Cookie": web.cookie(OIDC_COOKIE, value, PENDING_TTL_MS / 1000, request, server),
        },
      });
    },
  });

const finishOidc = ({ oidc, config, signIns }: Services, { web, guard }: Edge, kit: Kit) =>
  route({
    method: "GET",
    path: paths.oidcCallback,
    access: "visitor",
    async handle({ request, server }) {
      if (!oidc) throw new NotFound(NOT_SET_UP);
      const pending = pendingOf(request);
      // Used once: whatever comes of it, this browser's pending sign-in ends here.
      const cleared = web.cookie(OIDC_COOKIE, "", 0, request, server);
      // The URL the provider was told to send back to, with what it sent (not the Host the request names).
      const callback = new URL(`${config.baseUrl}${paths.oidcCallback}${new URL(request.url).search}`);
      // Under the sign-in limit as a password is: forged or replayed answers are failed sign-ins.
      const ip = guard.ip(request, server);
      await signIns?.take(ip);
      try {
        const session = await oidc.finish(callback, pending, ip);
        await signIns?.refund(ip);
        const headers = new Headers({ Location: pending?.next ?? "/", "Cache-Control": "no-store" });
        headers.append("Set-Cookie", cleared);
        headers.append("Set-Cookie", web.sessionCookie(session.token, request, server));
        return new Response(null, { status: 303, headers });
      } catch (error) {
        if (!(error instanceof AppError) || error.kind === "internal") throw error;
        const page = await signInPageWith(
          request,
          server,
          { web, kit, config, oidcName: oidc.name },
          pending?.next ?? "/",
          error,
        );
        page.headers.append("Set-Cookie", cleared);
        return page;
      }
    },
  });

/** The sign-in page again, saying why single sign-on did not sign in (with the error's status). */
async function signInPageWith(
  request: Request,
  server: Server<unknown> | null,
  { web, kit, config, oidcName }: { web: Edge["web"]; kit: Kit; config: Services["config"]; oidcName: string },
  next: string,
  error: AppError,
): Promise<Response> {
  const form = web.formToken(request, server);
  const body = loginPage({
    formToken: form.token,
    next,
    message: error.message,
    oidcName,
    passwords: config.passwordLogin,
  });
  const page = await kit.page(null, body, { title: "Sign in", status: statusOf(error) });
  page.headers.set("Cache-Control", "no-store");
  if (form.setCookie) page.headers.append("Set-Cookie", form.setCookie);
  return page;
}
