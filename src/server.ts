// A running Signalboard: the store opened, the default project in place, the app listening, the
// background jobs ticking; and a stop() that loses nothing.
import { type App, createApp } from "./app.ts";
import type { Config } from "./config.ts";
import { SERVER_BODY_LIMIT } from "./http/body.ts";
import type { Edge } from "./http/edge.ts";
import type { Route } from "./http/routes.ts";
import { log, logEnabled } from "./logger.ts";
import { type AnyStore, createServices, openStore, type ServiceOptions, type Services, whereData } from "./services.ts";
import { Assets } from "./web/assets.ts";

/** `routes`, `app` and `store` are there for tests and tools that look inside; the server itself goes through `services`. */
export type Running = {
  url: string;
  port: number;
  services: Services;
  edge: Edge;
  routes: Route[];
  app: App["app"];
  store: AnyStore;
  stop: () => Promise<void>;
};

/** What a server is given beside its configuration: tests give their own resolver of names, clock and password cost. */
export type ServerOptions = Pick<ServiceOptions, "lookup" | "clock" | "passwordCost">;

/** openServer's parts, listening on the configuration's host and port. */
export async function startServer(loaded: Config, options: ServerOptions = {}): Promise<Running> {
  phase("modules loaded");
  // The port is taken before anything is wired: with --port 0 it is known only once bound, and
  // links (notifications, the set-up link, BASE_URL's default) must name it. A port in use fails here, early.
  const reserved = reservePort(loaded);
  const config = settle(loaded, reserved.port);
  let opened: Opened;
  try {
    opened = await openServer(config, options);
  } catch (error) {
    reserved.stop(true);
    throw error;
  }
  const { app, services } = opened;
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
    await opened.stop();
    throw new Error(listenProblem(error as NodeJS.ErrnoException, config));
  }
  const server = app.server!;
  const url = `http://${config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host}:${server.port}`;
  // Where the data is, once: the data directory on SQLite, the database (password masked) on PostgreSQL.
  const where = config.databaseUrl
    ? { databaseUrl: whereData(config) }
    : { dataDir: config.dataDir, sqliteSync: config.sqliteSync };
  log.info("listening", {
    url,
    version: services.version,
    database: services.dialect,
    ...where,
    baseUrl: config.baseUrl,
    startedInMs: Math.round(performance.now()),
  });
  const code = await services.accounts.setupCode();
  if (code) {
    const link = `${config.baseUrl}/setup?code=${code}`;
    log.info("no owner account yet: open the set-up link to create it", { setupUrl: link });
    if (logEnabled("info"))
      process.stderr.write(
        `\nSignalboard has no owner yet. Open this link to create the owner account:\n\n  ${link}\n\n`,
      );
  }

  let stopping: Promise<void> | null = null;
  const stop = (): Promise<void> =>
    (stopping ??= opened.stop(async () => {
      const closed = server.stop(false); // no new connections; in-flight requests finish
      await Promise.race([closed, Bun.sleep(3000)]);
      await server.stop(true); // whatever is still open after the grace period is cut
    }));

  return { ...opened, url, port: server.port ?? config.port, stop };
}

/** A server that does not listen: what openServer gives. */
export type Opened = Omit<Running, "url" | "port" | "stop"> & {
  /** Stops it all, losing nothing; `drain` runs once nothing new starts (streams closed, no new sends). */
  stop: (drain?: () => Promise<void>) => Promise<void>;
};

/**
 * Everything of a server but its socket: the store open, the default project in place, the
 * services and background jobs started, the app composed. startServer listens with it; tests
 * call `app.handle(request)` on it where no socket matters.
 */
export async function openServer(config: Config, options: ServerOptions = {}): Promise<Opened> {
  const store = await openStore(config, { serving: true });
  phase("database open and migrated");
  const services = await createServices(config, { ...options, store, serving: true });
  phase("services ready");
  await services.projects.ensure(config.defaultProject);
  await services.start(); // live views follow the database, the notifier works the queue
  const assets = await Assets.load();
  phase("assets loaded");
  const { app, edge, routes } = createApp(services, assets);
  phase("routes composed");
  const jobs = startJobs(services);
  edge.streams.watch(() => services.accessVersion()); // a revoked token or ended session closes its streams

  async function stop(drain?: () => Promise<void>): Promise<void> {
    edge.streams.closeAll(); // open streams would keep a server's stop() pending forever; new ones are refused
    services.fanout.close();
    // No new sends from now on; the sends under way get their grace beside the requests', not after it.
    const notifierStopped = services.notifier.stop();
    await drain?.();
    jobs.stop();
    await notifierStopped;
    await services.close(); // the writes under way commit, token use is recorded, the store closes
    log.info("stopped");
  }

  return { services, edge, routes, app, store, stop };
}

const phase = (name: string) => log.debug("start-up", { phase: name, ms: Math.round(performance.now()) });

/** Work that runs beside requests, on the services' clock: token last-used times, housekeeping, and the digests that are due (checked each minute). */
function startJobs({ tokens, housekeep, runDigests, buildSummaries, clock }: Services) {
  const flushTokens = () => tokens.flushLastUsed().catch((error) => log.warn("could not record token use", { error }));
  const housekeeping = async () => {
    try {
      const { expiredEvents } = await housekeep();
      if (expiredEvents) log.info("deleted events past their project's retention", { events: expiredEvents });
    } catch (error) {
      log.warn("housekeeping failed; will retry", { error });
    }
  };
  const digests = () =>
    runDigests().catch((error) =>
      log.warn("could not send the digests that are due; will retry", { error: (error as Error).message }),
    );
  let stopped = false;
  let building = false;
  // Summaries of events from before them (after an upgrade, or a channel of users deleted): built in
  // the background, a step at a time; looked for again every 10 seconds.
  const summaries = async () => {
    if (building) return;
    building = true;
    try {
      const started = performance.now();
      const steps = await buildSummaries(() => stopped);
      if (steps > 1)
        log.info("built the summaries of events written before them", {
          steps,
          seconds: Math.round((performance.now() - started) / 100) / 10,
        });
    } catch (error) {
      log.warn("could not build the summaries; will retry", { error: (error as Error).message });
    } finally {
      building = false;
    }
  };
  const timers = [
    clock.every(10_000, flushTokens),
    clock.every(3_600_000, housekeeping),
    clock.after(30_000, housekeeping),
    clock.every(60_000, digests),
    clock.after(5_000, digests),
  ];
  // Catching up on summaries is not work that falls due at a time: the system's timers, whatever the clock.
  const catchUp = [setTimeout(summaries, 1_000), setInterval(summaries, 10_000)];
  return {
    stop: () => {
      stopped = true;
      timers.forEach((t) => t.cancel());
      catchUp.forEach((t) => clearInterval(t));
    },
  };
}

/** Holds the port (a plain TCP listener) until the app listens on it. */
function reservePort(config: Config): { port: number; stop: (force: boolean) => void } {
  try {
    return Bun.listen({
      hostname: config.host,
      port: config.port,
      socket: { data() {}, open: (socket) => void socket.end() },
    });
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
  if (error.code === "EADDRINUSE")
    return `port ${port} in use on ${host} (another program, or another Signalboard): stop it, or choose another port with --port / PORT`;
  if (error.code === "EADDRNOTAVAIL")
    return `this machine has no address ${host}: use 0.0.0.0 (every interface), 127.0.0.1, or one of its own addresses (--host / HOST)`;
  if (error.code === "EACCES")
    return `not allowed to listen on port ${port}: ports below 1024 need root or CAP_NET_BIND_SERVICE (--port / PORT)`;
  return `cannot listen on ${host}:${port}: ${error.message}`;
}
