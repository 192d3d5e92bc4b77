// Settings → Account: anyone signed in changes their own password (their other sessions end).
// Settings → Audit: the owner reads the trail.
import { z } from "zod";
import { AUDIT_KEPT, AUDIT_PAGE } from "../domain/audit.ts";
import { type Route, route } from "../http/routes.ts";
import type { Services } from "../services.ts";
import { fieldErrors, param, text } from "./form.ts";
import { isHtmx, type Kit } from "./kit.ts";
import { paths } from "./paths.ts";
import { type Html, html } from "./html.ts";
import { type PasskeyNote, passkeySection } from "./views/passkeys.ts";
import { accountPage, auditPage, type FactorView, passwordForm, secondFactorSection } from "./views/account.ts";
import { newTotpSecret } from "../domain/second-factor.ts";
import type { Session } from "../model/user.ts";

const nav = { section: "settings" as const };

export function accountRoutes(services: Services, kit: Kit): Route[] {
  return [
    account(services, kit),
    password(services, kit),
    totp(services, kit),
    totpOff(services, kit),
    audit(services, kit),
  ];
}

/** The second factor's sections as they are now (or as `view` and `keys` say, after a change): TOTP, then passkeys. */
async function factorSection(
  { secondFactor, passkeys }: Services,
  session: Session,
  view?: FactorView,
  keys: PasskeyNote = {},
): Promise<Html> {
  if (!view) {
    const status = await secondFactor.status(session.user.id);
    view = status.enabled
      ? { state: "on", recoveryLeft: status.recoveryLeft }
      : { state: "off", required: await secondFactor.required() };
  }
  const mine = await passkeys.list(session.user.id);
  return html`${secondFactorSection(view, session.csrfToken)}${passkeySection(mine, session.csrfToken, keys)}`;
}

/** Settings → Account as it is now, with a note on the passkeys section (after removing one). */
export async function accountView(
  services: Services,
  kit: Kit,
  session: Session,
  keys: PasskeyNote,
  status = 200,
): Promise<Response> {
  return kit.page(
    session,
    accountPage(session.user, undefined, await factorSection(services, session, undefined, keys)),
    {
      title: "Account",
      nav,
      status,
    },
  );
}

const account = (services: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.account,
    access: "self",
    handle: async ({ session }) =>
      kit.page(session, accountPage(session.user, undefined, await factorSection(services, session)), {
        title: "Account",
        nav,
      }),
  });

/** Sets an authenticator up: without a secret, offers a new one; with it and a code, turns it on. */
const totp = (services: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.totp,
    access: "self",
    form: z.object({ secret: text, code: text }),
    async handle({ session, body: { secret, code }, actor }) {
      const { secondFactor } = services;
      const user = session.user;
      const show = async (view: FactorView, status = 200) =>
        kit.page(session, accountPage(user, undefined, await factorSection(services, session, view)), {
          title: "Account",
          nav,
          status,
        });
      if (!secret) {
        const fresh = newTotpSecret();
        return show({ state: "setup", secret: fresh, offer: await secondFactor.offer(user.username, fresh) });
      }
      try {
        return show({ state: "done", codes: await secondFactor.enable(user, secret, code, actor) });
      } catch (error) {
        const errors = fieldErrors(error);
        if (!errors?.code) throw error;
        const offer = await secondFactor.offer(user.username, secret);
        return show({ state: "setup", secret, offer, error: errors.code }, 422);
      }
    },
  });

/** Turns the authenticator off, with one of its codes; a wrong one counts as a failed sign-in. */
const totpOff = (services: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.totpOff,
    access: "self",
    form: z.object({ code: text }),
    async handle({ session, body: { code }, actor }) {
      const { secondFactor, signIns } = services;
      const ip = actor.ip ?? "unknown";
      await signIns?.take(ip);
      let view: FactorView | undefined;
      let status = 200;
      try {
        await secondFactor.disable(session.user, code, actor);
        await signIns?.refund(ip);
      } catch (error) {
        const errors = fieldErrors(error);
        if (!errors?.code) throw error;
        const left = (await secondFactor.status(session.user.id)).recoveryLeft;
        view = { state: "on", recoveryLeft: left, error: errors.code };
        status = 422;
      }
      return kit.page(session, accountPage(session.user, undefined, await factorSection(services, session, view)), {
        title: "Account",
        nav,
        status,
      });
    },
  });

const password = (services: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.password,
    access: "self",
    form: z.object({ current: text, password: text, confirm: text }),
    async handle({ request, session, body: input, actor }) {
      const { accounts, signIns } = services;
      // A wrong current password counts as a failed sign-in from this address (charged before the
      // check, given back when it was right): a session left open is no way to guess without limit.
      const ip = actor.ip ?? "unknown";
      await signIns?.take(ip);
      let form;
      try {
        await accounts.changePassword(session, input, actor.ip);
        await signIns?.refund(ip);
        form = passwordForm({ changed: true });
      } catch (error) {
        const errors = fieldErrors(error);
        if (!errors) throw error;
        if (!errors.current) await signIns?.refund(ip);
        form = passwordForm({ errors });
        // Without JavaScript the form posts as a page: it comes back as one, with its errors.
        return isHtmx(request)
          ? kit.fragment(form, 422)
          : kit.page(session, accountPage(session.user, form, await factorSection(services, session)), {
              title: "Account",
              nav,
              status: 422,
            });
      }
      return isHtmx(request)
        ? kit.fragment(form)
        : kit.page(session, accountPage(session.user, form, await factorSection(services, session)), {
            title: "Account",
            nav,
          });
    },
  });

const audit = ({ audit }: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.audit,
    access: "owner",
    query: z.object({ before: param }),
    async handle({ query: { before }, session }) {
      const after = before && /^\d{1,15}$/.test(before) ? Number(before) : undefined;
      const entries = await audit.list(after);
      const older = entries.length === AUDIT_PAGE ? entries.at(-1)!.id : null;
      return kit.page(session, auditPage(entries, { older, kept: AUDIT_KEPT, first: after === undefined }), {
        title: "Audit",
        nav,
      });
    },
  });
