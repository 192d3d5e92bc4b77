// Settings → Members: admins and the owner add and remove people; the owner changes a person's
// role and the projects they see (the rules are the service's: domain/members.ts).
import { z } from "zod";
import { visibleTo } from "../domain/access.ts";
import { mayRemove, rolesGivenBy } from "../domain/members.ts";
import { AppError, NotFound } from "../errors.ts";
import { href } from "../http/href.ts";
import { type Route, route } from "../http/routes.ts";
import type { User } from "../model/user.ts";
import type { Services } from "../services.ts";
import { fieldErrors, list, param, text } from "./form.ts";
import { html } from "./html.ts";
import type { Kit } from "./kit.ts";
import { paths } from "./paths.ts";
import { confirmDialog, plural } from "./views/dialogs.ts";
import { memberChangeForm, memberForm, membersPage } from "./views/members.ts";

const nav = { section: "settings" as const };

/** A member's id in a path: one that is not a number names no one. */
const memberParams = z.object({
  id: z
    .string()
    .regex(/^\d{1,12}$/, "That user no longer exists.")
    .transform(Number),
});

/** The projects a form chose: every project (null), or those ticked ("some", or nothing said and some ticked). */
const reachFields = {
  reach: text,
  projects: list,
};
const chosenProjects = ({ reach, projects }: { reach: string; projects: string[] }): string[] | null =>
  reach === "all" || (reach === "" && projects.length === 0) ? null : projects;

export function memberRoutes(services: Services, kit: Kit): Route[] {
  return [
    membersList(services, kit),
    requireSecondFactor(services, kit),
    addMember(services, kit),
    changeMember(services, kit),
    removeDialog(services, kit),
    removeMember(services, kit),
  ];
}

const projectsOf = async ({ projects }: Services, user: User) => visibleTo(user, await projects.list(), (p) => p.name);

async function userOf({ accounts }: Services, id: number): Promise<User> {
  const user = (await accounts.list()).find((u) => u.id === id);
  if (!user) throw new NotFound("That user no longer exists.");
  return user;
}

const membersList = (services: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.members,
    access: "admin",
    query: z.object({ changed: param, saved: param }),
    async handle({ query, session }) {
      const me = session.user;
      const users = await services.accounts.list();
      const changed = users.find((u) => String(u.id) === query.changed) ?? null;
      const view = {
        users,
        me,
        changed,
        projects: await projectsOf(services, me),
        roles: rolesGivenBy(me),
        removable: (u: User) => mayRemove(me, u),
        secondFactor: {
          required: await services.secondFactor.required(),
          withFactor: await services.secondFactor.withFactor(users.map((u) => u.id)),
          csrf: session.csrfToken,
          saved: query.saved === "second-factor",
        },
      };
      return kit.page(session, membersPage(view), { title: "Members", nav });
    },
  });

const requireSecondFactor = ({ secondFactor }: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.secondFactorRequired,
    access: "admin",
    form: z.object({ required: text }),
    async handle({ request, body: { required }, actor }) {
      await secondFactor.setRequired(required === "on", actor);
      return kit.redirect(request, href(paths.members, {}, { saved: "second-factor" }));
    },
  });

const addMember = (services: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.members,
    access: "admin",
    form: z.object({ username: text, role: text, password: text, ...reachFields }),
    async handle({ request, body, session, actor }) {
      const values = { username: body.username, role: body.role || "member", projects: chosenProjects(body) };
      const form = {
        roles: rolesGivenBy(session.user),
        projects: await projectsOf(services, session.user),
        mine: session.user.projects,
      };
      if (values.projects?.length === 0)
        return kit.fragment(
          memberForm({ ...form, values, errors: { projects: "choose at least one project, or every project" } }),
          422,
        );
      try {
        await services.members.add(session.user, { ...values, password: body.password }, actor);
      } catch (error) {
        const errors =
          fieldErrors(error) ??
          (error instanceof AppError && error.kind === "conflict" ? { username: error.message } : null);
        if (errors) return kit.fragment(memberForm({ ...form, values, errors }), 422);
        throw error;
      }
      return kit.redirect(request, paths.members);
    },
  });

const changeMember = (services: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.member,
    access: "owner",
    params: memberParams,
    form: z.object({ role: text, ...reachFields }),
    async handle({ request, params, body, session, actor }) {
      const user = await userOf(services, params.id);
      const all = await services.projects.list();
      const input = { role: body.role, projects: chosenProjects(body) };
      if (input.projects?.length === 0)
        return kit.fragment(
          memberChangeForm(user, all, { errors: { projects: "choose at least one project, or every project" } }),
          422,
        );
      try {
        await services.members.change(session.user, user.id, input, actor);
        return kit.redirect(request, href(paths.members, {}, { changed: user.id }));
      } catch (error) {
        const errors = fieldErrors(error);
        if (errors) return kit.fragment(memberChangeForm(user, all, { errors }), 422);
        throw error;
      }
    },
  });

const removeDialog = (services: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.memberRemove,
    access: "admin",
    params: memberParams,
    async handle({ params, session }) {
      const user = await userOf(services, params.id);
      if (!mayRemove(session.user, user)) throw new NotFound("That user no longer exists, or is not yours to remove.");
      const [made, added] = await Promise.all([
        services.tokens.list().then((list) => list.filter((t) => t.createdByUserId === user.id).length),
        services.integrations.createdBy(user.id),
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
          action: href(paths.memberRemove, { id: user.id }),
          confirm: "Remove member",
          danger: true,
        }),
      );
    },
  });

const removeMember = ({ members }: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.memberRemove,
    access: "admin", // the service says whom an admin may remove
    params: memberParams,
    form: z.object({ tokens: text }),
    async handle({ request, params, body, session, actor }) {
      // Unless asked to keep them, the member's tokens go with them.
      await members.remove(params.id, session.user, { keepTokens: body.tokens === "keep" }, actor);
      return kit.redirect(request, paths.members);
    },
  });
