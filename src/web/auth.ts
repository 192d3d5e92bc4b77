// Setup of the owner account, sign-in and sign-out.
import { z } from "zod";
import { Forbidden } from "../errors.ts";
import type { Edge } from "../http/edge.ts";
import { href } from "../http/href.ts";
import { type Route, route } from "../http/routes.ts";
import { parseCookies, SESSION_COOKIE } from "../http/session.ts";
import type { Services } from "../services.ts";
import { SECOND_STEP_TTL_MS } from "../domain/accounts.ts";
import { fieldErrors, param, safeNext, text } from "./form.ts";
import type { Kit } from "./kit.ts";
import { paths } from "./paths.ts";
import { totpOffer } from "../domain/second-factor.ts";
import {
  enrollStepPage,
  loginPage,
  recoveryCodesPage,
  secondStepPage,
  setupCodeNeeded,
  setupPage,
  signedOutHere,
  signInLinkPage,
} from "./views/auth.ts";

const withCookie = (setCookie: string | null): Record<string, string> => (setCookie ? { "Set-Cookie": setCookie } : {});

export function authRoutes(services: Services, edge: Edge, kit: Kit): Route[] {
  return [
    setupForm(services, edge, kit),
    setup(services, edge, kit),
    loginForm(services, edge, kit),
    login(services, edge, kit),
    secondStepForm(services, edge, kit),
    secondStep(services, edge, kit),
    signInLinkForm(services, edge, kit),
    signInLink(services, edge, kit),
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

const loginForm = ({ accounts, oidc, config }: Services, { web }: Edge, kit: Kit) =>
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
      const methods = { oidcName: oidc?.name ?? null, passwords: config.passwordLogin };
      return kit.page(null, loginPage({ formToken: form.token, next, notice, ...methods }), {
        title: "Sign in",
        headers: withCookie(form.setCookie),
      });
    },
  });

const login = ({ accounts, signIns, oidc, config }: Services, { web, guard }: Edge, kit: Kit) =>
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
      if (!config.passwordLogin)
        throw new Forbidden("Signing in with a password is turned off here (SIGNALBOARD_PASSWORD_LOGIN=off).");
      const ip = guard.ip(request, server);
      await signIns?.take(ip);
      const signedIn = await accounts.login(username, password, ip, undefined, next);
      if (!signedIn) {
        const message = "Wrong username or password.";
        const methods = { oidcName: oidc?.name ?? null, passwords: true };
        return kit.page(null, loginPage({ formToken: _form, next, username, message, ...methods }), {
          title: "Sign in",
          status: 401,
        });
      }
      await signIns?.refund(ip);
      if ("secondStep" in signedIn) {
        // The password was right; no session until the second step is done, on a page of its own.
        const cookie = web.secondStepCookie(signedIn.token, SECOND_STEP_TTL_MS, request, server);
        return kit.redirect(request, paths.secondStep, { "Set-Cookie": cookie });
      }
      return kit.redirect(request, next, { "Set-Cookie": web.sessionCookie(signedIn.token, request, server) });
    },
  });

/** The sign-in page's ways in: the provider's button, and the password form unless it is turned off. */
const signInMethods = (oidc: Services["oidc"], config: Services["config"]) => ({
  oidcName: oidc?.name ?? null,
  passwords: config.passwordLogin,
});

const STEP_EXPIRED = "That sign-in took too long or was already finished. Sign in again.";

/** What the second step's page shows: a code to type, or (where one is required) a factor to set up. */
async function stepPage(
  { secondFactor, passkeys }: Services,
  kit: Kit,
  step: { purpose: "verify" | "enroll"; secret: string | null; user: { id: number; username: string } },
  formToken: string,
  message?: string,
  status = 200,
  headers: Record<string, string> = {},
): Promise<Response> {
  const { username } = step.user;
  const body =
    step.purpose === "enroll" && step.secret
      ? enrollStepPage({ formToken, username, offer: await totpOffer(username, step.secret), error: message })
      : secondStepPage({
          formToken,
          username,
          message,
          totp: (await secondFactor.status(step.user.id)).enabled,
          passkey: await passkeys.has(step.user.id),
        });
  return kit.page(null, body, { title: "Sign in", status, headers });
}

const secondStepForm = (services: Services, { web }: Edge, kit: Kit) =>
  route({
    method: "GET",
    path: paths.secondStep,
    access: "visitor",
    async handle({ request, server }) {
      const { accounts, oidc, config } = services;
      const token = web.secondStepToken(request);
      const step = token ? await accounts.secondStep(token) : null;
      const form = web.formToken(request, server);
      if (!step)
        return kit.page(
          null,
          loginPage({ formToken: form.token, next: "/", notice: STEP_EXPIRED, ...signInMethods(oidc, config) }),
          {
            title: "Sign in",
            status: 401,
            headers: withCookie(form.setCookie),
          },
        );
      return stepPage(services, kit, step, form.token, undefined, 200, withCookie(form.setCookie));
    },
  });

const secondStep = (services: Services, { web, guard }: Edge, kit: Kit) =>
  route({
    method: "POST",
    path: paths.secondStep,
    access: "visitor",
    form: z.object({ code: text, _form: text }),
    async handle({ request, server, body: { code, _form } }) {
      const { accounts, signIns, oidc, config } = services;
      // A wrong code is a failed sign-in, under the same limit as a wrong password (charged first),
      // per address and per person: someone who has the password must not guess six digits from
      // address after address (the password gives a new step as often as they like).
      const ip = guard.ip(request, server);
      await signIns?.take(ip);
      const token = web.secondStepToken(request) ?? "";
      const step = await accounts.secondStep(token);
      const person = step ? `user ${step.user.id}` : null;
      if (person) await signIns?.take(person);
      const done = !step
        ? "expired"
        : step.purpose === "enroll"
          ? await accounts.enrollAtSignIn(token, code, ip)
          : await accounts.verifySecondStep(token, code, ip);
      if (done === "expired" || !step) {
        await signIns?.refund(ip);
        return kit.page(
          null,
          loginPage({ formToken: _form, next: "/", notice: STEP_EXPIRED, ...signInMethods(oidc, config) }),
          {
            title: "Sign in",
            status: 401,
          },
        );
      }
      if (done === "wrong") {
        const message =
          step.purpose === "enroll"
            ? "This is not the code the app shows for this key. Check the phone's time, and type the code shown now."
            : "That code is not right, or was used already. Type the code shown now, or a recovery code.";
        return stepPage(services, kit, step, _form, message, 401);
      }
      await signIns?.refund(ip);
      if (person) await signIns?.refund(person);
      const cookie = { "Set-Cookie": web.sessionCookie(done.session.token, request, server) };
      if (done.recoveryCodes)
        return kit.page(null, recoveryCodesPage(done.recoveryCodes, done.next), {
          title: "Recovery codes",
          headers: cookie,
        });
      return kit.redirect(request, done.next, cookie);
    },
  });

const signInLinkForm = ({ accounts }: Services, { web }: Edge, kit: Kit) =>
  route({
    method: "GET",
    path: paths.signInLink,
    access: "visitor",
    query: z.object({ code: param.transform((code) => code ?? "") }),
    async handle({ request, server, query: { code } }) {
      const user = code ? await accounts.signInLinkFor(code) : null;
      const form = web.formToken(request, server);
      return kit.page(null, signInLinkPage({ formToken: form.token, code, username: user?.username ?? null }), {
        title: "Sign in",
        status: user ? 200 : 410,
        headers: withCookie(form.setCookie),
      });
    },
  });

const signInLink = ({ accounts, signIns }: Services, { web, guard }: Edge, kit: Kit) =>
  route({
    method: "POST",
    path: paths.signInLink,
    access: "visitor",
    form: z.object({ code: text, _form: text }),
    async handle({ request, server, body: { code, _form } }) {
      // Under the sign-in limit as a password is: a guessed link is a failed sign-in.
      const ip = guard.ip(request, server);
      await signIns?.take(ip);
      const session = await accounts.useSignInLink(code, ip);
      if (!session)
        return kit.page(null, signInLinkPage({ formToken: _form, code, username: null }), {
          title: "Sign in",
          status: 410,
        });
      await signIns?.refund(ip);
      return kit.redirect(request, paths.home, { "Set-Cookie": web.sessionCookie(session.token, request, server) });
    },
  });

const logout = ({ accounts, oidc }: Services, { web }: Edge, kit: Kit) =>
  route({
    method: "POST",
    path: paths.logout,
    access: "self",
    // Signed out already (the session ended): the stale cookie is cleared all the same.
    signedOut: ({ request, server }) =>
      kit.redirect(request, paths.login, { "Set-Cookie": web.clearSessionCookie(request, server) }),
    async handle({ request, server, session }) {
      const token = parseCookies(request.headers.get("cookie"))[SESSION_COOKIE];
      if (token) await accounts.logout(token);
      // Someone who signed in at the provider is signed out there too, when it offers that.
      // A page that moves on by itself rather than a redirect: the pages' form-action policy ('self')
      // would stop a form's redirect to another site.
      const atProvider = oidc ? await oidc.signOutUrl(session.user.id) : null;
      const cleared = { "Set-Cookie": web.clearSessionCookie(request, server) };
      if (atProvider)
        return kit.page(null, signedOutHere({ provider: oidc!.name, next: atProvider }), {
          title: "Signed out",
          headers: cleared,
        });
      return kit.redirect(request, paths.login, cleared);
    },
  });
