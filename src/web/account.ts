// Settings → Account: anyone signed in changes their own password (their other sessions end).
// Settings → Audit: the owner reads the trail.
import { z } from "zod";
import { AUDIT_KEPT, AUDIT_PAGE } from "../domain/audit.ts";
import { type Route, route } from "../http/routes.ts";
import type { Services } from "../services.ts";
import { fieldErrors, param, text } from "./form.ts";
import { isHtmx, type Kit } from "./kit.ts";
import { paths } from "./paths.ts";
import { accountPage, auditPage, passwordForm } from "./views/account.ts";

const nav = { section: "settings" as const };

export function accountRoutes(services: Services, kit: Kit): Route[] {
  return [account(kit), password(services, kit), audit(services, kit)];
}

const account = (kit: Kit) =>
  route({
    method: "GET",
    path: paths.account,
    access: "self",
    handle: ({ session }) => kit.page(session, accountPage(session.user), { title: "Account", nav }),
  });

const password = ({ accounts, signIns }: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.password,
    access: "self",
    form: z.object({ current: text, password: text, confirm: text }),
    async handle({ request, session, body: input, actor }) {
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
          : kit.page(session, accountPage(session.user, form), { title: "Account", nav, status: 422 });
      }
      return isHtmx(request)
        ? kit.fragment(form)
        : kit.page(session, accountPage(session.user, form), { title: "Account", nav });
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
