// Setup of the owner account, sign-in and sign-out.
import type { Edge } from "../http/edge.ts";
import { type Route, route } from "../http/routes.ts";
import { parseCookies, SESSION_COOKIE } from "../http/session.ts";
import type { Services } from "../services.ts";
import { field, fieldErrors, safeNext } from "./form.ts";
import type { Kit } from "./kit.ts";
import { loginPage, setupCodeNeeded, setupPage } from "./views/auth.ts";

export function authRoutes({ accounts, signIns }: Services, { web, guard }: Edge, kit: Kit): Route[] {
  const withCookie = (setCookie: string | null): Record<string, string> =>
    setCookie ? { "Set-Cookie": setCookie } : {};

  return [
    route({
      method: "GET",
      path: "/setup",
      access: "visitor",
      async handle({ request, server }) {
        const code = new URL(request.url).searchParams.get("code") ?? "";
        // A set-up link opened after the owner exists has done its job: say so on the sign-in page.
        if (!(await accounts.needsSetup())) return kit.redirect(request, code ? "/login?setup=used" : "/login");
        if (!(await accounts.checkSetupCode(code)))
          return kit.page(null, setupCodeNeeded({ stale: code !== "" }), { title: "Set up", status: 403 });
        const form = web.formToken(request, server);
        return kit.page(null, setupPage({ code, formToken: form.token }), {
          title: "Set up",
          headers: withCookie(form.setCookie),
        });
      },
    }),
    route({
      method: "POST",
      path: "/setup",
      access: "visitor",
      async handle({ request, server, body }) {
        const code = field(body, "code");
        const input = { username: field(body, "username"), password: field(body, "password") };
        try {
          const session = await accounts.setup(code, input, guard.ip(request, server));
          return kit.redirect(request, "/", { "Set-Cookie": web.sessionCookie(session.token, request, server) });
        } catch (error) {
          const errors = fieldErrors(error);
          if (!errors) throw error;
          return kit.page(
            null,
            setupPage({ code, formToken: field(body, "_form"), username: input.username, errors }),
            { title: "Set up", status: 422 },
          );
        }
      },
    }),
    route({
      method: "GET",
      path: "/login",
      access: "visitor",
      async handle({ request, server }) {
        const url = new URL(request.url);
        const next = safeNext(url.searchParams.get("next") ?? "/");
        if (await accounts.needsSetup()) return kit.page(null, setupCodeNeeded({ stale: false }), { title: "Set up" });
        if (await web.session(request)) return kit.redirect(request, next);
        const form = web.formToken(request, server);
        const notice =
          url.searchParams.get("setup") === "used"
            ? "This set-up link has expired: it was already used, and the owner account exists. Sign in below."
            : undefined;
        return kit.page(null, loginPage({ formToken: form.token, next, notice }), {
          title: "Sign in",
          headers: withCookie(form.setCookie),
        });
      },
    }),
    route({
      method: "POST",
      path: "/login",
      access: "visitor",
      async handle({ request, server, body }) {
        // Every attempt is charged before the password is checked (a check takes a while, and guesses
        // sent in parallel would all pass a limit checked first and charged after); success refunds it.
        const ip = guard.ip(request, server);
        await signIns?.take(ip);
        const username = field(body, "username");
        const next = safeNext(field(body, "next") || "/");
        const session = await accounts.login(username, field(body, "password"), ip);
        if (!session) {
          return kit.page(
            null,
            loginPage({ formToken: field(body, "_form"), next, username, message: "Wrong username or password." }),
            { title: "Sign in", status: 401 },
          );
        }
        await signIns?.refund(ip);
        return kit.redirect(request, next, { "Set-Cookie": web.sessionCookie(session.token, request, server) });
      },
    }),
    route({
      method: "POST",
      path: "/logout",
      access: "self",
      // Signed out already (the session ended): the stale cookie is cleared all the same.
      signedOut: ({ request, server }) =>
        kit.redirect(request, "/login", { "Set-Cookie": web.clearSessionCookie(request, server) }),
      async handle({ request, server }) {
        const token = parseCookies(request.headers.get("cookie"))[SESSION_COOKIE];
        if (token) await accounts.logout(token);
        return kit.redirect(request, "/login", { "Set-Cookie": web.clearSessionCookie(request, server) });
      },
    }),
  ];
}
