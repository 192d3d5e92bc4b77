// Settings → API: tokens. Admins and the owner create, list and revoke them; someone limited to
// some projects sees and manages only the tokens within theirs, and the full-access tokens they
// make reach only their projects.
import { z } from "zod";
import { hasRole, visibleTo } from "../domain/access.ts";
import { tokenWithin } from "../domain/tokens.ts";
import { AppError, NotFound, ValidationError } from "../errors.ts";
import { href } from "../http/href.ts";
import { type Route, route } from "../http/routes.ts";
import type { Token } from "../model/token.ts";
import type { User } from "../model/user.ts";
import type { Services } from "../services.ts";
import { text } from "./form.ts";
import { html } from "./html.ts";
import type { Kit } from "./kit.ts";
import { paths } from "./paths.ts";
import { confirmDialog } from "./views/dialogs.ts";
import { apiPage, type SnippetTarget, tokenCreator, tokenTable } from "./views/settings.ts";

const nav = { section: "settings" as const };

/** A token's id in a path: one that is not a number names no token. */
const tokenParams = z.object({ id: z.string().regex(/^\d+$/, "That token does not exist.") });

export function settingsRoutes(services: Services, kit: Kit): Route[] {
  return [
    settings(kit),
    apiSettings(services, kit),
    tokenList(services, kit),
    newToken(services, kit),
    revokeDialog(services, kit),
    revoke(services, kit),
    notifyToggle(services, kit),
  ];
}

/** The tokens `user` may see: those within their projects. */
const tokensOf = async ({ tokens }: Services, user: User): Promise<Token[]> =>
  (await tokens.list()).filter((t) => tokenWithin(t, user.projects));
const projectsOf = async ({ projects }: Services, user: User) => visibleTo(user, await projects.list(), (p) => p.name);

/** Where a new token's examples send an event: its project (and channel), or one the person may see. */
async function targetOf(services: Services, info: Token, user: User): Promise<SnippetTarget> {
  const { config } = services;
  const mine = await projectsOf(services, user);
  const project =
    info.project ?? (mine.find((p) => p.name === config.defaultProject) ?? mine[0])?.name ?? config.defaultProject;
  return { baseUrl: config.baseUrl, project, channel: info.channel ?? "general" };
}

const settings = (kit: Kit) =>
  route({
    method: "GET",
    path: paths.settings,
    access: "self",
    handle: ({ request, session }) => kit.redirect(request, hasRole(session.user, "admin") ? paths.api : paths.account),
  });

const apiSettings = (services: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.api,
    access: "admin",
    async handle({ session }) {
      const [list, projectList] = await Promise.all([
        tokensOf(services, session.user),
        projectsOf(services, session.user),
      ]);
      return kit.page(session, apiPage({ tokens: list, projects: projectList, mine: session.user.projects }), {
        title: "API tokens",
        nav,
      });
    },
  });

const tokenList = (services: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.tokenList,
    access: "admin",
    handle: async ({ session }) => kit.fragment(tokenTable(await tokensOf(services, session.user))),
  });

const newToken = (services: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.tokens,
    access: "admin",
    form: z.object({
      name: text,
      kind: text.transform((kind) => kind || "full"),
      project: text,
      channel: text.transform((channel) => channel.trim()),
      may_notify: text,
    }),
    async handle({ body: values, session, actor }) {
      const isPublic = values.kind === "public";
      const form = { projects: await projectsOf(services, session.user), mine: session.user.projects };
      try {
        const created = await services.tokens.create(
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
        const target = await targetOf(services, created.info, session.user);
        return kit.fragment(tokenCreator({ ...form, created: { ...created, target } }));
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
  });

const revokeDialog = (services: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.tokenRevoke,
    access: "admin",
    async handle({ params, session }) {
      const token = (await tokensOf(services, session.user)).find((t) => String(t.id) === params.id);
      if (!token) throw new NotFound("That token does not exist or was already revoked.");
      return kit.fragment(
        confirmDialog({
          title: `Revoke “${token.name}”?`,
          body: html`<p>Anything using <code>${token.prefix}…</code> is refused from its next request. This cannot be undone.</p>`,
          action: href(paths.tokenRevoke, { id: token.id }),
          confirm: "Revoke token",
          danger: true,
        }),
      );
    },
  });

const revoke = ({ tokens }: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.tokenRevoke,
    access: "admin",
    params: tokenParams,
    async handle({ request, params, session, actor }) {
      await tokens.revoke(params.id, actor, session.user.projects);
      return kit.redirect(request, paths.api);
    },
  });

const notifyToggle = (services: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.tokenNotify,
    access: "admin",
    params: tokenParams,
    form: z.object({ may_notify: text }),
    async handle({ params, body, session }) {
      await services.tokens.setMayNotify(params.id, body.may_notify === "on", session.user.projects);
      return kit.fragment(tokenTable(await tokensOf(services, session.user)));
    },
  });
