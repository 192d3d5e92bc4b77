// The dashboard's routes, in one list: assets, sign-in, pages, managing projects, settings,
// notifications, the live stream, and the API reference.
import type { Edge } from "../http/edge.ts";
import type { Route } from "../http/routes.ts";
import type { Services } from "../services.ts";
import { accountRoutes } from "./account.ts";
import { passkeyRoutes } from "./passkeys.ts";
import { type Assets, assetRoutes } from "./assets.ts";
import { alertRoutes } from "./alerts.ts";
import { hookRoutes } from "./hooks.ts";
import { maintenanceRoutes } from "./maintenance.ts";
import { badgeRoutes } from "./badges.ts";
import { checkRoutes } from "./checks.ts";
import { authRoutes } from "./auth.ts";
import { oidcRoutes } from "./oidc.ts";
import { chartRoutes } from "./charts.ts";
import { docsRoutes } from "./docs.ts";
import type { Kit } from "./kit.ts";
import { liveRoutes } from "./live.ts";
import { manageRoutes } from "./manage.ts";
import { digestRoutes } from "./digests.ts";
import { integrationRoutes } from "./integrations.ts";
import { memberRoutes } from "./members.ts";
import { notificationRoutes } from "./notifications.ts";
import { pageRoutes } from "./pages.ts";
import { settingsRoutes } from "./settings.ts";
import { shareRoutes } from "./shares.ts";
import { userListRoutes } from "./users.ts";

/** `api`: the API's routes, which /docs describes. */
export function webRoutes(services: Services, edge: Edge, kit: Kit, assets: Assets, api: Route[]): Route[] {
  return [
    ...assetRoutes(assets),
    ...authRoutes(services, edge, kit),
    ...oidcRoutes(services, edge, kit),
    ...pageRoutes(services, kit),
    ...userListRoutes(services, kit),
    ...chartRoutes(services, kit),
    ...alertRoutes(services, kit),
    ...maintenanceRoutes(services, kit),
    ...hookRoutes(services, kit),
    ...checkRoutes(services, kit),
    ...badgeRoutes(services),
    ...shareRoutes(services, edge, kit),
    ...manageRoutes(services, kit),
    ...settingsRoutes(services, kit),
    ...memberRoutes(services, kit),
    ...accountRoutes(services, kit),
    ...passkeyRoutes(services, edge, kit),
    ...notificationRoutes(services, kit),
    ...integrationRoutes(services, kit),
    ...digestRoutes(services, kit),
    ...liveRoutes(services, edge),
    ...docsRoutes(services, edge, kit, api),
  ];
}
