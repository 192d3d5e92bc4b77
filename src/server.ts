// A running Signalboard: the store opened, the default project in place, the app listening, the
// background jobs ticking; and a stop() that loses nothing.
import { createApp, createDeps, type Deps } from "./app.ts";
import { SERVER_BODY_LIMIT } from "./http/body-limit.ts";
import { Assets } from "./web/assets.ts";
import type { Config } from "./config.ts";
import { log, logEnabled } from "./logger.ts";
import { closeStore, databasePath, openStore } from "./store/index.ts";

export type Running = { url: string; port: number; deps: Deps; stop: () => Promise<void> };

const INDEX_BATCH = 250;

export async function startServer(config: Config): Promise<Running> {
  const phase = (name: string) => log.debug("start-up", { phase: name, ms: Math.round(performance.now()) });
  phase("modules loaded");
  const store = openStore(databasePath(config.dataDir), config.sqliteSync);
  phase("database open and migrated");
  const deps = createDeps(config, store);
  phase("services ready");
  await deps.projects.ensure(config.defaultProject);
  const assets = await Assets.load();
  phase("assets loaded");
  const app = createApp(deps, assets);
  phase("routes composed");
  app.listen({
    port: config.port,
    hostname: config.host,
    // Bodies are size-checked before they are read (http/body-limit.ts) with a JSON 413; this is a backstop.
    maxRequestBodySize: Math.max(config.bodyLimit, SERVER_BODY_LIMIT),
    idleTimeout: 30,
  });
  const server = app.server!;
  // Port 0 means "any free port": links in notifications must name the one we got.
  if (config.port === 0 && config.baseUrl === "http://localhost:0") config.baseUrl = `http://localhost:${server.port}`;
  const jobs = startJobs(deps);
  deps.notifier.start(deps.hub);
  const url = `http://${config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host}:${server.port}`;
  log.info("listening", { url, dataDir: config.dataDir, baseUrl: config.baseUrl, sqliteSync: config.sqliteSync, startedInMs: Math.round(performance.now()) });
  const code = deps.accounts.setupCode();
  if (code) {
    const link = `${config.baseUrl}/setup?code=${code}`;
    log.info("no owner account yet: open the set-up link to create it", { setupUrl: link });
    if (logEnabled("info")) process.stderr.write(`\nSignalboard has no owner yet. Open this link to create the owner account:\n\n  ${link}\n\n`);
  }

  let stopping: Promise<void> | null = null;
  async function stop(): Promise<void> {
    stopping ??= (async () => {
      deps.streams.closeAll(); // open streams would keep stop() pending forever; new ones are refused
      const closed = server.stop(false); // no new connections; in-flight requests finish
      await Promise.race([closed, Bun.sleep(3000)]);
      await server.stop(true); // whatever is still open after the grace period is cut
      jobs.stop();
      await deps.notifier.stop();
      await jobs.finish();
      closeStore(store);
      log.info("stopped");
    })();
    return stopping;
  }

  return { url, port: server.port ?? config.port, deps, stop };
}

/** Work that runs beside requests: the search indexer, token last-used times, and housekeeping. */
function startJobs({ store, tokens, accounts, config, projects }: Deps) {
  let indexing = false;
  const indexPending = async () => {
    if (indexing) return;
    indexing = true;
    try {
      while ((await store.writer.submit(() => store.search.indexPending(INDEX_BATCH))) === INDEX_BATCH);
    } catch (error) {
      log.warn("search indexing failed; will retry", { error });
    } finally {
      indexing = false;
    }
  };
  const flushTokens = () => tokens.flushLastUsed().catch((error) => log.warn("could not record token use", { error }));
  const housekeeping = async () => {
    try {
      await accounts.pruneSessions();
      const expired = await projects.pruneExpired();
      if (expired) log.info("deleted events past their project's retention", { events: expired });
      const now = Date.now();
      await store.writer.submit(() => {
        store.notifications.pruneDeliveries(now - 7 * 86_400_000);
        store.notifications.pruneSubscriptions(now - config.pushMaxAge);
        store.idempotency.prune(now);
      });
    } catch (error) {
      log.warn("housekeeping failed; will retry", { error });
    }
  };
  const timers = [setInterval(indexPending, 100), setInterval(flushTokens, 10_000), setInterval(housekeeping, 3_600_000), setTimeout(housekeeping, 30_000)];
  return {
    stop: () => timers.forEach((t) => clearInterval(t)),
    finish: async () => {
      await flushTokens();
      await indexPending();
    },
  };
}
