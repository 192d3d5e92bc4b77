// Composition of the HTTP side: routes from services. createApp never listens, so tests can call
// app.handle(new Request(...)) and the server (server.ts) can wrap it.
import { Elysia } from "elysia";
import { protobufError } from "./api/otlp.ts";
import { prefixlessPings } from "./api/pings.ts";
import { apiPaths, apiRoutes } from "./api/routes.ts";
import { type AppError, SignInRequired } from "./errors.ts";
import { createEdge, type Edge } from "./http/edge.ts";
import { errorHeaders, statusOf } from "./http/errors.ts";
import { errorHandler } from "./http/on-error.ts";
import { accessLog } from "./http/request-log.ts";
import { mountRoutes, type Route } from "./http/routes.ts";
import type { Services } from "./services.ts";
import type { Assets } from "./web/assets.ts";
import { isHtmx, webKit } from "./web/kit.ts";
import { webRoutes } from "./web/routes.ts";
import { errorPage } from "./web/views/error.ts";

export type App = { app: Elysia; routes: Route[]; edge: Edge };

export function createApp(services: Services, assets: Assets, edge: Edge = createEdge(services)): App {
  const kit = webKit(services, assets);
  const api = apiRoutes(services, edge);
  const routes = [...api, ...webRoutes(services, edge, kit, assets, api)];

  const renderWebError = async (error: AppError, request: Request): Promise<Response> => {
    if (error instanceof SignInRequired) {
      const url = new URL(request.url);
      return kit.redirect(
        request,
        error.setup ? "/setup" : `/login?next=${encodeURIComponent(url.pathname + url.search)}`,
      );
    }
    const status = statusOf(error);
    const headers = errorHeaders(error);
    if (isHtmx(request))
      return new Response(error.message, {
        status,
        headers: { "Content-Type": "text/plain; charset=utf-8", ...headers },
      });
    return kit.page(await edge.web.session(request).catch(() => null), errorPage(status, error.message), {
      title: "Error",
      status,
      headers,
    });
  };

  // The error handler answers 405 for a known path with the wrong method, so it needs the routes (preflights included).
  const registered: { of: () => { method: string; path: string }[] } = { of: () => [] };
  const app = new Elysia()
    .use(accessLog(services.config.trustProxy))
    .use(errorHandler(() => registered.of(), apiPaths(api), renderWebError, protobufError))
    .use(prefixlessPings(services, routes))
    .use(
      mountRoutes(routes, { guard: edge.guard, web: edge.web, metrics: services.metrics, projects: services.projects }),
    );
  registered.of = () => app.routes;
  return { app: app as unknown as Elysia, routes, edge };
}
