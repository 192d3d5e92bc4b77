// Settings → API: tokens. Admins and the owner create, list and revoke them; someone limited to
// some projects sees and manages only the tokens within theirs, and the full-access tokens they
// make reach only their projects.
import { hasRole, visibleTo } from "../domain/access.ts";
import { tokenWithin } from "../domain/tokens.ts";
import { AppError, NotFound, ValidationError } from "../errors.ts";
import { type Route, route } from "../http/routes.ts";
import type { Token } from "../model/token.ts";
import type { User } from "../model/user.ts";
import type { Services } from "../services.ts";
import { field } from "./form.ts";
import { html } from "./html.ts";
import type { Kit } from "./kit.ts";
import { confirmDialog } from "./views/dialogs.ts";
import { apiPage, type SnippetTarget, tokenCreator, tokenTable } from "./views/settings.ts";

export function settingsRoutes({ tokens, projects, config }: Services, kit: Kit): Route[] {
  const nav = { section: "settings" as const };
  const tokenId = (id: string | undefined): string => {
    if (!/^\d+$/.test(id ?? "")) throw new NotFound("That token does not exist.");
    return id!;
  };
  const tokensOf = async (user: User): Promise<Token[]> =>
    (await tokens.list()).filter((t) => tokenWithin(t, user.projects));
  const projectsOf = async (user: User) => visibleTo(user, await projects.list(), (p) => p.name);

  /** Where a new token's examples send an event: its project (and channel), or one the person may see. */
  async function targetOf(info: Token, user: User): Promise<SnippetTarget> {
    const mine = await projectsOf(user);
    const project =
      info.project ?? (mine.find((p) => p.name === config.defaultProject) ?? mine[0])?.name ?? config.defaultProject;
    return { baseUrl: config.baseUrl, project, channel: info.channel ?? "general" };
  }

  return [
    route({
      method: "GET",
      path: "/settings",
      access: "self",
      handle: ({ request, session }) =>
        kit.redirect(request, hasRole(session.user, "admin") ? "/settings/api" : "/settings/account"),
    }),
    route({
      method: "GET",
      path: "/settings/api",
      access: "admin",
      async handle({ session }) {
        const [list, projectList] = await Promise.all([tokensOf(session.user), projectsOf(session.user)]);
        return kit.page(session, apiPage({ tokens: list, projects: projectList, mine: session.user.projects }), {
          title: "API tokens",
          nav,
        });
      },
    }),
    route({
      method: "GET",
      path: "/settings/api/tokens/list",
      access: "admin",
      handle: async ({ session }) => kit.fragment(tokenTable(await tokensOf(session.user))),
    }),
    route({
      method: "POST",
      path: "/settings/api/tokens",
      access: "admin",
      async handle({ body, session, actor }) {
        const values = {
          name: field(body, "name"),
          kind: field(body, "kind") || "full",
          project: field(body, "project"),
          channel: field(body, "channel").trim(),
          may_notify: field(body, "may_notify"),
        };
        const isPublic = values.kind === "public";
        const form = { projects: await projectsOf(session.user), mine: session.user.projects };
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
            actor,
          );
          return kit.fragment(
            tokenCreator({ ...form, created: { ...created, target: await targetOf(created.info, session.user) } }),
          );
        } catch (error) {
          // A mistake to fix in the form: a field, a project that is not there, a name already taken.
          if (
            !(error instanceof ValidationError) &&
            !(error instanceof AppError && (error.kind === "not_found" || error.kind === "conflict"))
          )
            throw error;
          return kit.fragment(tokenCreator({ ...form, values, error: error.message }), 422);
        }
      },
    }),
    route({
      method: "GET",
      path: "/settings/api/tokens/:id/revoke",
      access: "admin",
      async handle({ params, session }) {
        const token = (await tokensOf(session.user)).find((t) => String(t.id) === params.id);
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
      access: "admin",
      async handle({ request, params, session, actor }) {
        await tokens.revoke(tokenId(params.id), actor, session.user.projects);
        return kit.redirect(request, "/settings/api");
      },
    }),
    route({
      method: "POST",
      path: "/settings/api/tokens/:id/notify",
      access: "admin",
      async handle({ params, body, session }) {
        await tokens.setMayNotify(tokenId(params.id), field(body, "may_notify") === "on", session.user.projects);
        return kit.fragment(tokenTable(await tokensOf(session.user)));
      },
    }),
  ];
}
