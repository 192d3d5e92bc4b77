// Settings → API (tokens) and Settings → Members.
import { AppError, NotFound, ValidationError } from "../errors.ts";
import { type Route, route } from "../http/routes.ts";
import type { Services } from "../services.ts";
import { field, fieldErrors } from "./form.ts";
import { html } from "./html.ts";
import type { Kit } from "./kit.ts";
import { confirmDialog, plural } from "./views/dialogs.ts";
import { apiPage, memberForm, membersPage, tokenCreator, tokenTable } from "./views/settings.ts";

export function settingsRoutes({ tokens, accounts, integrations, projects }: Services, kit: Kit): Route[] {
  const nav = { section: "settings" as const };
  const tokenId = (id: string | undefined): string => {
    if (!/^\d+$/.test(id ?? "")) throw new NotFound("That token does not exist.");
    return id!;
  };

  return [
    route({ method: "GET", path: "/settings", access: "member", handle: ({ request }) => kit.redirect(request, "/settings/api") }),
    route({
      method: "GET",
      path: "/settings/api",
      access: "member",
      async handle({ session }) {
        const [list, projectList] = await Promise.all([tokens.list(), projects.list()]);
        return kit.page(session, apiPage({ tokens: list, projects: projectList }), { title: "API tokens", nav });
      },
    }),
    route({ method: "GET", path: "/settings/api/tokens/list", access: "member", handle: async () => kit.fragment(tokenTable(await tokens.list())) }),
    route({
      method: "POST",
      path: "/settings/api/tokens",
      access: "member",
      async handle({ body, session }) {
        const values = { name: field(body, "name"), kind: field(body, "kind") || "full", project: field(body, "project"), channel: field(body, "channel").trim(), may_notify: field(body, "may_notify") };
        const isPublic = values.kind === "public";
        try {
          const created = await tokens.create(
            {
              name: values.name,
              kind: isPublic ? "public" : "full",
              project: isPublic ? values.project : undefined,
              channel: isPublic && values.channel ? values.channel : undefined,
              mayNotify: isPublic && values.may_notify === "on",
            },
            session.user,
          );
          return kit.fragment(tokenCreator({ projects: await projects.list(), created }));
        } catch (error) {
          if (!(error instanceof ValidationError) && !(error instanceof AppError && error.kind === "not_found")) throw error;
          return kit.fragment(tokenCreator({ projects: await projects.list(), values, error: error.message }), 422);
        }
      },
    }),
    route({
      method: "GET",
      path: "/settings/api/tokens/:id/revoke",
      access: "member",
      async handle({ params }) {
        const token = (await tokens.list()).find((t) => String(t.id) === params.id);
        if (!token) throw new NotFound("That token does not exist or was already revoked.");
        return kit.fragment(
          confirmDialog({
            title: `Revoke “${token.name}”?`,
            body: html`<p>Anything using <code>${token.prefix}…</code> is refused from its next request. This cannot be undone.</p>`,
            action: `/settings/api/tokens/${token.id}/revoke`,
            confirm: "Revoke token",
            danger: true,
          }),
        );
      },
    }),
    route({
      method: "POST",
      path: "/settings/api/tokens/:id/revoke",
      access: "member",
      async handle({ request, params }) {
        await tokens.revoke(tokenId(params.id));
        return kit.redirect(request, "/settings/api");
      },
    }),
    route({
      method: "POST",
      path: "/settings/api/tokens/:id/notify",
      access: "member",
      async handle({ params, body }) {
        await tokens.setMayNotify(tokenId(params.id), field(body, "may_notify") === "on");
        return kit.fragment(tokenTable(await tokens.list()));
      },
    }),
    route({
      method: "GET",
      path: "/settings/members",
      access: "member",
      async handle({ session }) {
        return kit.page(session, membersPage({ users: await accounts.list(), me: session.user }), { title: "Members", nav });
      },
    }),
    route({
      method: "POST",
      path: "/settings/members",
      access: "owner",
      async handle({ request, body }) {
        const username = field(body, "username");
        try {
          await accounts.createUser({ username, password: field(body, "password") }, "member");
        } catch (error) {
          const errors = fieldErrors(error);
          if (errors) return kit.fragment(memberForm({ username, errors }), 422);
          if (error instanceof AppError && error.kind === "conflict") return kit.fragment(memberForm({ username, errors: { username: error.message } }), 422);
          throw error;
        }
        return kit.redirect(request, "/settings/members");
      },
    }),
    route({
      method: "GET",
      path: "/settings/members/:id/remove",
      access: "owner",
      async handle({ params }) {
        const user = (await accounts.list()).find((u) => String(u.id) === params.id);
        if (!user) throw new NotFound("That user no longer exists.");
        const [made, added] = await Promise.all([tokens.list().then((list) => list.filter((t) => t.createdByUserId === user.id).length), integrations.createdBy(user.id)]);
        const what = [made ? plural(made, "API token") : "", added ? plural(added, "integration") : ""].filter(Boolean).join(" and ");
        return kit.fragment(
          confirmDialog({
            title: `Remove ${user.username}?`,
            body: html`<p>${user.username} is signed out everywhere and can no longer sign in.</p>
            ${what ? html`<fieldset><legend>${what} they created</legend>
              <label class="choice"><input type="radio" name="tokens" value="revoke" checked> Revoke and turn off ${made + added === 1 ? "it" : "them"} too</label>
              <label class="choice"><input type="radio" name="tokens" value="keep"> Keep ${made + added === 1 ? "it" : "them"} working</label>
            </fieldset>` : ""}`,
            action: `/settings/members/${user.id}/remove`,
            confirm: "Remove member",
            danger: true,
          }),
        );
      },
    }),
    route({
      method: "POST",
      path: "/settings/members/:id/remove",
      access: "member", // the service says why only the owner may
      async handle({ request, params, body, session }) {
        if (!/^\d+$/.test(params.id!)) throw new NotFound("That user no longer exists.");
        // Unless asked to keep them, the member's tokens go with them.
        await accounts.removeUser(Number(params.id), session.user, { keepTokens: field(body, "tokens") === "keep" });
        return kit.redirect(request, "/settings/members");
      },
    }),
  ];
}
