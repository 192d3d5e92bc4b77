// Settings → Notifications: registering this browser for Web Push, the user's devices, their
// filters and test notifications. (Settings → Integrations is integrations.ts.)
import { hasRole, visibleTo } from "../domain/access.ts";
import { NotFound, ValidationError } from "../errors.ts";
import { type Route, route } from "../http/routes.ts";
import type { Services } from "../services.ts";
import { field } from "./form.ts";
import { html } from "./html.ts";
import type { Kit } from "./kit.ts";
import { confirmDialog } from "./views/dialogs.ts";
import { notificationsPage } from "./views/notifications.ts";

export const idOf = (text: string | undefined): number => {
  if (!/^\d{1,12}$/.test(text ?? "")) throw new NotFound("No such item.");
  return Number(text);
};

/** A device's subscription is JSON sent by the page's script (with the CSRF header). */
const SUBSCRIPTION = { json: 16 * 1024 };

export function notificationRoutes({ devices, projects, vapid, config }: Services, kit: Kit): Route[] {
  const nav = { section: "settings" as const };
  const noStore = { headers: { "Cache-Control": "no-store" } };

  return [
    route({
      method: "GET",
      path: "/settings/notifications",
      access: "self",
      async handle({ session }) {
        const [list, withChannels, keys] = await Promise.all([
          devices.list(session.user),
          projects.withChannels(),
          vapid(),
        ]);
        const mine = visibleTo(session.user, withChannels, (p) => p.project.name);
        return kit.page(
          session,
          notificationsPage({
            devices: list,
            projects: mine,
            vapidKey: keys.publicKey,
            managesIntegrations: hasRole(session.user, "admin"),
          }),
          {
            title: "Notifications",
            nav,
          },
        );
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
        const route = { tags: field(body, "tags"), minPriority: Number(field(body, "min_priority") || 1) };
        try {
          await devices.setFilters(
            session.user,
            idOf(params.id),
            [(body as Record<string, string | string[]>).scope ?? []].flat(),
            route,
          );
        } catch (error) {
          if (!(error instanceof ValidationError)) throw error;
          return kit.fragment(html`<p class="hint error" role="alert">${error.message}</p>`, 422);
        }
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
  ];
}
