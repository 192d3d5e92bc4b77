// A running Signalboard: the store opened, the default project in place, the app listening, the
// background jobs ticking; and a stop() that loses nothing.
import { createApp, createDeps, type Deps } from "./app.ts";
import { SERVER_BODY_LIMIT } from "./http/body.ts";
import { Assets } from "./web/assets.ts";
import type { Config } from "./config.ts";
import { log, logEnabled } from "./logger.ts";
import { closeStore, databasePath, openStore, type Store } from "./store/index.ts";
import { deletedThrough, prepareSearch } from "./store/search.ts";
import type { IndexerMessage, IndexerReport } from "./store/search-worker.ts";
import { startWorker } from "./workers.ts";

export type Running = { url: string; port: number; deps: Deps; stop: () => Promise<void> };

export async function startServer(loaded: Config): Promise<Running> {
  const phase = (name: string) => log.debug("start-up", { phase: name, ms: Math.round(performance.now()) });
  phase("modules loaded");
  // The port is taken before anything is wired: with --port 0 it is known only once bound, and
  // links (notifications, the set-up link, BASE_URL's default) must name it. A port in use fails here, early.
  const reserved = reservePort(loaded);
  const config = settle(loaded, reserved.port);
  let store: Store;
  try {
    store = openStore(databasePath(config.dataDir), config.sqliteSync);
  } catch (error) {
    reserved.stop(true);
    throw error;
  }
  prepareSearch(store.sqlite, store.path);
  phase("database open and migrated");
  const deps = createDeps(config, store);
  phase("services ready");
  await deps.projects.ensure(config.defaultProject);
  const assets = await Assets.load();
  phase("assets loaded");
  const app = createApp(deps, assets);
  phase("routes composed");
  reserved.stop(true);
  try {
    app.listen({
      port: config.port,
      hostname: config.host,
      // Bodies are size-checked where they are read (http/body.ts), with a JSON 413; this is a backstop.
      maxRequestBodySize: Math.max(config.bodyLimit, SERVER_BODY_LIMIT),
      idleTimeout: 30,
      // Elysia lets processes share a port by default: a second server started by mistake would
      // silently take half the requests. One server per port; the second is refused (EADDRINUSE).
      reusePort: false,
    });
  } catch (error) {
    closeStore(store);
    throw new Error(listenProblem(error as NodeJS.ErrnoException, config));
  }
  const server = app.server!;
  const jobs = startJobs(deps);
  deps.notifier.start(deps.hub);
  deps.streams.watch(() => store.accessVersion()); // a revoked token or ended session closes its streams
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
      deps.fanout.close();
      // No new sends from now on; the sends under way get their grace beside the requests', not after it.
      const notifierStopped = deps.notifier.stop();
      const closed = server.stop(false); // no new connections; in-flight requests finish
      await Promise.race([closed, Bun.sleep(3000)]);
      await server.stop(true); // whatever is still open after the grace period is cut
      jobs.stop();
      await deps.writerThread?.stop(); // its last writes commit before the store closes
      await Promise.all([notifierStopped, jobs.finish()]);
      closeStore(store);
      log.info("stopped");
    })();
    return stopping;
  }

  return { url, port: server.port ?? config.port, deps, stop };
}

/** Work that runs beside requests: the search indexer, token last-used times, and housekeeping. */
function startJobs({ store, tokens, accounts, config, projects }: Deps) {
  const indexer = startIndexer(store.path);
  const flushTokens = () => tokens.flushLastUsed().catch((error) => log.warn("could not record token use", { error }));
  const housekeeping = async () => {
    try {
      await accounts.pruneSessions();
      const expired = await projects.pruneExpired();
      if (expired) log.info("deleted events past their project's retention", { events: expired });
      const now = Date.now();
      const unindexed = deletedThrough(store.searchReader());
      await store.writer.submit(() => {
        store.notifications.pruneDeliveries(now - 7 * 86_400_000);
        store.notifications.pruneSubscriptions(now - config.pushMaxAge);
        store.idempotency.prune(now);
        store.sqlite.query("DELETE FROM deleted_events WHERE seq <= ?").run(unindexed); // the index has dropped them
      });
    } catch (error) {
      log.warn("housekeeping failed; will retry", { error });
    }
  };
  const timers = [setInterval(flushTokens, 10_000), setInterval(housekeeping, 3_600_000), setTimeout(housekeeping, 30_000)];
  return {
    stop: () => timers.forEach((t) => clearInterval(t)),
    finish: async () => {
      await flushTokens();
      await indexer.stop();
    },
  };
}

/** The search indexer's thread (store/search-worker.ts); stop() waits until it has let go of its files. */
function startIndexer(databasePath: string) {
  const worker = startWorker("store/search-worker.ts");
  let stopped: () => void = () => {};
  worker.onerror = (event) => log.error("the search indexer failed; full-text search misses new events until a restart", { error: event.message });
  worker.onmessage = ({ data }: MessageEvent<IndexerReport>) => {
    if (data.type === "error") log.warn("search indexing failed; will retry", { error: data.message });
    else if (data.type === "stopped") stopped();
  };
  worker.postMessage({ type: "start", databasePath } satisfies IndexerMessage);
  return {
    async stop(): Promise<void> {
      const done = new Promise<void>((resolve) => (stopped = resolve));
      worker.postMessage({ type: "stop" } satisfies IndexerMessage);
      await Promise.race([done, Bun.sleep(2000)]);
      worker.terminate();
    },
  };
}

/** Holds the port (a plain TCP listener) until the app listens on it. */
function reservePort(config: Config): { port: number; stop: (force: boolean) => void } {
  try {
    return Bun.listen({ hostname: config.host, port: config.port, socket: { data() {}, open: (socket) => void socket.end() } });
  } catch (error) {
    throw new Error(listenProblem(error as NodeJS.ErrnoException, config));
  }
}

/** The configuration as it stays from here on: the real port, and BASE_URL's default naming it. Frozen. */
function settle(config: Config, port: number): Config {
  const defaultBase = `http://localhost:${config.port}`; // what loadConfig put there when BASE_URL was not set
  const baseUrl = config.baseUrl === defaultBase ? `http://localhost:${port}` : config.baseUrl;
  return Object.freeze({ ...config, port, baseUrl });
}

function listenProblem(error: NodeJS.ErrnoException, { host, port }: Config): string {
  if (error.code === "EADDRINUSE") return `port ${port} in use on ${host} (another program, or another Signalboard): stop it, or choose another port with --port / PORT`;
  if (error.code === "EADDRNOTAVAIL") return `this machine has no address ${host}: use 0.0.0.0 (every interface), 127.0.0.1, or one of its own addresses (--host / HOST)`;
  if (error.code === "EACCES") return `not allowed to listen on port ${port}: ports below 1024 need root or CAP_NET_BIND_SERVICE (--port / PORT)`;
  return `cannot listen on ${host}:${port}: ${error.message}`;
}
