// Every setting is declared once here: its flag, its environment variable, its default and the zod
// schema that validates it. `--help` is generated from this table, so it cannot drift.
import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import { resolve } from "node:path";
import { z } from "zod";
import { parseRanges, type Range } from "./domain/addresses.ts";
import { type AllowList, hostOf, judgeLiteral, parseAllowList } from "./domain/outbound.ts";
import { parseByteSize, parseDuration, parseRate, type Rate } from "./domain/units.ts";

type Spec<T> = {
  env: string;
  help: string;
  default: string | undefined;
  schema: z.ZodType<T>;
};

const name = z.string().regex(/^[a-z0-9-]{1,64}$/, "must be 1-64 lowercase letters, digits or dashes");
const bool = z
  .enum(["true", "false", "1", "0", "yes", "no", "on", "off"], { error: "must be true or false" })
  .transform((v) => ["true", "1", "yes", "on"].includes(v));
/** A switch documented as on or off (true and false are taken too), refused in those words. */
const onOff = z
  .enum(["true", "false", "1", "0", "yes", "no", "on", "off"], { error: "must be on or off" })
  .transform((v) => ["true", "1", "yes", "on"].includes(v));
/** A whole number from `min` to `max`, refused in words (zod's own message names NaN). */
const whole = (min: number, max: number, note = "") => {
  const error = `must be a whole number from ${min} to ${max}${note}`;
  return z.coerce.number({ error }).int({ error }).min(min, { error }).max(max, { error });
};
const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: `must be ${values.slice(0, -1).join(", ")} or ${values.at(-1)}` });
const bytes = z.string().transform((v, ctx) => parseOr(ctx, () => parseByteSize(v)));
const duration = z
  .string()
  .transform((v, ctx) => parseOr(ctx, () => parseDuration(v)))
  .refine((ms) => ms > 0, "must be longer than 0, such as 30s, 15m, 12h or 30d");
const rate = z.string().transform((v, ctx): Rate | null => parseOr(ctx, () => parseRate(v)));
const allowList = z.string().transform((v, ctx): AllowList => parseOr(ctx, () => parseAllowList(v)));
const ips = z
  .string()
  .transform((v) =>
    v
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean),
  )
  .refine(
    (list) => list.every((ip) => isIP(ip) !== 0),
    "must be IP addresses separated by commas, such as 127.0.0.1,::1 (not ranges or names)",
  );

export type RoleMap = { group: string; role: "admin" | "member" | "viewer" }[];

/** `group=role,group=role`: what SIGNALBOARD_OIDC_ROLE_MAP says, in its order. */
function parseRoleMap(text: string): RoleMap {
  const map: RoleMap = [];
  for (const pair of text
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean)) {
    const at = pair.lastIndexOf("=");
    const group = pair.slice(0, at).trim();
    const role = pair.slice(at + 1).trim();
    if (at < 0) throw new Error(`must be group=role pairs separated by commas ("${pair}" has no =)`);
    if (!group) throw new Error(`must be group=role pairs separated by commas ("${pair}" has no group)`);
    // "a=admin;b=member" is two pairs with the wrong separator, not a group named "a=admin;b".
    if (group.includes("="))
      throw new Error(`must name one role per group: separate the pairs with commas ("${pair}")`);
    if (role !== "admin" && role !== "member" && role !== "viewer")
      throw new Error(`must map each group to admin, member or viewer ("${pair}")`);
    map.push({ group, role });
  }
  return map;
}
const ranges = z.string().transform((v, ctx): Range[] => parseOr(ctx, () => parseRanges(v)));
/** An HTTP header's name (a token of RFC 9110), compared without case. */
const headerName = z
  .string()
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, "must be an HTTP header's name, such as Remote-User")
  .transform((v) => v.toLowerCase())
  .optional();

function parseOr<T>(ctx: z.RefinementCtx, parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    ctx.addIssue({ code: "custom", message: (err as Error).message });
    return z.NEVER;
  }
}

function spec<T>(env: string, defaultValue: string | undefined, schema: z.ZodType<T>, help: string): Spec<T> {
  return { env, default: defaultValue, schema, help };
}

export const settings = {
  port: spec("PORT", "8080", whole(0, 65535, " (0 picks a free port)"), "TCP port to listen on (0 picks a free port)"),
  host: spec("HOST", "0.0.0.0", z.string().min(1), "interface to listen on"),
  dataDir: spec("DATA_DIR", "./data", z.string().min(1), "directory that holds the SQLite database and backups"),
  databaseUrl: spec(
    "DATABASE_URL",
    undefined,
    z
      .string()
      .regex(
        /^postgres(ql)?:\/\/[^\s]+$/,
        "must be a postgres:// URL, such as postgres://signalboard:secret@db.internal:5432/signalboard",
      )
      .optional(),
    "PostgreSQL, for several instances sharing one database (unset: SQLite in DATA_DIR)",
  ),
  baseUrl: spec(
    "BASE_URL",
    undefined,
    z
      .url({
        protocol: /^https?$/,
        error: "must be an http:// or https:// URL, such as https://signalboard.example.com",
      })
      .optional(),
    "public URL of the dashboard, used in links and notifications (default http://localhost:PORT)",
  ),
  defaultProject: spec(
    "SIGNALBOARD_DEFAULT_PROJECT",
    "default",
    name,
    "project created at first start and used when a metric names none",
  ),
  bodyLimit: spec(
    "SIGNALBOARD_BODY_LIMIT",
    "64KiB",
    bytes,
    "largest request body accepted by the API (bytes, or with KiB/MiB)",
  ),
  otlpBodyLimit: spec(
    "SIGNALBOARD_OTLP_BODY_LIMIT",
    "4MiB",
    bytes.refine((n) => n <= 16 * 1024 * 1024, "must be at most 16MiB"),
    "largest OpenTelemetry export accepted on /otlp/v1/logs and /otlp/v1/metrics, as sent and once unzipped (bytes, or with KiB/MiB)",
  ),
  pingBodyLimit: spec(
    "SIGNALBOARD_PING_BODY_LIMIT",
    "10000",
    bytes.refine((n) => n <= 100 * 1024, "must be at most 100KiB: a larger ping body is refused whole"),
    "how much of a check's ping body is kept as its event's description (bytes, or with KiB); the rest is cut off, and a body over 100 KB is refused",
  ),
  hookBodyLimit: spec(
    "SIGNALBOARD_HOOK_BODY_LIMIT",
    "1MiB",
    bytes.refine((n) => n <= 16 * 1024 * 1024, "must be at most 16MiB"),
    "largest delivery accepted by an inbound webhook (/hooks/<id>; bytes, or with KiB/MiB)",
  ),
  writer: spec(
    "SIGNALBOARD_WRITER",
    "inline",
    oneOf(["inline", "thread"]),
    "inline: ingest's writes run on the request thread (fastest on 2 cores); thread: on a writer thread of their own, for machines with cores to spare",
  ),
  sqliteSync: spec(
    "SIGNALBOARD_SQLITE_SYNC",
    "full",
    oneOf(["full", "normal"]),
    "full: an acknowledged event survives a power loss; normal: it survives a process crash",
  ),
  rateLimitFull: spec(
    "SIGNALBOARD_RATE_LIMIT_FULL",
    "0",
    rate,
    "requests per full-access token (N/s, N/m or N/h); off by default: full tokens are the operator's own, and clients such as LogSnag's do not retry a 429",
  ),
  rateLimitPublic: spec("SIGNALBOARD_RATE_LIMIT_PUBLIC", "60/m", rate, "requests per public token and client IP"),
  rateLimitIp: spec(
    "SIGNALBOARD_RATE_LIMIT_IP",
    "120/m",
    rate,
    "API requests with a missing or bad token, per client IP",
  ),
  rateLimitPing: spec(
    "SIGNALBOARD_RATE_LIMIT_PING",
    "60/m",
    rate,
    "pings per check URL (a UUID, a ping key and slug, or a push token), per instance; 0 turns it off",
  ),
  rateLimitHook: spec(
    "SIGNALBOARD_RATE_LIMIT_HOOK",
    "300/m",
    rate,
    "deliveries per inbound webhook URL (/hooks/<id>), per instance; 0 turns it off",
  ),
  rateLimitLogin: spec("SIGNALBOARD_RATE_LIMIT_LOGIN", "10/m", rate, "failed dashboard logins per client IP"),
  sessionTtl: spec("SIGNALBOARD_SESSION_TTL", "30d", duration, "how long a dashboard sign-in lasts"),
  trustProxy: spec(
    "SIGNALBOARD_TRUST_PROXY",
    "",
    ips,
    "comma-separated IPs of reverse proxies whose X-Forwarded-For is believed",
  ),
  passwordLogin: spec(
    "SIGNALBOARD_PASSWORD_LOGIN",
    "on",
    onOff,
    "off hides the sign-in page's username and password form (the owner keeps a way in: `signalboard user sign-in-link NAME`)",
  ),
  oidcIssuer: spec(
    "SIGNALBOARD_OIDC_ISSUER",
    undefined,
    z
      .url({
        protocol: /^https?$/,
        error: "must be the provider's issuer URL, such as https://auth.example.com/application/o/signalboard/",
      })
      // The discovery document's own URL, pasted from the provider's page, is a common slip: discovery adds it again.
      .superRefine((url, ctx) => {
        const well = /\/\.well-known\/openid-configuration\/?$/;
        if (well.test(new URL(url).pathname))
          ctx.addIssue({
            code: "custom",
            message: `must be the issuer, without /.well-known/openid-configuration: ${url.replace(well, "")}`,
          });
      })
      .optional(),
    "OpenID Connect: the provider's issuer URL, read from its /.well-known/openid-configuration (unset: no single sign-on)",
  ),
  oidcClientId: spec(
    "SIGNALBOARD_OIDC_CLIENT_ID",
    undefined,
    z.string().min(1).optional(),
    "OpenID Connect: the client id the provider gave Signalboard",
  ),
  oidcClientSecret: spec(
    "SIGNALBOARD_OIDC_CLIENT_SECRET",
    undefined,
    z.string().min(1).optional(),
    "OpenID Connect: the client's secret (or _FILE; unset: a public client, with PKCE alone)",
  ),
  oidcScopes: spec(
    "SIGNALBOARD_OIDC_SCOPES",
    "openid profile email",
    z
      .string()
      .transform((v) => v.split(/[\s,]+/).filter(Boolean))
      .refine((scopes) => scopes.includes("openid"), "must include openid, such as openid profile email groups"),
    "OpenID Connect: the scopes asked for, separated by spaces",
  ),
  oidcName: spec(
    "SIGNALBOARD_OIDC_NAME",
    "single sign-on",
    z.string().trim().min(1).max(64),
    'OpenID Connect: the provider\'s name on the sign-in button ("Sign in with NAME")',
  ),
  authProxyHeader: spec(
    "SIGNALBOARD_AUTH_PROXY_HEADER",
    undefined,
    headerName,
    "the header a trusted sign-in proxy names the person in (Remote-User for Authelia, X-Authentik-Username, X-Forwarded-User for oauth2-proxy); needs SIGNALBOARD_AUTH_PROXY_TRUSTED",
  ),
  authProxyTrusted: spec(
    "SIGNALBOARD_AUTH_PROXY_TRUSTED",
    "",
    ranges,
    "comma-separated addresses and CIDR ranges (IPv4 or IPv6) of the sign-in proxies whose SIGNALBOARD_AUTH_PROXY_HEADER is believed; from any other peer it is ignored",
  ),
  oidcDefaultRole: spec(
    "SIGNALBOARD_OIDC_DEFAULT_ROLE",
    "viewer",
    oneOf(["viewer", "member", "admin", "none"]),
    "the role of a person the identity provider or the sign-in proxy names who has no account yet: their account is made with it; none refuses them until an admin adds them (by their e-mail address or username)",
  ),
  oidcRolesClaim: spec(
    "SIGNALBOARD_OIDC_ROLES_CLAIM",
    undefined,
    z.string().trim().min(1).optional(),
    "OpenID Connect: the claim that lists a person's groups or roles, such as groups; with SIGNALBOARD_OIDC_ROLE_MAP the role follows it at every sign-in",
  ),
  oidcRoleMap: spec(
    "SIGNALBOARD_OIDC_ROLE_MAP",
    "",
    z.string().transform((v, ctx) => parseOr(ctx, () => parseRoleMap(v))),
    "OpenID Connect: groups to roles, such as sb-admins=admin,sb-team=member,sb-ro=viewer (the highest a person's groups give wins)",
  ),
  vapidSubject: spec(
    "SIGNALBOARD_VAPID_SUBJECT",
    undefined,
    z
      .string()
      .regex(
        /^(mailto:[^@\s]+@[^@\s]+|https:\/\/\S+)$/,
        "must be a mailto: address or an https: URL, e.g. mailto:you@example.com",
      )
      .optional(),
    "contact for push services, a mailto: or https: URL (default: BASE_URL when https, else mailto:signalboard@example.com)",
  ),
  notifyRetryBase: spec(
    "SIGNALBOARD_NOTIFY_RETRY_BASE",
    "5s",
    duration,
    "first retry delay of a failed notification; each next one waits 3× longer, up to an hour",
  ),
  notifyAttempts: spec(
    "SIGNALBOARD_NOTIFY_ATTEMPTS",
    "8",
    whole(1, 50),
    "attempts per notification before it is given up",
  ),
  smtpUrl: spec(
    "SIGNALBOARD_SMTP_URL",
    undefined,
    z
      .string()
      .regex(
        /^smtps?:\/\/[^\s/]+(:\d+)?\/?(\?\S*)?$/,
        "must be an smtp:// or smtps:// URL, such as smtp://user:password@mail.example.com:587 (STARTTLS), smtps://user:password@mail.example.com:465 or smtp://localhost:25",
      )
      .optional(),
    "the SMTP server that sends e-mail (integrations of kind email, digests): smtp://user:pass@host:587 (STARTTLS when the server offers it), smtps://user:pass@host:465, smtp://host:25 (unset: no e-mail)",
  ),
  smtpFrom: spec(
    "SIGNALBOARD_SMTP_FROM",
    undefined,
    z
      .string()
      .regex(
        /^([^<>@\s][^<>@]*<[^<>@\s]+@[^<>@\s]+>|[^<>@\s]+@[^<>@\s]+)$/,
        'must be an address, such as alerts@example.com or "Signalboard <alerts@example.com>"',
      )
      .optional(),
    "the From of e-mail (default: Signalboard <signalboard@ the host of BASE_URL>)",
  ),
  outboundAllow: spec(
    "SIGNALBOARD_OUTBOUND_ALLOW",
    "",
    allowList,
    "comma-separated addresses, CIDR ranges and host names the server may send to whatever the outbound rules say (this machine, link-local and, for push endpoints, private networks are refused otherwise), such as 127.0.0.1/32 for an ntfy on the same box",
  ),
  outboundPrivate: spec(
    "SIGNALBOARD_OUTBOUND_PRIVATE",
    "allow",
    oneOf(["allow", "deny"]),
    "allow: integrations may send to private networks (a Gotify on the LAN); deny: only what SIGNALBOARD_OUTBOUND_ALLOW lists there",
  ),
  pushMaxAge: spec(
    "SIGNALBOARD_PUSH_MAX_AGE",
    "60d",
    duration,
    "a device not seen for this long stops getting push notifications",
  ),
  queryTimeout: spec(
    "SIGNALBOARD_QUERY_TIMEOUT",
    "10s",
    duration,
    "longest a read may take (a search, a chart, the users list, a history), waiting included; past it the request gets 503 query_timeout and the query is stopped",
  ),
  readers: spec(
    "SIGNALBOARD_READERS",
    "2",
    whole(1, 32),
    "SQLite: reader processes that run the expensive reads, away from the process that acknowledges writes",
  ),
  liveInterval: spec(
    "SIGNALBOARD_LIVE_INTERVAL",
    "250ms",
    duration,
    "how often open dashboards and streams are sent what is new, at most (an event after a quiet moment goes out at once)",
  ),
  alertInterval: spec(
    "SIGNALBOARD_ALERT_INTERVAL",
    "10",
    z.coerce
      .number({ error: "must be a number of seconds" })
      .min(0.05, "must be at least 0.05 seconds")
      .max(3600, "must be at most 3600 seconds"),
    "seconds between two checks of every alert rule (on one instance at a time when several share PostgreSQL)",
  ),
  cardRefresh: spec(
    "SIGNALBOARD_CARD_REFRESH",
    "5s",
    duration,
    "while events arrive, how often a dashboard's charts are worked out again, at most: once per chart, however many people look",
  ),
  metrics: spec(
    "SIGNALBOARD_METRICS",
    "false",
    bool,
    "serve Prometheus metrics at /metrics (scraped with a full-access token)",
  ),
  logLevel: spec(
    "SIGNALBOARD_LOG_LEVEL",
    "info",
    oneOf(["debug", "info", "warn", "error", "silent"]),
    "debug, info, warn, error or silent",
  ),
} satisfies Record<string, Spec<unknown>>;

type Settings = typeof settings;

/** Settings whose values are not repeated in messages. */
const SECRETS = new Set<string>(["databaseUrl", "smtpUrl", "oidcClientSecret"]);

/** A database URL fit for a log line: its password replaced. */
export function safeUrl(url: string): string {
  return url.replace(/^(\w+:\/\/[^:/@]+):[^@]*@/, "$1:***@");
}
export type Config = { [K in keyof Settings]: z.output<Settings[K]["schema"]> } & {
  baseUrl: string;
  vapidSubject: string;
  smtpFrom: string;
};

export class ConfigError extends Error {}

export function flagOf(key: string): string {
  return "--" + key.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase());
}

/** Options for node:util parseArgs, so every command accepts every setting as a flag, and --env-file. */
export function configFlagOptions(): Record<string, { type: "string" }> {
  return Object.fromEntries(
    [...Object.keys(settings).map((key) => flagOf(key).slice(2)), "env-file"].map((name) => [
      name,
      { type: "string" as const },
    ]),
  );
}

/** Flags win over the environment, which wins over the default. `NAME_FILE` reads a secret from a file. */
export function loadConfig(
  flags: Record<string, unknown> = {},
  env: Record<string, string | undefined> = process.env,
): Config {
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [key, s] of Object.entries(settings) as [string, Spec<unknown>][]) {
    const flag = flagOf(key);
    let raw: string | undefined;
    try {
      raw = rawValue(flags[flag.slice(2)], env, s.env);
    } catch (error) {
      problems.push((error as Error).message);
      continue;
    }
    const result = s.schema.safeParse(raw ?? s.default);
    if (result.success) out[key] = result.data;
    else {
      const shown = SECRETS.has(key)
        ? "not valid (its value is not shown: it may hold a password)"
        : JSON.stringify(raw);
      problems.push(`${s.env} (${flag}) is ${shown}: it ${mustBe(result.error.issues[0]!.message)}.`);
    }
  }
  if (problems.length === 1) throw new ConfigError(problems[0]!);
  if (problems.length) throw new ConfigError(`${problems.length} settings are wrong:\n  ${problems.join("\n  ")}`);
  const config = out as Config;
  config.dataDir = resolve(config.dataDir);
  config.baseUrl = (config.baseUrl ?? `http://localhost:${config.port}`).replace(/\/+$/, "");
  config.vapidSubject ??= config.baseUrl.startsWith("https://") ? config.baseUrl : "mailto:signalboard@example.com";
  config.smtpFrom ??= `Signalboard <signalboard@${new URL(config.baseUrl).hostname}>`;
  if (config.smtpUrl) refuseSmtpHost(config);
  refuseHalfOidc(config);
  checkAuthProxy(config);
  return config;
}

/**
 * The SMTP server goes through the outbound rules like any destination: one they refuse by its
 * address or name alone (smtp://localhost:25) is refused here, at start, rather than at every e-mail.
 */
function refuseSmtpHost(config: Config): void {
  const host = hostOf(config.smtpUrl!);
  const verdict = judgeLiteral(
    { allow: config.outboundAllow, privateNetworks: config.outboundPrivate },
    "integration",
    host,
  );
  if (verdict && "refusal" in verdict)
    throw new ConfigError(
      `SIGNALBOARD_SMTP_URL names ${host}, which the outbound rules refuse: ${verdict.refusal.why}. If the SMTP server is there, allow it with SIGNALBOARD_OUTBOUND_ALLOW=${verdict.refusal.allowWith}.`,
    );
}

/** Single sign-on needs both the issuer and the client id; a role map and the claim it reads need each other. */
function refuseHalfOidc(config: Config): void {
  if (config.oidcIssuer && !config.oidcClientId)
    throw new ConfigError(
      "SIGNALBOARD_OIDC_ISSUER is set without SIGNALBOARD_OIDC_CLIENT_ID: set the client id the provider gave.",
    );
  if (!config.oidcIssuer && config.oidcClientId)
    throw new ConfigError(
      "SIGNALBOARD_OIDC_CLIENT_ID is set without SIGNALBOARD_OIDC_ISSUER: set the provider's issuer URL.",
    );
  if (config.oidcRoleMap.length && !config.oidcRolesClaim)
    throw new ConfigError(
      "SIGNALBOARD_OIDC_ROLE_MAP is set without SIGNALBOARD_OIDC_ROLES_CLAIM: name the claim that lists the groups, such as groups.",
    );
  if (config.oidcRolesClaim && !config.oidcRoleMap.length)
    throw new ConfigError(
      "SIGNALBOARD_OIDC_ROLES_CLAIM is set without SIGNALBOARD_OIDC_ROLE_MAP: map groups to roles, such as sb-admins=admin,sb-team=member,sb-ro=viewer (or unset the claim).",
    );
}

/** A sign-in proxy's header is believed only from the proxies listed: one without the other is a mistake. */
function checkAuthProxy(config: Config): void {
  if (config.authProxyHeader && !config.authProxyTrusted.length)
    throw new ConfigError(
      "SIGNALBOARD_AUTH_PROXY_HEADER is set but SIGNALBOARD_AUTH_PROXY_TRUSTED is empty: list the sign-in proxy's addresses or ranges (such as 10.0.0.5 or 172.18.0.0/16), or the header is believed from no one.",
    );
  if (!config.authProxyHeader && config.authProxyTrusted.length)
    throw new ConfigError(
      "SIGNALBOARD_AUTH_PROXY_TRUSTED is set but SIGNALBOARD_AUTH_PROXY_HEADER is not: name the header the proxy sends the username in, such as Remote-User.",
    );
}

/** A schema's message as the end of a sentence that begins "it ": "it must be ...". */
function mustBe(message: string): string {
  if (message.startsWith("must ")) return message;
  if (message.startsWith("expected ")) return `must be ${message.slice("expected ".length)}`;
  return `is wrong: ${message}`;
}

function rawValue(flag: unknown, env: Record<string, string | undefined>, envName: string): string | undefined {
  if (typeof flag === "string") return flag;
  const value = env[envName];
  const file = env[`${envName}_FILE`];
  // Both set is a mistake to point out (a secret moved to a file, the old variable left behind), not a choice to guess.
  if (value && file) throw new ConfigError(`${envName} and ${envName}_FILE are both set: keep one`);
  if (value !== undefined && value !== "") return value;
  return file ? valueFromFile(`${envName}_FILE`, file) : undefined;
}

/** The value a `NAME_FILE` variable points at (the file's text, trimmed). */
export function valueFromFile(variable: string, path: string): string {
  let text: string;
  try {
    text = readFileSync(path, "utf8").trim();
  } catch (error) {
    throw new ConfigError(`${variable} names ${path}, which cannot be read: ${fileProblem(error)}.`);
  }
  if (!text) throw new ConfigError(`${variable} names ${path}, which is empty.`);
  return text;
}

export function describeSettings(): string {
  const rows = Object.entries(settings).map(([key, s]) => {
    const def = s.default === undefined ? "" : s.default === "" ? " (default: none)" : ` (default: ${s.default})`;
    return `  ${(flagOf(key) + " / " + s.env).padEnd(52)} ${s.help}${def}`;
  });
  rows.push(
    `  ${"--env-file FILE".padEnd(52)} read settings from FILE (NAME=value lines); the environment and flags win over it`,
  );
  return rows.join("\n");
}

/** Why a file or directory could not be used, in words (the error code in brackets, for searching). */
export function fileProblem(error: unknown): string {
  const { code, message } = error as NodeJS.ErrnoException;
  const said: Record<string, string> = {
    ENOENT: "there is no such file or directory",
    EACCES: "this user is not allowed to",
    EPERM: "this user is not allowed to",
    EISDIR: "it is a directory",
    ENOTDIR: "a part of the path is a file, not a directory",
    EEXIST: "a file is in the way",
    EROFS: "the file system is read-only",
    ENOSPC: "the disk is full",
  };
  return code && said[code] ? `${said[code]} (${code})` : message;
}
