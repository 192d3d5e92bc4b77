// Settings → Notifications: registering this browser for Web Push, the user's devices, their
// filters and test notifications; and Settings → Integrations, per project.
import { visibleTo } from "../domain/access.ts";
import { AppError, NotFound, ValidationError } from "../errors.ts";
import { type Route, route } from "../http/routes.ts";
import type { Services } from "../services.ts";
import { field } from "./form.ts";
import { html } from "./html.ts";
import type { Kit } from "./kit.ts";
import { confirmDialog } from "./views/dialogs.ts";
import { integrationForm, integrationList, integrationsPage, integrationTestDone, integrationTestQueued, notificationsPage } from "./views/notifications.ts";

/** How long the page keeps asking for the result of "Send test". */
const TEST_WAIT_MS = 60_000;

const idOf = (text: string | undefined): number => {
  if (!/^\d{1,12}$/.test(text ?? "")) throw new NotFound("No such item.");
  return Number(text);
};

/** A device's subscription is JSON sent by the page's script (with the CSRF header). */
const SUBSCRIPTION = { json: 16 * 1024 };

const projectParam = (request: Request) => new URL(request.url).searchParams.get("project") ?? "";

export function notificationRoutes({ devices, integrations, projects, vapid, config }: Services, kit: Kit): Route[] {
  const nav = { section: "settings" as const };
  const noStore = { headers: { "Cache-Control": "no-store" } };

  async function existingIntegration(project: string, id: string | undefined) {
    const integration = (await integrations.list(project)).find((i) => i.id === idOf(id));
    if (!integration) throw new NotFound("That integration does not exist.");
    return integration;
  }

  return [
    route({
      method: "GET",
      path: "/settings/notifications",
      access: "self",
      async handle({ session }) {
        const [list, withChannels, keys] = await Promise.all([devices.list(session.user), projects.withChannels(), vapid()]);
        const mine = visibleTo(session.user, withChannels, (p) => p.project.name);
        return kit.page(session, notificationsPage({ devices: list, projects: mine, vapidKey: keys.publicKey }), { title: "Notifications", nav });
      },
    }),
    route({
      method: "POST",
      path: "/settings/notifications/devices",
      access: "self",
      body: SUBSCRIPTION,
      async handle({ session, body }) {
        const device = await devices.register(session.user, body);
        return Response.json({ id: device.id }, noStore);
      },
    }),
    route({
      method: "POST",
      path: "/settings/notifications/devices/refresh",
      access: "self",
      body: SUBSCRIPTION,
      async handle({ session, body }) {
        const endpoint = (body as { endpoint?: unknown } | null)?.endpoint;
        const known = typeof endpoint === "string" && (await devices.refresh(session.user, endpoint));
        return Response.json({ known }, noStore);
      },
    }),
    route({
      method: "POST",
      path: "/settings/notifications/devices/:id/test",
      access: "self",
      async handle({ session, params }) {
        await devices.sendTest(session.user, idOf(params.id), config.baseUrl);
        return kit.fragment("Test notification queued; it should arrive within seconds.");
      },
    }),
    route({
      method: "POST",
      path: "/settings/notifications/devices/:id/filters",
      access: "self",
      async handle({ request, session, params, body }) {
        await devices.setFilters(session.user, idOf(params.id), [(body as Record<string, string | string[]>).scope ?? []].flat());
        return kit.redirect(request, "/settings/notifications");
      },
    }),
    route({
      method: "GET",
      path: "/settings/notifications/devices/:id/remove",
      access: "self",
      async handle({ session, params }) {
        const device = await devices.get(session.user, idOf(params.id));
        return kit.fragment(
          confirmDialog({
            title: `Remove “${device.deviceName}”?`,
            body: html`<p>It stops getting notifications. You can enable it again from the device.</p>`,
            action: `/settings/notifications/devices/${device.id}/remove`,
            confirm: "Remove device",
            danger: true,
          }),
        );
      },
    }),
    route({
      method: "POST",
      path: "/settings/notifications/devices/:id/remove",
      access: "self",
      async handle({ request, session, params }) {
        await devices.remove(session.user, idOf(params.id));
        return kit.redirect(request, "/settings/notifications");
      },
    }),
    route({
      method: "GET",
      path: "/settings/integrations",
      access: "admin",
      async handle({ request, session }) {
        const wanted = projectParam(request);
        const list = visibleTo(session.user, await projects.list(), (p) => p.name);
        const project = (wanted && list.find((p) => p.name === wanted)) || list.find((p) => p.name === config.defaultProject) || list[0];
        if (!project) throw new NotFound("Create a project first.");
        return kit.page(session, integrationsPage({ projects: list, project, integrations: await integrations.list(project.name) }), { title: "Integrations", nav });
      },
    }),
    route({
      method: "GET",
      path: "/settings/integrations/list",
      access: "admin",
      async handle({ request }) {
        const project = await kit.project(projectParam(request));
        return kit.fragment(integrationList(project, await integrations.list(project.name)));
      },
    }),
    route({
      method: "POST",
      path: "/settings/integrations",
      access: "admin",
      async handle({ session, body, actor }) {
        const project = await kit.project(field(body, "project"));
        const values = { kind: field(body, "kind"), name: field(body, "name"), url: field(body, "url").trim(), topic: field(body, "topic").trim() };
        try {
          const created = await integrations.create(project.name, { ...values, token: field(body, "token") || undefined }, session.user, actor);
          // The list above reloads itself on this trigger; the form shows a webhook's secret once.
          const secret = created.secret ? { name: created.integration.name, value: created.secret } : undefined;
          return kit.fragment(integrationForm({ project: project.name, secret }), 200, { "HX-Trigger-After-Settle": "integration-added" });
        } catch (error) {
          if (!(error instanceof ValidationError)) throw error;
          return kit.fragment(integrationForm({ project: project.name, values, error: error.message }), 422);
        }
      },
    }),
    route({
      method: "POST",
      path: "/settings/integrations/:id/test",
      access: "admin",
      async handle({ request, params }) {
        const queuedAt = Date.now();
        try {
          await integrations.sendTest(projectParam(request), idOf(params.id), config.baseUrl, queuedAt);
        } catch (error) {
          if (error instanceof AppError && error.kind === "forbidden") return kit.fragment(error.message);
          throw error;
        }
        return kit.fragment(integrationTestQueued(projectParam(request), idOf(params.id), queuedAt));
      },
    }),
    route({
      method: "GET",
      path: "/settings/integrations/:id/outcome",
      access: "admin",
      async handle({ request, params }) {
        // Asked every second after "Send test": nothing to swap (204) until a result newer than the test is in.
        const integration = await existingIntegration(projectParam(request), params.id);
        const since = Number(new URL(request.url).searchParams.get("since")) || 0;
        const succeeded = (integration.lastSuccessAt ?? 0) >= since;
        const failed = (integration.lastErrorAt ?? 0) >= since;
        if (succeeded || failed) return kit.fragment(integrationTestDone(integration, succeeded && (integration.lastSuccessAt ?? 0) >= (integration.lastErrorAt ?? 0)));
        if (Date.now() - since > TEST_WAIT_MS) return kit.fragment(integrationTestDone(integration, null));
        return new Response(null, { status: 204, headers: noStore.headers });
      },
    }),
    route({
      method: "POST",
      path: "/settings/integrations/:id/toggle",
      access: "admin",
      async handle({ request, params, actor }) {
        const project = projectParam(request);
        const current = await existingIntegration(project, params.id);
        await integrations.setEnabled(project, current.id, !current.enabled, actor);
        return kit.redirect(request, `/settings/integrations?project=${encodeURIComponent(project)}`);
      },
    }),
    route({
      method: "GET",
      path: "/settings/integrations/:id/delete",
      access: "admin",
      async handle({ request, params }) {
        const project = projectParam(request);
        const integration = await existingIntegration(project, params.id);
        return kit.fragment(
          confirmDialog({
            title: `Delete “${integration.name}”?`,
            body: html`<p>It stops getting ${project}'s notify events. Its stored secret is deleted with it.</p>`,
            action: `/settings/integrations/${integration.id}/delete?project=${encodeURIComponent(project)}`,
            confirm: "Delete integration",
            danger: true,
          }),
        );
      },
    }),
    route({
      method: "POST",
      path: "/settings/integrations/:id/delete",
      access: "admin",
      async handle({ request, params, actor }) {
        const project = projectParam(request);
        await integrations.remove(project, idOf(params.id), actor);
        return kit.redirect(request, `/settings/integrations?project=${encodeURIComponent(project)}`);
      },
    }),
  ];
}
