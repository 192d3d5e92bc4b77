// Settings → API (tokens) and Settings → Members.
import { Elysia } from "elysia";
import { FORM } from "../http/body.ts";
import type { Deps } from "../app.ts";
import { AppError, NotFound, ValidationError } from "../errors.ts";
import { field, fieldErrors } from "./form.ts";
import { html } from "./html.ts";
import type { Kit } from "./kit.ts";
import { confirmDialog, plural } from "./views/dialogs.ts";
import { apiPage, memberForm, membersPage, tokenCreator, tokenTable } from "./views/settings.ts";

export function settingsRoutes(deps: Deps, kit: Kit) {
  const { web, tokens, accounts, integrations } = deps;
  const nav = { section: "settings" as const };

  return new Elysia({ name: "web.settings" })
    .get("/settings", ({ request }) => kit.redirect(request, "/settings/api"))
    .get("/settings/api", ({ request }) => {
      const session = web.requireSession(request);
      return kit.page(session, apiPage({ tokens: tokens.list(), projects: deps.projects.list() }), { title: "API tokens", nav });
    })
    .get("/settings/api/tokens/list", ({ request }) => {
      web.requireSession(request);
      return kit.fragment(tokenTable(tokens.list()));
    })
    .post("/settings/api/tokens", async ({ request }) => {
      const session = web.requireSession(request);
      const body = await web.form(request, session);
      const values = { name: field(body, "name"), kind: field(body, "kind") || "full", project: field(body, "project"), channel: field(body, "channel").trim(), may_notify: field(body, "may_notify") };
      const isPublic = values.kind === "public";
      try {
        const created = tokens.create(
          {
            name: values.name,
            kind: isPublic ? "public" : "full",
            project: isPublic ? values.project : undefined,
            channel: isPublic && values.channel ? values.channel : undefined,
            mayNotify: isPublic && values.may_notify === "on",
          },
          session.user,
        );
        return kit.fragment(tokenCreator({ projects: deps.projects.list(), created }));
      } catch (error) {
        if (!(error instanceof ValidationError) && !(error instanceof AppError && error.kind === "not_found")) throw error;
        return kit.fragment(tokenCreator({ projects: deps.projects.list(), values, error: error.message }), 422);
      }
    }, FORM)
    .get("/settings/api/tokens/:id/revoke", ({ request, params }) => {
      web.requireSession(request);
      const token = tokens.list().find((t) => String(t.id) === params.id);
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
    })
    .post("/settings/api/tokens/:id/revoke", async ({ request, params }) => {
      const session = web.requireSession(request);
      const body = await web.form(request, session);
      if (!/^\d+$/.test(params.id)) throw new NotFound("That token does not exist.");
      tokens.revoke(params.id);
      return kit.redirect(request, "/settings/api");
    }, FORM)
    .post("/settings/api/tokens/:id/notify", async ({ request, params }) => {
      const session = web.requireSession(request);
      const body = await web.form(request, session);
      if (!/^\d+$/.test(params.id)) throw new NotFound("That token does not exist.");
      tokens.setMayNotify(params.id, field(body, "may_notify") === "on");
      return kit.fragment(tokenTable(tokens.list()));
    }, FORM)
    .get("/settings/members", ({ request }) => {
      const session = web.requireSession(request);
      return kit.page(session, membersPage({ users: accounts.list(), me: session.user }), { title: "Members", nav });
    })
    .post("/settings/members", async ({ request }) => {
      const session = web.requireSession(request);
      const body = await web.form(request, session);
      web.requireOwner(session);
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
    }, FORM)
    .get("/settings/members/:id/remove", ({ request, params }) => {
      const session = web.requireSession(request);
      web.requireOwner(session);
      const user = accounts.list().find((u) => String(u.id) === params.id);
      if (!user) throw new NotFound("That user no longer exists.");
      const made = tokens.list().filter((t) => t.createdByUserId === user.id).length;
      const added = integrations.createdBy(user.id);
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
    })
    .post("/settings/members/:id/remove", async ({ request, params }) => {
      const session = web.requireSession(request);
      const body = await web.form(request, session);
      if (!/^\d+$/.test(params.id)) throw new NotFound("That user no longer exists.");
      // Unless asked to keep them, the member's tokens go with them.
      await accounts.removeUser(Number(params.id), session.user, { keepTokens: field(body, "tokens") === "keep" });
      return kit.redirect(request, "/settings/members");
    }, FORM);
}
