// Settings → Members: admins and the owner add and remove people; the owner changes a person's
// role and the projects they see (the rules are the service's: domain/members.ts).
import { visibleTo } from "../domain/access.ts";
import { mayRemove, rolesGivenBy } from "../domain/members.ts";
import { AppError, NotFound } from "../errors.ts";
import { type Route, route } from "../http/routes.ts";
import type { User } from "../model/user.ts";
import type { Services } from "../services.ts";
import { field, fieldErrors, fields } from "./form.ts";
import { html } from "./html.ts";
import type { Kit } from "./kit.ts";
import { confirmDialog, plural } from "./views/dialogs.ts";
import { memberChangeForm, memberForm, membersPage } from "./views/members.ts";

/** The projects a form chose: every project (null), or those ticked ("some", or nothing said and some ticked). */
function chosenProjects(body: unknown): string[] | null {
  const reach = field(body, "reach");
  const ticked = fields(body, "projects");
  return reach === "all" || (reach === "" && ticked.length === 0) ? null : ticked;
}

export function memberRoutes({ accounts, members, tokens, integrations, projects }: Services, kit: Kit): Route[] {
  const nav = { section: "settings" as const };
  const projectsOf = async (user: User) => visibleTo(user, await projects.list(), (p) => p.name);
  const idOf = (id: string | undefined): number => {
    if (!/^\d{1,12}$/.test(id ?? "")) throw new NotFound("That user no longer exists.");
    return Number(id);
  };
  async function userOf(id: string | undefined): Promise<User> {
    const user = (await accounts.list()).find((u) => u.id === idOf(id));
    if (!user) throw new NotFound("That user no longer exists.");
    return user;
  }

  return [
    route({
      method: "GET",
      path: "/settings/members",
      access: "admin",
      async handle({ request, session }) {
        const me = session.user;
        const users = await accounts.list();
        const changed = users.find((u) => String(u.id) === new URL(request.url).searchParams.get("changed")) ?? null;
        const view = {
          users,
          me,
          changed,
          projects: await projectsOf(me),
          roles: rolesGivenBy(me),
          removable: (u: User) => mayRemove(me, u),
        };
        return kit.page(session, membersPage(view), { title: "Members", nav });
      },
    }),
    route({
      method: "POST",
      path: "/settings/members",
      access: "admin",
      async handle({ request, body, session, actor }) {
        const values = {
          username: field(body, "username"),
          role: field(body, "role") || "member",
          projects: chosenProjects(body),
        };
        const form = {
          roles: rolesGivenBy(session.user),
          projects: await projectsOf(session.user),
          mine: session.user.projects,
        };
        if (values.projects?.length === 0)
          return kit.fragment(
            memberForm({ ...form, values, errors: { projects: "choose at least one project, or every project" } }),
            422,
          );
        try {
          await members.add(session.user, { ...values, password: field(body, "password") }, actor);
        } catch (error) {
          const errors =
            fieldErrors(error) ??
            (error instanceof AppError && error.kind === "conflict" ? { username: error.message } : null);
          if (errors) return kit.fragment(memberForm({ ...form, values, errors }), 422);
          throw error;
        }
        return kit.redirect(request, "/settings/members");
      },
    }),
    route({
      method: "POST",
      path: "/settings/members/:id",
      access: "owner",
      async handle({ request, params, body, session, actor }) {
        const user = await userOf(params.id);
        const all = await projects.list();
        const input = { role: field(body, "role"), projects: chosenProjects(body) };
        if (input.projects?.length === 0)
          return kit.fragment(
            memberChangeForm(user, all, { errors: { projects: "choose at least one project, or every project" } }),
            422,
          );
        try {
          await members.change(session.user, user.id, input, actor);
          return kit.redirect(request, `/settings/members?changed=${user.id}`);
        } catch (error) {
          const errors = fieldErrors(error);
          if (errors) return kit.fragment(memberChangeForm(user, all, { errors }), 422);
          throw error;
        }
      },
    }),
    route({
      method: "GET",
      path: "/settings/members/:id/remove",
      access: "admin",
      async handle({ params, session }) {
        const user = await userOf(params.id);
        if (!mayRemove(session.user, user))
          throw new NotFound("That user no longer exists, or is not yours to remove.");
        const [made, added] = await Promise.all([
          tokens.list().then((list) => list.filter((t) => t.createdByUserId === user.id).length),
          integrations.createdBy(user.id),
        ]);
        const what = [made ? plural(made, "API token") : "", added ? plural(added, "integration") : ""]
          .filter(Boolean)
          .join(" and ");
        return kit.fragment(
          confirmDialog({
            title: `Remove ${user.username}?`,
            body: html`<p>${user.username} is signed out everywhere and can no longer sign in.</p>
            ${
              what
                ? html`<fieldset><legend>${what} they created</legend>
              <label class="choice"><input type="radio" name="tokens" value="revoke" checked> Revoke and turn off ${made + added === 1 ? "it" : "them"} too</label>
              <label class="choice"><input type="radio" name="tokens" value="keep"> Keep ${made + added === 1 ? "it" : "them"} working</label>
            </fieldset>`
                : ""
            }`,
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
      access: "admin", // the service says whom an admin may remove
      async handle({ request, params, body, session, actor }) {
        // Unless asked to keep them, the member's tokens go with them.
        await members.remove(idOf(params.id), session.user, { keepTokens: field(body, "tokens") === "keep" }, actor);
        return kit.redirect(request, "/settings/members");
      },
    }),
  ];
}
