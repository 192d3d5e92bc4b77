// Composition: services from a store, routes from services. createApp never listens, so tests can
// call app.handle(new Request(...)) and the server (server.ts) can wrap it.
import { Elysia } from "elysia";
import pkg from "../package.json";
import { healthApi } from "./api/health.ts";
import { ingestApi } from "./api/ingest.ts";
import { openApiRoutes } from "./api/openapi.ts";
import { readApi } from "./api/read.ts";
import { streamApi } from "./api/stream.ts";
import type { Config } from "./config.ts";
import { accountService } from "./domain/accounts.ts";
import { feedService } from "./domain/feed.ts";
import { healthService } from "./domain/health.ts";
import { deviceService, integrationService } from "./domain/notifications.ts";
import { ingestService, type RunWrite } from "./domain/ingest.ts";
import { type IngestWrites, ingestWrites } from "./domain/ingest-writes.ts";
import { WriterThread } from "./store/writer-thread.ts";
import { projectService } from "./domain/projects.ts";
import { tokenService } from "./domain/tokens.ts";
import { createGuard } from "./http/auth.ts";
import { type AppError, SignInRequired } from "./errors.ts";
import { errorHeaders, statusOf } from "./http/errors.ts";
import { errorHandler } from "./http/on-error.ts";
import { accessLog } from "./http/request-log.ts";
import { createWebGuard } from "./http/session.ts";
import { StreamRegistry } from "./http/sse.ts";
import { Fanout } from "./live/fanout.ts";
import { Hub } from "./live/hub.ts";
import { createMetrics } from "./metrics.ts";
import { Notifier } from "./notify/queue.ts";
import { vapidKeys } from "./notify/vapid.ts";
import type { Store } from "./store/index.ts";
import { type Assets, assetRoutes } from "./web/assets.ts";
import { authRoutes } from "./web/auth.ts";
import { docsRoutes } from "./web/docs.ts";
import { isHtmx, webKit } from "./web/kit.ts";
import { liveRoutes } from "./web/live.ts";
import { manageRoutes } from "./web/manage.ts";
import { notificationRoutes } from "./web/notifications.ts";
import { pageRoutes } from "./web/pages.ts";
import { settingsRoutes } from "./web/settings.ts";
import { errorPage } from "./web/views/error.ts";

export const VERSION: string = pkg.version;

export function createDeps(config: Config, store: Store) {
  const hub = new Hub();
  const fanout = new Fanout(hub, config.liveInterval);
  const tokens = tokenService(store);
  const accounts = accountService(store, { sessionTtlMs: config.sessionTtl });
  const vapid = vapidKeys(store, config.vapidSubject);
  const metrics = createMetrics();
  // Ingest's writes run in this thread's group commit, or on a writer thread (SIGNALBOARD_WRITER).
  const writerThread = config.writer === "thread" ? new WriterThread(store.path, config.sqliteSync) : null;
  const runWrite: RunWrite = writerThread
    ? (name, args, signal) => writerThread.run(name, args, signal)
    : (name, args, signal) => store.writer.submit(() => ingestWrites[name](store, args as never) as ReturnType<IngestWrites[typeof name]>, signal);
  return {
    metrics,
    config,
    store,
    hub,
    fanout,
    version: VERSION,
    streams: new StreamRegistry(),
    tokens,
    guard: createGuard(tokens, config),
    accounts,
    web: createWebGuard(accounts, config),
    writerThread,
    ingest: ingestService({ run: runWrite, hub, defaultProject: config.defaultProject, baseUrl: config.baseUrl }),
    feed: feedService(store),
    health: healthService(store, writerThread ? [store.writer, writerThread] : [store.writer]),
    projects: projectService(store, { hub, defaultProject: config.defaultProject }),
    vapid,
    devices: deviceService(store),
    integrations: integrationService(store),
    notifier: new Notifier(store, vapid, { concurrency: 64, retryBaseMs: config.notifyRetryBase, maxAttempts: config.notifyAttempts, pollMs: 1000, graceMs: 3000 }, metrics),
  };
}

export type Deps = ReturnType<typeof createDeps>;

export function createApp(deps: Deps, assets: Assets) {
  const kit = webKit(deps, assets);
  const renderWebError = (error: AppError, request: Request): Response => {
    if (error instanceof SignInRequired) {
      const url = new URL(request.url);
      return kit.redirect(request, error.setup ? "/setup" : `/login?next=${encodeURIComponent(url.pathname + url.search)}`);
    }
    const status = statusOf(error);
    const headers = errorHeaders(error);
    if (isHtmx(request)) return new Response(error.message, { status, headers: { "Content-Type": "text/plain; charset=utf-8", ...headers } });
    return kit.page(deps.web.session(request), errorPage(status, error.message), { title: "Error", status, headers });
  };
  // The error handler answers 405 for a known path with the wrong method, so it needs the routes.
  const routes: { of: () => { method: string; path: string }[] } = { of: () => [] };
  const app = new Elysia()
    .use(accessLog())
    .use(errorHandler(() => routes.of(), renderWebError))
    .use(healthApi(deps))
    .use(ingestApi(deps))
    .use(readApi(deps))
    .use(streamApi(deps))
    .use(openApiRoutes(deps))
    .use(assetRoutes(assets))
    .use(authRoutes(deps, kit))
    .use(pageRoutes(deps, kit))
    .use(manageRoutes(deps, kit))
    .use(settingsRoutes(deps, kit))
    .use(notificationRoutes(deps, kit))
    .use(liveRoutes(deps, kit))
    .use(docsRoutes(deps, kit));
  routes.of = () => app.routes;
  return app;
}
