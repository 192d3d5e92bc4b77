// Setup of the owner account, sign-in and sign-out.
import { Elysia } from "elysia";
import { FORM, readForm, WEB_BODY_LIMIT } from "../http/body.ts";
import type { Deps } from "../app.ts";
import { RateLimiter } from "../http/rate-limit.ts";
import { parseCookies, SESSION_COOKIE } from "../http/session.ts";
import { field, fieldErrors, safeNext } from "./form.ts";
import type { Kit } from "./kit.ts";
import { loginPage, setupCodeNeeded, setupPage } from "./views/auth.ts";

export function authRoutes(deps: Deps, kit: Kit) {
  const { accounts, web, guard } = deps;
  const failedLogins = deps.config.rateLimitLogin ? new RateLimiter(deps.config.rateLimitLogin) : null;

  return new Elysia({ name: "web.auth" })
    .get("/setup", ({ request, server }) => {
      if (!accounts.needsSetup()) return kit.redirect(request, "/login");
      const code = new URL(request.url).searchParams.get("code") ?? "";
      if (!accounts.checkSetupCode(code)) return kit.page(null, setupCodeNeeded(), { title: "Set up", status: 403 });
      const form = web.formToken(request, server);
      return kit.page(null, setupPage({ code, formToken: form.token }), { title: "Set up", headers: form.setCookie ? { "Set-Cookie": form.setCookie } : {} });
    })
    .post("/setup", async ({ request, server }) => {
      const body = await readForm(request, WEB_BODY_LIMIT);
      web.verifyFormToken(request, field(body, "_form"));
      const code = field(body, "code");
      const input = { username: field(body, "username"), password: field(body, "password") };
      try {
        const session = await accounts.setup(code, input);
        return kit.redirect(request, "/", { "Set-Cookie": web.sessionCookie(session.token, request, server) });
      } catch (error) {
        const errors = fieldErrors(error);
        if (!errors) throw error;
        return kit.page(null, setupPage({ code, formToken: field(body, "_form"), username: input.username, errors }), { title: "Set up", status: 422 });
      }
    }, FORM)
    .get("/login", ({ request, server }) => {
      const next = safeNext(new URL(request.url).searchParams.get("next") ?? "/");
      if (accounts.needsSetup()) return kit.page(null, setupCodeNeeded(), { title: "Set up" });
      if (web.session(request)) return kit.redirect(request, next);
      const form = web.formToken(request, server);
      return kit.page(null, loginPage({ formToken: form.token, next }), { title: "Sign in", headers: form.setCookie ? { "Set-Cookie": form.setCookie } : {} });
    })
    .post("/login", async ({ request, server }) => {
      // Every attempt is charged before the password is checked (a check takes a while, and guesses
      // sent in parallel would all pass a limit checked first and charged after); success refunds it.
      const ip = guard.ip(request, server);
      failedLogins?.take(ip);
      const body = await readForm(request, WEB_BODY_LIMIT);
      web.verifyFormToken(request, field(body, "_form"));
      const username = field(body, "username");
      const next = safeNext(field(body, "next") || "/");
      const session = await accounts.login(username, field(body, "password"));
      if (!session) {
        return kit.page(null, loginPage({ formToken: field(body, "_form"), next, username, message: "Wrong username or password." }), { title: "Sign in", status: 401 });
      }
      failedLogins?.refund(ip);
      return kit.redirect(request, next, { "Set-Cookie": web.sessionCookie(session.token, request, server) });
    }, FORM)
    .post("/logout", async ({ request, server }) => {
      const body = await readForm(request, WEB_BODY_LIMIT);
      const session = web.session(request);
      if (session) {
        web.verifyCsrf(request, session, field(body, "_csrf"));
        const token = parseCookies(request.headers.get("cookie"))[SESSION_COOKIE];
        if (token) await accounts.logout(token);
      }
      return kit.redirect(request, "/login", { "Set-Cookie": web.clearSessionCookie(request, server) });
    }, FORM);
}
