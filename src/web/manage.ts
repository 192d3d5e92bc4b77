// Creating and deleting projects and channels from the dashboard.
import { mayKnowProject } from "../domain/projects.ts";
import { isName } from "../domain/input-fields.ts";
import { type Route, route } from "../http/routes.ts";
import type { User } from "../model/user.ts";
import type { Services } from "../services.ts";
import { field } from "./form.ts";
import { html, seg } from "./html.ts";
import type { Kit } from "./kit.ts";
import { confirmDialog, plural } from "./views/dialogs.ts";
import { nameHint, newNameForm } from "./views/layout.ts";
import { projectSettingsPage } from "./views/project.ts";

const NAME_RULE = "Use 1-64 lowercase letters, digits or dashes, like “my-app”.";

export function manageRoutes({ projects, config }: Services, kit: Kit): Route[] {
  /** Why this name cannot be used by `by`, or null. */
  async function problem(
    by: User,
    kind: "project" | "channel",
    name: string,
    project?: string,
  ): Promise<string | null> {
    if (!name) return null;
    if (!isName(name)) return NAME_RULE;
    return projects.nameTaken(kind, name, project, by);
  }

  return [
    route({
      method: "GET",
      path: "/names/check",
      access: "member",
      async handle({ request, session }) {
        const url = new URL(request.url);
        const kind = url.searchParams.get("kind") === "channel" ? "channel" : "project";
        const name = url.searchParams.get("name") ?? "";
        // A project someone limited cannot see: neither taken nor free, so the check tells them nothing of it.
        if (kind === "project" && isName(name) && !mayKnowProject(session.user, name))
          return kit.fragment(nameHint(`new-${kind}-name`, null));
        const error = await problem(session.user, kind, name, url.searchParams.get("project") ?? undefined);
        return kit.fragment(
          nameHint(`new-${kind}-name`, error, name && !error ? `“${name}” is available.` : undefined),
        );
      },
    }),
    route({
      method: "POST",
      path: "/projects",
      access: "member",
      async handle({ request, body, session }) {
        const name = field(body, "name").trim();
        const error = (await problem(session.user, "project", name)) ?? (name ? null : "Enter a name.");
        if (error) return kit.fragment(newNameForm({ kind: "project", action: "/projects", value: name, error }), 422);
        await projects.create(name, session.user);
        return kit.redirect(request, `/p/${seg(name)}`);
      },
    }),
    route({
      method: "POST",
      path: "/p/:project/channels",
      access: "member",
      async handle({ request, params, body, session }) {
        const project = await kit.project(params.project!);
        const name = field(body, "name").trim();
        const action = `/p/${seg(project.name)}/channels`;
        const error = (await problem(session.user, "channel", name, project.name)) ?? (name ? null : "Enter a name.");
        if (error)
          return kit.fragment(newNameForm({ kind: "channel", action, project: project.name, value: name, error }), 422);
        await projects.createChannel(project.name, name);
        return kit.redirect(request, `/p/${seg(project.name)}/c/${seg(name)}`);
      },
    }),
    route({
      method: "POST",
      path: "/p/:project/retention",
      access: "member",
      async handle({ request, params, body, actor }) {
        const project = await kit.project(params.project!);
        const days = field(body, "days").trim();
        await projects.setRetention(project.name, days === "" ? null : Number(days), actor);
        return kit.redirect(request, `/p/${seg(project.name)}/settings?saved=1`);
      },
    }),
    route({
      method: "GET",
      path: "/p/:project/settings",
      access: "member",
      async handle({ request, params, session }) {
        const project = await kit.project(params.project!);
        const channels = await projects.channels(project.name);
        const saved = new URL(request.url).searchParams.get("saved") === "1";
        const body = projectSettingsPage(project, {
          deletable: project.name !== config.defaultProject,
          channels: channels.length,
          saved,
        });
        return kit.page(session, body, { title: `Settings · ${project.name}`, nav: { project } });
      },
    }),
    route({
      method: "GET",
      path: "/p/:project/delete",
      access: "member",
      async handle({ params }) {
        const project = await projects.assertDeletable(params.project!);
        const [events, channels] = await Promise.all([
          projects.eventCount(project.name),
          projects.channels(project.name),
        ]);
        return kit.fragment(
          confirmDialog({
            title: `Delete project “${project.name}”?`,
            body: html`<p>This deletes its ${plural(channels.length, "channel")}, <strong>${plural(events, "event")}</strong>, its metrics and its public tokens. It cannot be undone.</p>`,
            action: `/p/${seg(project.name)}/delete`,
            confirm: "Delete project",
            danger: true,
          }),
        );
      },
    }),
    route({
      method: "POST",
      path: "/p/:project/delete",
      access: "member",
      async handle({ request, params, actor }) {
        await projects.deleteProject(params.project!, actor);
        return kit.redirect(request, "/");
      },
    }),
    route({
      method: "GET",
      path: "/p/:project/c/:channel/delete",
      access: "member",
      async handle({ params }) {
        const { project, channel } = await projects.requireChannel(params.project!, params.channel!);
        const events = await projects.eventCount(project.name, channel.name);
        return kit.fragment(
          confirmDialog({
            title: `Delete channel “#${channel.name}”?`,
            body: html`<p>This deletes <strong>${plural(events, "event")}</strong> in #${channel.name}. It cannot be undone. A new event sent to #${channel.name} would create it again.</p>`,
            action: `/p/${seg(project.name)}/c/${seg(channel.name)}/delete`,
            confirm: "Delete channel",
            danger: true,
          }),
        );
      },
    }),
    route({
      method: "POST",
      path: "/p/:project/c/:channel/delete",
      access: "member",
      async handle({ request, params }) {
        await projects.deleteChannel(params.project!, params.channel!);
        return kit.redirect(request, `/p/${seg(params.project!)}`);
      },
    }),
  ];
}
