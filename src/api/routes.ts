// The API's routes, in one list: ingest, reads, the event stream, health, and the OpenAPI document
// generated from the list itself.
import type { Edge } from "../http/edge.ts";
import type { Route } from "../http/routes.ts";
import type { Services } from "../services.ts";
import { alertRoutes } from "./alerts.ts";
import { analyticsRoutes } from "./analytics.ts";
import { chartRoutes } from "./charts.ts";
import { checkRoutes } from "./checks.ts";
import { healthRoutes } from "./health.ts";
import { hookRoutes } from "./hooks.ts";
import { ingestRoutes } from "./ingest.ts";
import { integrationRoutes } from "./integrations.ts";
import { maintenanceRoutes } from "./maintenance.ts";
import { openApiRoute } from "./openapi.ts";
import { otlpRoutes } from "./otlp.ts";
import { pingRoutes } from "./pings.ts";
import { readRoutes } from "./read.ts";
import { shareRoutes } from "./shares.ts";
import { streamRoutes } from "./stream.ts";

export function apiRoutes(services: Services, edge: Edge): Route[] {
  const routes = [
    ...ingestRoutes(services, edge),
    ...otlpRoutes(services, edge),
    ...readRoutes(services),
    ...analyticsRoutes(services),
    ...chartRoutes(services),
    ...alertRoutes(services),
    ...maintenanceRoutes(services),
    ...checkRoutes(services),
    ...shareRoutes(services),
    ...integrationRoutes(services),
    ...hookRoutes(services),
    ...streamRoutes(services, edge),
    ...healthRoutes(services, edge),
    ...pingRoutes(services),
  ];
  return [...routes, openApiRoute(routes, services.config.baseUrl, services.version)];
}

/** The API answers JSON, errors included: its paths, and anything under /v1/ and /hooks/. */
export function apiPaths(routes: Route[]): (path: string) => boolean {
  const exact = new Set(routes.map((r) => r.path).filter((p) => !p.includes(":")));
  return (path) => path.startsWith("/v1/") || path.startsWith("/hooks/") || exact.has(path);
}
