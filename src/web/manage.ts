// Creating and deleting projects and channels from the dashboard.
import { Elysia } from "elysia";
import { FORM } from "../http/body.ts";
import type { Deps } from "../app.ts";
import { isName } from "../domain/rules.ts";
import { field } from "./form.ts";
import { html, seg } from "./html.ts";
import type { Kit } from "./kit.ts";
import { confirmDialog, plural } from "./views/dialogs.ts";
import { nameHint, newNameForm } from "./views/layout.ts";

const NAME_RULE = "Use 1-64 lowercase letters, digits or dashes, like “my-app”.";

export function manageRoutes(deps: Deps, kit: Kit) {
  const { web, projects, store } = deps;

  /** Why this name cannot be used, or null. */
  function problem(kind: "project" | "channel", name: string, project?: string): string | null {
    if (!name) return null;
    if (!isName(name)) return NAME_RULE;
    if (kind === "project" && store.projects.findByName(name)) return `A project named “${name}” already exists.`;
    if (kind === "channel" && project) {
      const p = store.projects.findByName(project);
      if (p && store.projects.findChannel(p.id, name)) return `A channel named “${name}” already exists in ${project}.`;
    }
    return null;
  }

  return new Elysia({ name: "web.manage" })
    .get("/names/check", ({ request }) => {
      web.requireSession(request);
      const url = new URL(request.url);
      const kind = url.searchParams.get("kind") === "channel" ? "channel" : "project";
      const name = url.searchParams.get("name") ?? "";
      const error = problem(kind, name, url.searchParams.get("project") ?? undefined);
      return kit.fragment(nameHint(`new-${kind}-name`, error, name && !error ? `“${name}” is available.` : undefined));
    })
    .post("/projects", async ({ request }) => {
      const session = web.requireSession(request);
      const body = await web.form(request, session);
      const name = field(body, "name").trim();
      const error = problem("project", name) ?? (name ? null : "Enter a name.");
      if (error) return kit.fragment(newNameForm({ kind: "project", action: "/projects", value: name, error }), 422);
      await projects.create(name);
      return kit.redirect(request, `/p/${seg(name)}`);
    }, FORM)
    .post("/p/:project/channels", async ({ request, params }) => {
      const session = web.requireSession(request);
      const body = await web.form(request, session);
      const project = kit.project(params.project);
      const name = field(body, "name").trim();
      const action = `/p/${seg(project.name)}/channels`;
      const error = problem("channel", name, project.name) ?? (name ? null : "Enter a name.");
      if (error) return kit.fragment(newNameForm({ kind: "channel", action, project: project.name, value: name, error }), 422);
      await projects.createChannel(project.name, name);
      return kit.redirect(request, `/p/${seg(project.name)}/c/${seg(name)}`);
    }, FORM)
    .post("/p/:project/retention", async ({ request, params }) => {
      const session = web.requireSession(request);
      const body = await web.form(request, session);
      const project = kit.project(params.project);
      const days = field(body, "days").trim();
      await projects.setRetention(project.name, days === "" ? null : Number(days));
      return kit.redirect(request, `/p/${seg(project.name)}`);
    }, FORM)
    .get("/p/:project/delete", ({ request, params }) => {
      web.requireSession(request);
      const project = projects.assertDeletable(kit.project(params.project).name);
      const events = projects.eventCount(project.name);
      const channels = store.projects.listChannels(project.id).length;
      return kit.fragment(
        confirmDialog({
          title: `Delete project “${project.name}”?`,
          body: html`<p>This deletes its ${plural(channels, "channel")}, <strong>${plural(events, "event")}</strong>, its metrics and its public tokens. It cannot be undone.</p>`,
          action: `/p/${seg(project.name)}/delete`,
          confirm: `Delete ${plural(events, "event")}`,
          danger: true,
        }),
      );
    })
    .post("/p/:project/delete", async ({ request, params }) => {
      const session = web.requireSession(request);
      const body = await web.form(request, session);
      await projects.deleteProject(kit.project(params.project).name);
      return kit.redirect(request, "/");
    }, FORM)
    .get("/p/:project/c/:channel/delete", ({ request, params }) => {
      web.requireSession(request);
      const { project, channel } = projects.requireChannel(params.project, params.channel);
      const events = projects.eventCount(project.name, channel.name);
      return kit.fragment(
        confirmDialog({
          title: `Delete channel “#${channel.name}”?`,
          body: html`<p>This deletes <strong>${plural(events, "event")}</strong> in #${channel.name}. It cannot be undone. A new event sent to #${channel.name} would create it again.</p>`,
          action: `/p/${seg(project.name)}/c/${seg(channel.name)}/delete`,
          confirm: `Delete ${plural(events, "event")}`,
          danger: true,
        }),
      );
    })
    .post("/p/:project/c/:channel/delete", async ({ request, params }) => {
      const session = web.requireSession(request);
      const body = await web.form(request, session);
      const { project, channel } = projects.requireChannel(params.project, params.channel);
      await projects.deleteChannel(project.name, channel.name);
      return kit.redirect(request, `/p/${seg(project.name)}`);
    }, FORM);
}
