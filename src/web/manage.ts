// Creating and deleting projects and channels from the dashboard.
import { z } from "zod";
import { mayKnowProject } from "../domain/projects.ts";
import { isName } from "../domain/input-fields.ts";
import { href } from "../http/href.ts";
import { type Route, route } from "../http/routes.ts";
import type { User } from "../model/user.ts";
import type { Services } from "../services.ts";
import { param, text } from "./form.ts";
import { html } from "./html.ts";
import type { Kit } from "./kit.ts";
import { paths } from "./paths.ts";
import { confirmDialog, plural } from "./views/dialogs.ts";
import { nameHint, newNameForm } from "./views/layout.ts";
import { hooksSectionOf } from "./hooks.ts";
import { projectSettingsPage } from "./views/project.ts";
import { sharesSectionOf } from "./shares.ts";

const NAME_RULE = "Use 1-64 lowercase letters, digits or dashes, like “my-app”.";

const nameForm = z.object({ name: text.transform((name) => name.trim()) });

export function manageRoutes(services: Services, kit: Kit): Route[] {
  return [
    nameCheck(services, kit),
    newProject(services, kit),
    newChannel(services, kit),
    retention(services, kit),
    projectSettings(services, kit),
    projectDeleteDialog(services, kit),
    projectDelete(services, kit),
    channelDeleteDialog(services, kit),
    channelDelete(services, kit),
  ];
}

/** Why this name cannot be used by `by`, or null. */
async function problem(
  { projects }: Services,
  by: User,
  kind: "project" | "channel",
  name: string,
  project?: string,
): Promise<string | null> {
  if (!name) return null;
  if (!isName(name)) return NAME_RULE;
  return projects.nameTaken(kind, name, project, by);
}

/** The hint beside a new name's field, as it is typed. */
const nameCheck = (services: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.nameCheck,
    access: "member",
    query: z.object({ kind: param, name: param, project: param }),
    async handle({ query, session }) {
      const kind = query.kind === "channel" ? "channel" : "project";
      const name = query.name ?? "";
      // A project someone limited cannot see: neither taken nor free, so the check tells them nothing of it.
      if (kind === "project" && isName(name) && !mayKnowProject(session.user, name))
        return kit.fragment(nameHint(`new-${kind}-name`, null));
      const error = await problem(services, session.user, kind, name, query.project);
      return kit.fragment(nameHint(`new-${kind}-name`, error, name && !error ? `“${name}” is available.` : undefined));
    },
  });

const newProject = (services: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.projects,
    access: "member",
    form: nameForm,
    async handle({ request, body: { name }, session }) {
      const error = (await problem(services, session.user, "project", name)) ?? (name ? null : "Enter a name.");
      if (error) return kit.fragment(newNameForm({ kind: "project", action: paths.projects, value: name, error }), 422);
      await services.projects.create(name, session.user);
      return kit.redirect(request, href(paths.project, { project: name }));
    },
  });

const newChannel = (services: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.channels,
    access: "member",
    needs: "project",
    form: nameForm,
    async handle({ request, project, body: { name }, session }) {
      const action = href(paths.channels, { project: project.name });
      const error =
        (await problem(services, session.user, "channel", name, project.name)) ?? (name ? null : "Enter a name.");
      if (error)
        return kit.fragment(newNameForm({ kind: "channel", action, project: project.name, value: name, error }), 422);
      await services.projects.createChannel(project.name, name);
      return kit.redirect(request, href(paths.channel, { project: project.name, channel: name }));
    },
  });

const retention = ({ projects }: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.retention,
    access: "member",
    needs: "project",
    form: z.object({ days: text.transform((days) => days.trim()) }),
    async handle({ request, project, body: { days }, actor }) {
      await projects.setRetention(project.name, days === "" ? null : Number(days), actor);
      return kit.redirect(request, href(paths.projectSettings, { project: project.name }, { saved: "1" }));
    },
  });

const projectSettings = (services: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.projectSettings,
    access: "member",
    needs: "project",
    query: z.object({ saved: param }),
    async handle({ project, query, session }) {
      const { projects } = services;
      const channels = await projects.channels(project.name);
      const body = projectSettingsPage(project, {
        deletable: project.name !== services.config.defaultProject,
        channels: channels.length,
        saved: query.saved === "1",
        hooks: await hooksSectionOf(services, project, session),
        shares: await sharesSectionOf(services, project, session),
      });
      return kit.page(session, body, { title: `Settings · ${project.name}`, nav: { project } });
    },
  });

const projectDeleteDialog = ({ projects }: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.projectDelete,
    access: "member",
    async handle({ params }) {
      const project = await projects.assertDeletable(params.project);
      const [events, channels] = await Promise.all([
        projects.eventCount(project.name),
        projects.channels(project.name),
      ]);
      return kit.fragment(
        confirmDialog({
          title: `Delete project “${project.name}”?`,
          body: html`<p>This deletes its ${plural(channels.length, "channel")}, <strong>${plural(events, "event")}</strong>, its metrics and its public tokens. It cannot be undone.</p>`,
          action: href(paths.projectDelete, { project: project.name }),
          confirm: "Delete project",
          danger: true,
        }),
      );
    },
  });

const projectDelete = ({ projects }: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.projectDelete,
    access: "member",
    async handle({ request, params, actor }) {
      await projects.deleteProject(params.project, actor);
      return kit.redirect(request, paths.home);
    },
  });

const channelDeleteDialog = ({ projects }: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.channelDelete,
    access: "member",
    needs: "channel",
    async handle({ project, channel }) {
      const events = await projects.eventCount(project.name, channel.name);
      return kit.fragment(
        confirmDialog({
          title: `Delete channel “#${channel.name}”?`,
          body: html`<p>This deletes <strong>${plural(events, "event")}</strong> in #${channel.name}. It cannot be undone. A new event sent to #${channel.name} would create it again.</p>`,
          action: href(paths.channelDelete, { project: project.name, channel: channel.name }),
          confirm: "Delete channel",
          danger: true,
        }),
      );
    },
  });

const channelDelete = ({ projects }: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.channelDelete,
    access: "member",
    async handle({ request, params }) {
      await projects.deleteChannel(params.project, params.channel);
      return kit.redirect(request, href(paths.project, { project: params.project }));
    },
  });
