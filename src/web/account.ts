// Settings → Account: anyone signed in changes their own password (their other sessions end).
// Settings → Audit: the owner reads the trail.
import { AUDIT_KEPT, AUDIT_PAGE } from "../domain/audit.ts";
import { type Route, route } from "../http/routes.ts";
import type { Services } from "../services.ts";
import { field, fieldErrors } from "./form.ts";
import type { Kit } from "./kit.ts";
import { accountPage, auditPage, passwordForm } from "./views/account.ts";

export function accountRoutes({ accounts, audit, signIns }: Services, kit: Kit): Route[] {
  const nav = { section: "settings" as const };
  return [
    route({
      method: "GET",
      path: "/settings/account",
      access: "self",
      handle: ({ session }) => kit.page(session, accountPage(session.user), { title: "Account", nav }),
    }),
    route({
      method: "POST",
      path: "/settings/account/password",
      access: "self",
      async handle({ request, session, body, actor }) {
        const input = {
          current: field(body, "current"),
          password: field(body, "password"),
          confirm: field(body, "confirm"),
        };
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
          return request.headers.get("hx-request") === "true"
            ? kit.fragment(form, 422)
            : kit.page(session, accountPage(session.user, form), { title: "Account", nav, status: 422 });
        }
        return request.headers.get("hx-request") === "true"
          ? kit.fragment(form)
          : kit.page(session, accountPage(session.user, form), { title: "Account", nav });
      },
    }),
    route({
      method: "GET",
      path: "/settings/audit",
      access: "owner",
      async handle({ request, session }) {
        const before = new URL(request.url).searchParams.get("before");
        const after = before && /^\d{1,15}$/.test(before) ? Number(before) : undefined;
        const entries = await audit.list(after);
        const older = entries.length === AUDIT_PAGE ? entries.at(-1)!.id : null;
        return kit.page(session, auditPage(entries, { older, kept: AUDIT_KEPT, first: after === undefined }), {
          title: "Audit",
          nav,
        });
      },
    }),
  ];
}
