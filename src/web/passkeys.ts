// Passkeys: adding and removing one's own (Settings → Account), and signing in with one, as the
// second step after the password or alone. The browser's script asks for options and sends the
// authenticator's answer back as JSON-in-a-form (the signed-in CSRF token or, before sign-in, the
// form token), and reads JSON back: the options, where to go next, or the error shape.
import { z } from "zod";
import type { Edge } from "../http/edge.ts";
import { type Route, route } from "../http/routes.ts";
import type { Services } from "../services.ts";
import type { PasskeyUse } from "../domain/passkeys.ts";
import { fieldErrors, safeNext, text } from "./form.ts";
import type { Kit } from "./kit.ts";
import { itemParams } from "./notifications.ts";
import { paths } from "./paths.ts";
import { accountView } from "./account.ts";

const noStore = { "Cache-Control": "no-store" };
const json = (body: unknown, headers: Record<string, string> = {}) =>
  Response.json(body, { headers: { ...noStore, ...headers } });

export function passkeyRoutes(services: Services, edge: Edge, kit: Kit): Route[] {
  return [
    registrationOptions(services),
    register(services),
    remove(services, kit),
    signInOptions(services, edge, "sign_in"),
    signInOptions(services, edge, "second_step"),
    signIn(services, edge, "sign_in"),
    signIn(services, edge, "second_step"),
  ];
}

const registrationOptions = ({ passkeys }: Services) =>
  route({
    method: "POST",
    path: paths.passkeyOptions,
    access: "self",
    handle: async ({ session }) => json(await passkeys.registrationOptions(session.user)),
  });

const register = ({ passkeys }: Services) =>
  route({
    method: "POST",
    path: paths.passkeys,
    access: "self",
    form: z.object({ name: text, response: text }),
    async handle({ session, body, actor }) {
      const added = await passkeys.register(session.user, body, actor);
      return json({ id: added.id, name: added.name, next: paths.account });
    },
  });

/** Removes a passkey, confirmed with the password or a code; a wrong one counts as a failed sign-in. */
const remove = (services: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.passkeyRemove,
    access: "self",
    params: itemParams,
    form: z.object({ confirm: text }),
    async handle({ session, params, body: { confirm }, actor }) {
      const { passkeys, signIns } = services;
      const ip = actor.ip ?? "unknown";
      await signIns?.take(ip);
      try {
        await passkeys.remove(session.user, params.id, confirm, actor);
        await signIns?.refund(ip);
        return accountView(services, kit, session, { passkeyRemoved: true });
      } catch (error) {
        const errors = fieldErrors(error);
        if (!errors?.confirm) {
          await signIns?.refund(ip);
          throw error;
        }
        return accountView(services, kit, session, { passkeyError: { id: params.id, message: errors.confirm } }, 422);
      }
    },
  });

const OPTIONS_PATH = { sign_in: paths.passkeySignInOptions, second_step: paths.passkeyStepOptions } as const;
const ANSWER_PATH = { sign_in: paths.passkeySignIn, second_step: paths.passkeyStep } as const;
const STEP_EXPIRED = "That sign-in took too long or was already finished. Sign in again.";

/** The second step this browser is in (its cookie), for its person; null without one. */
async function stepOf({ accounts }: Services, { web }: Edge, request: Request) {
  const token = web.secondStepToken(request);
  const step = token ? await accounts.secondStep(token) : null;
  return token && step?.purpose === "verify" ? { token, step } : null;
}

const signInOptions = (services: Services, edge: Edge, use: PasskeyUse) =>
  route({
    method: "POST",
    path: OPTIONS_PATH[use],
    access: "visitor",
    async handle({ request }) {
      if (use === "sign_in") return json(await services.passkeys.authenticationOptions("sign_in", null));
      const current = await stepOf(services, edge, request);
      if (!current) return Response.json(expired(), { status: 401, headers: noStore });
      return json(await services.passkeys.authenticationOptions("second_step", current.step.user.id));
    },
  });

const expired = () => ({ success: false, statusCode: 401, error: "second_step_expired", message: STEP_EXPIRED });

/** The authenticator's answer: a session when it is right; a failed sign-in, under the same limit as passwords, when not. */
const signIn = (services: Services, edge: Edge, use: PasskeyUse) =>
  route({
    method: "POST",
    path: ANSWER_PATH[use],
    access: "visitor",
    form: z.object({ response: text, next: text.transform((next) => safeNext(next || "/")) }),
    async handle({ request, server, body: { response, next } }) {
      const { accounts, passkeys, signIns } = services;
      const { web, guard } = edge;
      const ip = guard.ip(request, server);
      await signIns?.take(ip);
      const current = use === "second_step" ? await stepOf(services, edge, request) : null;
      if (use === "second_step" && !current) {
        await signIns?.refund(ip);
        return Response.json(expired(), { status: 401, headers: noStore });
      }
      const { user } = await passkeys.authenticate(use, response, ip, current?.step.user.id ?? null);
      await signIns?.refund(ip);
      const done = current
        ? await accounts.passSecondStep(current.token, user.id, "password + passkey", ip)
        : { session: await accounts.openSession(user, "passkey", ip), next };
      if (done === "expired") return Response.json(expired(), { status: 401, headers: noStore });
      return json({ next: done.next }, { "Set-Cookie": web.sessionCookie(done.session.token, request, server) });
    },
  });
