// Settings → Notifications: registering this browser for Web Push, the user's devices, their
// filters and test notifications; and Settings → Integrations, per project.
import { Elysia } from "elysia";
import type { Deps } from "../app.ts";
import { FORM } from "../http/body.ts";
import { AppError, NotFound, ValidationError } from "../errors.ts";
import { field } from "./form.ts";
import { html } from "./html.ts";
import type { Kit } from "./kit.ts";
import { confirmDialog } from "./views/dialogs.ts";
import { integrationForm, integrationList, integrationsPage, notificationsPage } from "./views/notifications.ts";

const idOf = (text: string): number => {
  if (!/^\d{1,12}$/.test(text)) throw new NotFound("No such item.");
  return Number(text);
};

export function notificationRoutes(deps: Deps, kit: Kit) {
  const { web, devices, integrations, store, config } = deps;
  const nav = { section: "settings" as const };
  const projectsWithChannels = () => deps.projects.list().map((project) => ({ project, channels: store.projects.listChannels(project.id) }));

  return new Elysia({ name: "web.notifications" })
    .get("/settings/notifications", ({ request }) => {
      const session = web.requireSession(request);
      const body = notificationsPage({ devices: devices.list(session.user), projects: projectsWithChannels(), vapidKey: deps.vapid.publicKey });
      return kit.page(session, body, { title: "Notifications", nav });
    })
    // Called by the page's script with the browser's PushSubscription (JSON, with the CSRF header).
    .post(
      "/settings/notifications/devices",
      async ({ request }) => {
        const session = web.requireSession(request);
        const device = await devices.register(session.user, await web.json(request, session, 16 * 1024));
        return Response.json({ id: device.id }, { headers: { "Cache-Control": "no-store" } });
      },
      { parse: "none" },
    )
    .post(
      "/settings/notifications/devices/refresh",
      async ({ request }) => {
        const session = web.requireSession(request);
        const body = (await web.json(request, session, 16 * 1024)) as { endpoint?: unknown };
        const known = typeof body?.endpoint === "string" && (await devices.refresh(session.user, body.endpoint));
        return Response.json({ known }, { headers: { "Cache-Control": "no-store" } });
      },
      { parse: "none" },
    )
    .post("/settings/notifications/devices/:id/test", async ({ request, params }) => {
      const session = web.requireSession(request);
      const body = await web.form(request, session);
      await devices.sendTest(session.user, idOf(params.id), config.baseUrl);
      return kit.fragment("Test notification queued; it should arrive within seconds.");
    }, FORM)
    .post(
      "/settings/notifications/devices/:id/filters",
      async ({ request, params }) => {
        const session = web.requireSession(request);
        const form = await web.form(request, session);
        await devices.setFilters(session.user, idOf(params.id), [form.scope ?? []].flat());
        return kit.redirect(request, "/settings/notifications");
      },
      { parse: "none" },
    )
    .get("/settings/notifications/devices/:id/remove", ({ request, params }) => {
      const session = web.requireSession(request);
      const device = devices.get(session.user, idOf(params.id));
      return kit.fragment(
        confirmDialog({
          title: `Remove “${device.deviceName}”?`,
          body: html`<p>It stops getting notifications. You can enable it again from the device.</p>`,
          action: `/settings/notifications/devices/${device.id}/remove`,
          confirm: "Remove device",
          danger: true,
        }),
      );
    })
    .post("/settings/notifications/devices/:id/remove", async ({ request, params }) => {
      const session = web.requireSession(request);
      const body = await web.form(request, session);
      await devices.remove(session.user, idOf(params.id));
      return kit.redirect(request, "/settings/notifications");
    }, FORM)
    .get("/settings/integrations", ({ request }) => {
      const session = web.requireSession(request);
      const wanted = new URL(request.url).searchParams.get("project");
      const projects = deps.projects.list();
      const project = (wanted && projects.find((p) => p.name === wanted)) || projects.find((p) => p.name === config.defaultProject) || projects[0];
      if (!project) throw new NotFound("Create a project first.");
      return kit.page(session, integrationsPage({ projects, project, integrations: integrations.list(project.name) }), { title: "Integrations", nav });
    })
    .get("/settings/integrations/list", ({ request }) => {
      web.requireSession(request);
      const project = kit.project(new URL(request.url).searchParams.get("project") ?? "");
      return kit.fragment(integrationList(project, integrations.list(project.name)));
    })
    .post("/settings/integrations", async ({ request }) => {
      const session = web.requireSession(request);
      const body = await web.form(request, session);
      const project = kit.project(field(body, "project"));
      const values = { kind: field(body, "kind"), name: field(body, "name"), url: field(body, "url").trim(), topic: field(body, "topic").trim() };
      try {
        const created = await integrations.create(project.name, { ...values, token: field(body, "token") || undefined }, session.user);
        // The list above reloads itself on this trigger; the form shows a webhook's secret once.
        const secret = created.secret ? { name: created.integration.name, value: created.secret } : undefined;
        return kit.fragment(integrationForm({ project: project.name, secret }), 200, { "HX-Trigger-After-Settle": "integration-added" });
      } catch (error) {
        if (!(error instanceof ValidationError)) throw error;
        return kit.fragment(integrationForm({ project: project.name, values, error: error.message }), 422);
      }
    }, FORM)
    .post("/settings/integrations/:id/test", async ({ request, params }) => {
      const session = web.requireSession(request);
      const body = await web.form(request, session);
      const project = new URL(request.url).searchParams.get("project") ?? "";
      try {
        await integrations.sendTest(project, idOf(params.id), config.baseUrl);
      } catch (error) {
        if (error instanceof AppError && error.kind === "forbidden") return kit.fragment(error.message);
        throw error;
      }
      return kit.fragment("Test queued; it should arrive within seconds.");
    }, FORM)
    .post("/settings/integrations/:id/toggle", async ({ request, params }) => {
      const session = web.requireSession(request);
      const body = await web.form(request, session);
      const project = new URL(request.url).searchParams.get("project") ?? "";
      const current = integrations.list(project).find((i) => i.id === idOf(params.id));
      if (!current) throw new NotFound("That integration does not exist.");
      await integrations.setEnabled(project, current.id, !current.enabled);
      return kit.redirect(request, `/settings/integrations?project=${encodeURIComponent(project)}`);
    }, FORM)
    .get("/settings/integrations/:id/delete", ({ request, params }) => {
      web.requireSession(request);
      const project = new URL(request.url).searchParams.get("project") ?? "";
      const integration = integrations.list(project).find((i) => i.id === idOf(params.id));
      if (!integration) throw new NotFound("That integration does not exist.");
      return kit.fragment(
        confirmDialog({
          title: `Delete “${integration.name}”?`,
          body: html`<p>It stops getting ${project}'s notify events. Its stored secret is deleted with it.</p>`,
          action: `/settings/integrations/${integration.id}/delete?project=${encodeURIComponent(project)}`,
          confirm: "Delete integration",
          danger: true,
        }),
      );
    })
    .post("/settings/integrations/:id/delete", async ({ request, params }) => {
      const session = web.requireSession(request);
      const body = await web.form(request, session);
      const project = new URL(request.url).searchParams.get("project") ?? "";
      await integrations.remove(project, idOf(params.id));
      return kit.redirect(request, `/settings/integrations?project=${encodeURIComponent(project)}`);
    }, FORM);
}
