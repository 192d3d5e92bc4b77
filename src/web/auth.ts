// Setup of the owner account, sign-in and sign-out.
import { z } from "zod";
import type { Edge } from "../http/edge.ts";
import { href } from "../http/href.ts";
import { type Route, route } from "../http/routes.ts";
import { parseCookies, SESSION_COOKIE } from "../http/session.ts";
import type { Services } from "../services.ts";
import { fieldErrors, param, safeNext, text } from "./form.ts";
import type { Kit } from "./kit.ts";
import { paths } from "./paths.ts";
import { loginPage, setupCodeNeeded, setupPage } from "./views/auth.ts";

const withCookie = (setCookie: string | null): Record<string, string> => (setCookie ? { "Set-Cookie": setCookie } : {});

export function authRoutes(services: Services, edge: Edge, kit: Kit): Route[] {
  return [
    setupForm(services, edge, kit),
    setup(services, edge, kit),
    loginForm(services, edge, kit),
    login(services, edge, kit),
    logout(services, edge, kit),
  ];
}

const setupForm = ({ accounts }: Services, { web }: Edge, kit: Kit) =>
  route({
    method: "GET",
    path: paths.setup,
    access: "visitor",
    query: z.object({ code: param.transform((code) => code ?? "") }),
    async handle({ request, server, query: { code } }) {
      // A set-up link opened after the owner exists has done its job: say so on the sign-in page.
      if (!(await accounts.needsSetup()))
        return kit.redirect(request, code ? href(paths.login, {}, { setup: "used" }) : paths.login);
      if (!(await accounts.checkSetupCode(code)))
        return kit.page(null, setupCodeNeeded({ stale: code !== "" }), { title: "Set up", status: 403 });
      const form = web.formToken(request, server);
      return kit.page(null, setupPage({ code, formToken: form.token }), {
        title: "Set up",
        headers: withCookie(form.setCookie),
      });
    },
  });

const setup = ({ accounts }: Services, { web, guard }: Edge, kit: Kit) =>
  route({
    method: "POST",
    path: paths.setup,
    access: "visitor",
    form: z.object({ code: text, username: text, password: text, _form: text }),
    async handle({ request, server, body: { code, _form, ...input } }) {
      try {
        const session = await accounts.setup(code, input, guard.ip(request, server));
        return kit.redirect(request, paths.home, { "Set-Cookie": web.sessionCookie(session.token, request, server) });
      } catch (error) {
        const errors = fieldErrors(error);
        if (!errors) throw error;
        return kit.page(null, setupPage({ code, formToken: _form, username: input.username, errors }), {
          title: "Set up",
          status: 422,
        });
      }
    },
  });

const loginForm = ({ accounts }: Services, { web }: Edge, kit: Kit) =>
  route({
    method: "GET",
    path: paths.login,
    access: "visitor",
    query: z.object({ next: param.transform((next) => safeNext(next ?? "/")), setup: param }),
    async handle({ request, server, query: { next, setup } }) {
      if (await accounts.needsSetup()) return kit.page(null, setupCodeNeeded({ stale: false }), { title: "Set up" });
      // Signed in already, or by a trusted sign-in proxy's header just now.
      if (await web.session(request, server)) return web.withSessionCookie(request, kit.redirect(request, next));
      const form = web.formToken(request, server);
      const notice =
        setup === "used"
          ? "This set-up link has expired: it was already used, and the owner account exists. Sign in below."
          : undefined;
      return kit.page(null, loginPage({ formToken: form.token, next, notice }), {
        title: "Sign in",
        headers: withCookie(form.setCookie),
      });
    },
  });

const login = ({ accounts, signIns }: Services, { web, guard }: Edge, kit: Kit) =>
  route({
    method: "POST",
    path: paths.login,
    access: "visitor",
    form: z.object({
      username: text,
      password: text,
      next: text.transform((next) => safeNext(next || "/")),
      _form: text,
    }),
    async handle({ request, server, body: { username, password, next, _form } }) {
      // Every attempt is charged before the password is checked (a check takes a while, and guesses
      // sent in parallel would all pass a limit checked first and charged after); success refunds it.
      const ip = guard.ip(request, server);
      await signIns?.take(ip);
      const session = await accounts.login(username, password, ip);
      if (!session) {
        return kit.page(null, loginPage({ formToken: _form, next, username, message: "Wrong username or password." }), {
          title: "Sign in",
          status: 401,
        });
      }
      await signIns?.refund(ip);
      return kit.redirect(request, next, { "Set-Cookie": web.sessionCookie(session.token, request, server) });
    },
  });

const logout = ({ accounts }: Services, { web }: Edge, kit: Kit) =>
  route({
    method: "POST",
    path: paths.logout,
    access: "self",
    // Signed out already (the session ended): the stale cookie is cleared all the same.
    signedOut: ({ request, server }) =>
      kit.redirect(request, paths.login, { "Set-Cookie": web.clearSessionCookie(request, server) }),
    async handle({ request, server }) {
      const token = parseCookies(request.headers.get("cookie"))[SESSION_COOKIE];
      if (token) await accounts.logout(token);
      return kit.redirect(request, paths.login, { "Set-Cookie": web.clearSessionCookie(request, server) });
    },
  });
