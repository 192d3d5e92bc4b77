// Composition: services from a store, routes from services. createApp never listens, so tests can
// call app.handle(new Request(...)) and the server (server.ts) can wrap it.
import { Elysia } from "elysia";
import pkg from "../package.json";
import { healthApi } from "./api/health.ts";
import { ingestApi } from "./api/ingest.ts";
import { readApi } from "./api/read.ts";
import { streamApi } from "./api/stream.ts";
import type { Config } from "./config.ts";
import { feedService } from "./domain/feed.ts";
import { ingestService } from "./domain/ingest.ts";
import { projectService } from "./domain/projects.ts";
import { tokenService } from "./domain/tokens.ts";
import { createGuard } from "./http/auth.ts";
import { errorHandler } from "./http/on-error.ts";
import { StreamRegistry } from "./http/sse.ts";
import { Hub } from "./live/hub.ts";
import type { Store } from "./store/index.ts";

export const VERSION: string = pkg.version;

export function createDeps(config: Config, store: Store) {
  const hub = new Hub();
  const tokens = tokenService(store);
  return {
    config,
    store,
    hub,
    version: VERSION,
    streams: new StreamRegistry(),
    tokens,
    guard: createGuard(tokens, config),
    ingest: ingestService({ store, hub, defaultProject: config.defaultProject }),
    feed: feedService(store),
    projects: projectService(store, hub),
  };
}

export type Deps = ReturnType<typeof createDeps>;

export function createApp(deps: Deps) {
  // The error handler answers 405 for a known path with the wrong method, so it needs the routes.
  const routes: { of: () => { method: string; path: string }[] } = { of: () => [] };
  const app = new Elysia()
    .use(errorHandler(() => routes.of()))
    .use(healthApi(deps))
    .use(ingestApi(deps))
    .use(readApi(deps))
    .use(streamApi(deps));
  routes.of = () => app.routes;
  return app;
}
