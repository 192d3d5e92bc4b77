// Settings → Notifications: registering this browser for Web Push, the user's devices, their
// filters and test notifications. (Settings → Integrations is integrations.ts.)
import { z } from "zod";
import { hasRole, visibleTo } from "../domain/access.ts";
import { NotFound, ValidationError } from "../errors.ts";
import { href } from "../http/href.ts";
import { type Route, route } from "../http/routes.ts";
import type { Services } from "../services.ts";
import { text } from "./form.ts";
import { html } from "./html.ts";
import type { Kit } from "./kit.ts";
import { paths } from "./paths.ts";
import { confirmDialog } from "./views/dialogs.ts";
import { notificationsPage } from "./views/notifications.ts";

const itemId = z
  .string()
  .regex(/^\d{1,12}$/, "No such item.")
  .transform(Number);

/** An item's id in a path (a device, an integration): one that is not a number names nothing. */
export const itemParams = z.object({ id: itemId });

export const idOf = (text: string | undefined): number => {
  const id = itemId.safeParse(text);
  if (!id.success) throw new NotFound("No such item.");
  return id.data;
};

/** A device's subscription is JSON sent by the page's script (with the CSRF header). */
const SUBSCRIPTION = { json: 16 * 1024 };
const nav = { section: "settings" as const };
const noStore = { headers: { "Cache-Control": "no-store" } };

export function notificationRoutes(services: Services, kit: Kit): Route[] {
  return [
    notifications(services, kit),
    register(services),
    refresh(services),
    test(services, kit),
    filters(services, kit),
    removeDialog(services, kit),
    remove(services, kit),
  ];
}

const notifications = ({ devices, projects, vapid }: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.notifications,
    access: "self",
    async handle({ session }) {
      const [list, withChannels, keys] = await Promise.all([
        devices.list(session.user),
        projects.withChannels(),
        vapid(),
      ]);
      const mine = visibleTo(session.user, withChannels, (p) => p.project.name);
      const body = notificationsPage({
        devices: list,
        projects: mine,
        vapidKey: keys.publicKey,
        managesIntegrations: hasRole(session.user, "admin"),
      });
      return kit.page(session, body, { title: "Notifications", nav });
    },
  });

const register = ({ devices }: Services) =>
  route({
    method: "POST",
    path: paths.devices,
    access: "self",
    body: SUBSCRIPTION,
    async handle({ session, body }) {
      const device = await devices.register(session.user, body);
      return Response.json({ id: device.id }, noStore);
    },
  });

const refresh = ({ devices }: Services) =>
  route({
    method: "POST",
    path: paths.devicesRefresh,
    access: "self",
    body: SUBSCRIPTION,
    async handle({ session, body }) {
      const endpoint = (body as { endpoint?: unknown } | null)?.endpoint;
      const known = typeof endpoint === "string" && (await devices.refresh(session.user, endpoint));
      return Response.json({ known }, noStore);
    },
  });

const test = ({ devices, config }: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.deviceTest,
    access: "self",
    params: itemParams,
    async handle({ session, params }) {
      await devices.sendTest(session.user, params.id, config.baseUrl);
      return kit.fragment("Test notification queued; it should arrive within seconds.");
    },
  });

const filters = ({ devices }: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.deviceFilters,
    access: "self",
    params: itemParams,
    form: z.object({
      tags: text,
      min_priority: text,
      scope: z.preprocess((scope) => [scope ?? []].flat(), z.array(z.string())),
    }),
    async handle({ request, session, params, body }) {
      const filter = { tags: body.tags, minPriority: Number(body.min_priority || 1) };
      try {
        await devices.setFilters(session.user, params.id, body.scope, filter);
      } catch (error) {
        if (!(error instanceof ValidationError)) throw error;
        return kit.fragment(html`<p class="hint error" role="alert">${error.message}</p>`, 422);
      }
      return kit.redirect(request, paths.notifications);
    },
  });

const removeDialog = ({ devices }: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.deviceRemove,
    access: "self",
    params: itemParams,
    async handle({ session, params }) {
      const device = await devices.get(session.user, params.id);
      return kit.fragment(
        confirmDialog({
          title: `Remove “${device.deviceName}”?`,
          body: html`<p>It stops getting notifications. You can enable it again from the device.</p>`,
          action: href(paths.deviceRemove, { id: device.id }),
          confirm: "Remove device",
          danger: true,
        }),
      );
    },
  });

const remove = ({ devices }: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.deviceRemove,
    access: "self",
    params: itemParams,
    async handle({ request, session, params }) {
      await devices.remove(session.user, params.id);
      return kit.redirect(request, paths.notifications);
    },
  });
