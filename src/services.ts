// Composition: the store the configuration names, and the services over it. The server and every
// command build their services here, so a command does exactly what the dashboard does. Routes
// and commands receive services; only this file sees the store.
import { type Clock, systemClock } from "./clock.ts";
import { type Config, safeUrl } from "./config.ts";
import { accountService, type PasswordCost } from "./domain/accounts.ts";
import { secondFactorService } from "./domain/second-factor.ts";
import { passkeyService } from "./domain/passkeys.ts";
import { proxySignIn } from "./domain/proxy-sign-in.ts";
import { AlertRunner } from "./domain/alert-runner.ts";
import { pingService } from "./domain/check-pings.ts";
import { checkRunner } from "./domain/check-runner.ts";
import { checkService } from "./domain/checks.ts";
import { checkBadgeService } from "./domain/check-badges.ts";
import { alertService } from "./domain/alerts.ts";
import { maintenanceService } from "./domain/maintenance.ts";
import { shareService } from "./domain/shares.ts";
import { statusOf } from "./domain/share-status.ts";
import { analyticsService } from "./domain/analytics.ts";
import { auditService } from "./domain/audit.ts";
import { chartService } from "./domain/charts.ts";
import { deviceAdmin } from "./domain/device-admin.ts";
import { digestService } from "./domain/digests.ts";
import { feedService } from "./domain/feed.ts";
import { memoryLimiter, sharedLimiter } from "./domain/limits.ts";
import { healthService } from "./domain/health.ts";
import { hookService } from "./domain/hooks.ts";
import { ingestService, type RunWrite } from "./domain/ingest.ts";
import { otlpService } from "./domain/otlp/service.ts";
import { memberService } from "./domain/members.ts";
import { type IngestWrite, ingestWrites } from "./domain/ingest-writes.ts";
import { deviceService } from "./domain/notifications.ts";
import { type Lookup, type OutboundRules, systemLookup } from "./domain/outbound.ts";
import { integrationService } from "./domain/integrations.ts";
import { oidcService } from "./domain/oidc.ts";
import { projectService } from "./domain/projects.ts";
import { tokenService } from "./domain/tokens.ts";
import { transferService } from "./domain/transfer.ts";
import { Fanout } from "./live/fanout.ts";
import { SharedAnswers } from "./live/answers.ts";
import { type Announce, Hub, type LiveMessage } from "./live/hub.ts";
import { log } from "./logger.ts";
import { createMetrics } from "./metrics.ts";
import { createMailer } from "./notify/email.ts";
import { outboundFetch } from "./notify/outbound.ts";
import { Notifier } from "./notify/queue.ts";
import { vapidKeys } from "./notify/vapid.ts";
import { type CopyOptions, type CopyResult, copyInstance, type Place } from "./store/copy/index.ts";
import { openPgStore, type PgStore } from "./store/pg/index.ts";
import { databasePath, openSqliteStore, type SqliteStore } from "./store/sqlite/index.ts";
import { WriterThread } from "./store/sqlite/writer-thread.ts";
import type { Repositories } from "./store/store.ts";
import type { Share } from "./model/share.ts";
import { VERSION } from "./version.ts";

/** Where the SQLite database of a data directory is. */
export { databasePath };

export { VERSION };

export type { CopyProgress, CopyResult } from "./store/copy/index.ts";

/** Events summed by one step of building the summaries: a few milliseconds of the writer's time. */
const SUMMARY_STEP = 1000;
const DELIVERIES_KEPT_MS = 7 * 86_400_000;

export type AnyStore = SqliteStore | PgStore;

/**
 * The configuration's store: PostgreSQL when DATABASE_URL is set, else SQLite in DATA_DIR.
 * `serving`: the server's (on SQLite it keeps the full-text index up to date).
 */
export async function openStore(config: Config, { serving = false } = {}): Promise<AnyStore> {
  if (config.databaseUrl) return openPgStore(config.databaseUrl, { queryTimeoutMs: config.queryTimeout });
  return openSqliteStore(databasePath(config.dataDir), {
    sync: config.sqliteSync,
    background: serving,
    readers: config.readers,
    queryTimeoutMs: config.queryTimeout,
  });
}

/**
 * Copies everything in the configuration's database to another (`signalboard copy`): PostgreSQL's
 * at `databaseUrl`, or SQLite's in `dataDir`. See store/copy/.
 */
export function copyData(
  config: Config,
  to: { databaseUrl: string } | { dataDir: string },
  options: CopyOptions,
): Promise<CopyResult> {
  const place = (where: { databaseUrl?: string | null; dataDir?: string }): Place =>
    where.databaseUrl
      ? { dialect: "postgresql", url: where.databaseUrl }
      : { dialect: "sqlite", dataDir: where.dataDir!, path: databasePath(where.dataDir!) };
  return copyInstance(place(config), place(to), options);
}

/** Where the data is, for logs: the database URL without its password, or the data directory. */
export const whereData = (config: Config) => (config.databaseUrl ? safeUrl(config.databaseUrl) : config.dataDir);

export type ServiceOptions = {
  /** An open store (the server's); by default the configuration's is opened. close() closes it either way. */
  store?: AnyStore;
  /** For the server: ingest writes may run on the writer thread (SIGNALBOARD_WRITER, SQLite). */
  serving?: boolean;
  /** How outbound destinations' names are resolved (the system's resolver unless a test gives its own). */
  lookup?: Lookup;
  /** The time sessions, alert rules, digests and retention go by, and the timers of the server's jobs (the system's unless a test gives its own). */
  clock?: Clock;
  /** The cost of new password hashes (Bun.password's default unless a test asks for less). */
  passwordCost?: PasswordCost;
};

export async function createServices(
  config: Config,
  { store, serving = false, lookup = systemLookup, clock = systemClock, passwordCost }: ServiceOptions = {},
) {
  const opened = store ?? (await openStore(config));
  return servicesOf(config, opened, { serving, lookup, clock, passwordCost });
}

function servicesOf(
  config: Config,
  store: AnyStore,
  {
    serving,
    lookup,
    clock,
    passwordCost,
  }: { serving: boolean; lookup: Lookup; clock: Clock; passwordCost?: PasswordCost },
) {
  const hub = new Hub();
  const metrics = createMetrics();
  // Ingest's writes run in this thread's group commit, or on a writer thread (SIGNALBOARD_WRITER).
  const writerThread =
    serving && config.writer === "thread" && "path" in store ? new WriterThread(store.path, config.sqliteSync) : null;
  const run = (
    writerThread
      ? (name: IngestWrite, args: unknown, signal?: AbortSignal) => writerThread.run(name, args, signal)
      : (name: IngestWrite, args: unknown, signal?: AbortSignal) =>
          store.tx(
            (tx) => (ingestWrites[name] as (tx: Repositories, args: unknown) => Promise<unknown>)(tx, args),
            signal,
          )
  ) as RunWrite;
  const announce = announcer(store, hub);
  const vapid = once(() => vapidKeys(store, config.vapidSubject));
  // Where the server may send on someone's behalf: checked when a destination is saved, and at each send.
  const outbound: OutboundRules = {
    allow: config.outboundAllow,
    privateNetworks: config.outboundPrivate,
    lookup,
  };
  const tokens = tokenService(store);
  const accounts = accountService(store, { sessionTtlMs: config.sessionTtl, clock, passwordCost });
  const audit = auditService(store);
  const projects = projectService(store, { announce, defaultProject: config.defaultProject, clock });
  const ingest = ingestService({ run, announce, defaultProject: config.defaultProject, baseUrl: config.baseUrl });
  const notifier = new Notifier(
    store,
    vapid,
    {
      concurrency: 64,
      retryBaseMs: config.notifyRetryBase,
      maxAttempts: config.notifyAttempts,
      pollMs: 1000,
      graceMs: 3000,
    },
    metrics,
    outbound,
    createMailer(config.smtpUrl, config.smtpFrom, outbound),
  );
  const loginRate = config.rateLimitLogin;
  const feed = feedService(store);
  const analytics = analyticsService(store, feed);
  const checksSilence = checkRunner(store, announce, { baseUrl: config.baseUrl });
  const alertRunner = new AlertRunner(store, hub, announce, {
    intervalMs: config.alertInterval * 1000,
    baseUrl: config.baseUrl,
    clock,
    alsoEachRound: (now) => checksSilence.round(now),
  });
  const running: { stop(): Promise<void> }[] = [];
  const digests = digestService(store, { baseUrl: config.baseUrl, clock });

  return {
    config,
    clock,
    version: VERSION,
    dialect: store.dialect,
    hub,
    fanout: new Fanout(hub, config.liveInterval),
    /** Dashboard cards' answers, worked out once per refresh for everyone looking. */
    answers: new SharedAnswers(hub, config.cardRefresh, () => clock.now()),
    metrics,
    tokens,
    accounts,
    /** Each person's second factor (TOTP and recovery codes), and whether one is required. */
    secondFactor: secondFactorService(store, { clock }),
    /** Each person's passkeys: a second factor, and a sign-in without a password (relying party: BASE_URL's host). */
    passkeys: passkeyService(store, { baseUrl: config.baseUrl, clock }),
    /** Single sign-on with an OpenID provider (SIGNALBOARD_OIDC_ISSUER), or null. Its requests go through the outbound rules. */
    oidc:
      config.oidcIssuer && config.oidcClientId
        ? oidcService(
            store,
            accounts,
            {
              issuer: config.oidcIssuer,
              clientId: config.oidcClientId,
              clientSecret: config.oidcClientSecret,
              scopes: config.oidcScopes,
              name: config.oidcName,
              defaultRole: config.oidcDefaultRole,
              rolesClaim: config.oidcRolesClaim,
              roleMap: config.oidcRoleMap,
              redirectUri: `${config.baseUrl}/auth/oidc/callback`,
              afterSignOut: `${config.baseUrl}/login`,
            },
            {
              fetch: (url, init) =>
                outboundFetch(outbound, "integration", url, {
                  ...init,
                  signal: init.signal ?? AbortSignal.timeout(10_000),
                }),
              clock,
            },
          )
        : null,
    /** Sign-in by a trusted proxy's header (SIGNALBOARD_AUTH_PROXY_HEADER), when one is set. */
    proxySignIn: config.authProxyHeader
      ? proxySignIn(store, accounts, { defaultRole: config.oidcDefaultRole, clock, passwordCost })
      : null,
    /** Adding, changing and removing other people's accounts. */
    members: memberService(store, { passwordCost }),
    audit,
    /** Sign-in attempts per client address (SIGNALBOARD_RATE_LIMIT_LOGIN), counted across every instance of a shared database. */
    signIns: loginRate
      ? store.shared
        ? sharedLimiter(store.shared, "sign-in", loginRate)
        : memoryLimiter(loginRate)
      : null,
    projects,
    ingest,
    /** Inbound webhooks (/hooks/<id>): deliveries made into events by the same ingest. */
    hooks: hookService(store, ingest, { clock, baseUrl: config.baseUrl }),
    /** OpenTelemetry's exports, through ingest. */
    otlp: otlpService({
      ingest,
      requireProject: projects.requireProject,
      defaultProject: config.defaultProject,
    }),
    feed,
    analytics,
    charts: chartService(store, analytics, feed),
    alerts: { ...alertService(store, { clock }), runner: alertRunner },
    checks: {
      ...checkService(store, { clock, baseUrl: config.baseUrl }),
      pings: pingService(store, announce, { baseUrl: config.baseUrl, clock }),
      badges: checkBadgeService(store, { clock }),
      /** Silence, found on the alert rules' round (its stats for /metrics). */
      silence: checksSilence,
    },
    /** Maintenance windows: when alert rules notify nobody (domain/quiet.ts). */
    maintenance: maintenanceService(store, { clock }),
    /** Shared pages: a project's chosen cards, or its status page, shown without sign-in. */
    shares: {
      ...shareService(store, { clock, baseUrl: config.baseUrl }),
      status: (share: Share) => statusOf(store, share, clock.now()),
    },
    transfer: transferService(store),
    devices: deviceService(store, outbound),
    deviceAdmin: deviceAdmin(store),
    integrations: integrationService(store, outbound),
    digests,
    health: healthService(store, writerThread ? [store.writer, writerThread] : [store.writer]),
    /** The server's VAPID key pair, made and stored at first use. */
    vapid,
    notifier,

    /**
     * For the server: live views get what every instance commits (on a shared database, by
     * following it), and the notifier starts on the delivery queue.
     */
    async start(): Promise<void> {
      if (store.shared) {
        const shared = store.shared;
        running.push(
          shared.follow(await store.events.lastId(), (events) =>
            events.forEach((event) => hub.publish({ type: "event", event })),
          ),
        );
        const unlisten = shared.onBroadcast((payload) => hub.publish(JSON.parse(payload) as LiveMessage));
        running.push({ stop: async () => void unlisten() });
      }
      await notifier.start(hub, { only: !store.shared });
      alertRunner.start();
      running.push({ stop: () => alertRunner.stop() });
    },

    /** Queues the digests whose period ended (on a shared database, one instance at a time runs them); how many went. */
    async runDigests(now = clock.now()): Promise<number> {
      let sent = 0;
      const work = async () => void (sent = await digests.runDue(now));
      if (store.shared) await store.shared.asLeader("digests", work);
      else await work();
      return sent;
    },

    /** A copy of the database (see Store.backup). */
    backup: (target: string, options: { replace: boolean }) => store.backup(target, options),

    /** Throws when writing a file at `target` would destroy the database (see Store.refuseOwnFile). */
    refuseOwnFile: (target: string) => store.refuseOwnFile(target),

    /** Changes whenever access may have been taken away (open streams are checked again then). */
    accessVersion: () => store.accessVersion(),

    /** Forgets what has served its time: ended sessions, events past retention, old deliveries, audit entries past the newest 10,000. On a shared database, one instance at a time does it. */
    async housekeep(now = clock.now()): Promise<{ expiredEvents: number }> {
      let expiredEvents = 0;
      const work = async () => {
        await accounts.pruneSessions(now);
        await audit.prune();
        expiredEvents = await projects.pruneExpired(now);
        await store.prune(now, {
          deliveriesBefore: now - DELIVERIES_KEPT_MS,
          subscriptionsBefore: now - config.pushMaxAge,
        });
      };
      if (store.shared) await store.shared.asLeader("housekeeping", work);
      else await work();
      return { expiredEvents };
    },

    /**
     * Builds the summaries still to build (projects with events from before them), a step at a time
     * with a turn for requests between steps, until none is left or `stopped()`; one instance at a
     * time on a shared database. Returns the steps taken.
     */
    async buildSummaries(stopped: () => boolean = () => false): Promise<number> {
      let steps = 0;
      const work = async () => {
        while (!stopped() && (await store.events.buildSummaries(SUMMARY_STEP))) {
          steps++;
          await new Promise((resolve) => setImmediate(resolve));
        }
      };
      if (store.shared) await store.shared.asLeader("summaries", work);
      else await work();
      return steps;
    },

    /** Lets the writes under way commit, then closes the store. */
    async close(): Promise<void> {
      await Promise.all(running.map((r) => r.stop()));
      await writerThread?.stop(); // its last writes commit before the store closes
      await tokens.flushLastUsed().catch(() => {});
      await store.close();
    },
  };
}

/**
 * How services announce what they committed. On SQLite this process made the write: it publishes
 * into its hub at once. On a shared database every instance follows the events in the database
 * (in commit order, its own too) and hears the rest (metrics, new channels) by broadcast, so each
 * instance's live views show every instance's writes.
 */
function announcer(store: AnyStore, hub: Hub): Announce {
  const shared = store.shared;
  if (!shared) return (message) => hub.publish(message);
  return (message) => {
    if (message.type === "event") return; // followed from the database
    shared.broadcast(JSON.stringify(message)).catch((error) =>
      log.warn("could not announce a change to other instances; their live views miss it until a reload", {
        error: (error as Error).message,
      }),
    );
  };
}

export type Services = Awaited<ReturnType<typeof createServices>>;

function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | null = null;
  return () => {
    made ??= make().catch((error) => {
      made = null; // failed: the next caller tries again
      throw error;
    });
    return made;
  };
}
