// The PostgreSQL schema: the same tables and property names as the SQLite one (store/sqlite/
// schema.ts), so both stores speak of the same things. Times are Unix milliseconds (bigint).
// `drizzle-kit generate --config drizzle.pg.config.ts` turns changes here into migrations under
// drizzle/pg/. JSON (tags, properties, filters) is kept as text, as in SQLite: what was sent comes
// back byte for byte, and no driver turns it into something else on the way.
import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  customType,
  doublePrecision,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
} from "drizzle-orm/pg-core";

const millis = (name: string) => bigint(name, { mode: "number" });

/** A tsvector column; only the database writes it (generated from search_text). */
const tsvector = customType<{ data: string }>({ dataType: () => "tsvector" });

export const projects = pgTable("projects", {
  id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
  name: text("name").notNull().unique(),
  retentionDays: integer("retention_days"),
  createdAt: millis("created_at").notNull(),
});

export const channels = pgTable(
  "channels",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    createdAt: millis("created_at").notNull(),
  },
  (t) => [uniqueIndex("channels_project_name").on(t.projectId, t.name)],
);

// Event ids come from event_ids (below), never from a sequence: a sequence hands out numbers in
// the order transactions ask, not the order they commit, and a stream resuming "after id N" would
// skip an event that committed after a higher one. The procedure write_events (drizzle/pg/0002)
// writes them, with their tag rows: a new column here needs a new version of it too.
export const events = pgTable(
  "events",
  {
    id: bigint("id", { mode: "number" }).primaryKey(),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    channelId: integer("channel_id")
      .notNull()
      .references(() => channels.id, { onDelete: "cascade" }),
    name: text("event").notNull(),
    description: text("description"),
    icon: text("icon"),
    notify: boolean("notify").notNull().default(false),
    parser: text("parser", { enum: ["text", "markdown"] })
      .notNull()
      .default("text"),
    userId: text("user_id"),
    tags: text("tags"),
    ts: millis("ts").notNull(),
    receivedAt: millis("received_at").notNull(),
    historical: boolean("historical").notNull().default(false),
    priority: integer("priority").notNull().default(3), // 1 (min) to 5 (urgent)
    // The words of the name and description as the live matcher folds them (store/search-tokens.ts),
    // space-separated; the index takes them as they are, so a search and a live view agree.
    searchText: text("search_text").notNull().default(""),
    search: tsvector("search").generatedAlwaysAs(sql`array_to_tsvector(string_to_array(search_text, ' '))`),
  },
  (t) => [
    index("events_project_ts").on(t.projectId, t.ts, t.id),
    index("events_channel_ts").on(t.channelId, t.ts, t.id),
    index("events_user_ts").on(t.projectId, t.userId, t.ts, t.id).where(sql`${t.userId} IS NOT NULL`),
    index("events_search").using("gin", t.search),
    // Events of one name in a time range, with their user: a funnel's steps and a series of one
    // name read from it alone. (SQLite walks its time index fast enough for these without it.)
    index("events_name_ts").on(t.projectId, t.name, t.ts, t.userId, t.id),
  ],
);

/** The last event id handed out: one row, locked by the batch that inserts events until it commits. */
export const eventIds = pgTable("event_ids", {
  one: boolean("one").primaryKey().default(true),
  lastId: bigint("last_id", { mode: "number" }).notNull(),
});

export const eventTags = pgTable(
  "event_tags",
  {
    projectId: integer("project_id").notNull(),
    key: text("key").notNull(),
    value: text("value").notNull(),
    ts: millis("ts").notNull(),
    eventId: bigint("event_id", { mode: "number" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.key, t.value, t.ts, t.eventId] })],
);

export const metrics = pgTable(
  "metrics",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    title: text("title").notNull(),
    valueNum: doublePrecision("value_num"),
    valueText: text("value_text"),
    icon: text("icon"),
    createdAt: millis("created_at").notNull(),
    updatedAt: millis("updated_at").notNull(),
  },
  (t) => [uniqueIndex("metrics_project_title").on(t.projectId, t.title)],
);

export const metricHistory = pgTable(
  "metric_history",
  {
    metricId: integer("metric_id")
      .notNull()
      .references(() => metrics.id, { onDelete: "cascade" }),
    minute: millis("minute").notNull(),
    valueNum: doublePrecision("value_num"),
    valueText: text("value_text"),
  },
  (t) => [primaryKey({ columns: [t.metricId, t.minute] })],
);

export const profiles = pgTable(
  "profiles",
  {
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    userId: text("user_id").notNull(),
    properties: text("properties").notNull().default("{}"),
    createdAt: millis("created_at").notNull(),
    updatedAt: millis("updated_at").notNull(),
  },
  // profiles_updated: the users page walks a project's profiles by their last identify, newest first.
  (t) => [
    primaryKey({ columns: [t.projectId, t.userId] }),
    index("profiles_updated").on(t.projectId, t.updatedAt, t.userId),
  ],
);

// The users search's index (store/pg/users-search.ts): a row per user and part, the part being
// a property's key, or "" for the user id. A row holds that part's folded words (a property's
// key's words marked with "_", which no folded word starts with) and their tsvector. A row per
// property, not per user: identify rewrites only the properties it sends, and one that leaves a
// property as it was writes nothing. Users known from events have their id's row too.
export const userSearch = pgTable(
  "user_search",
  {
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    userId: text("user_id").notNull(),
    part: text("part").notNull(),
    words: text("words").notNull(),
    search: tsvector("search").generatedAlwaysAs(sql`array_to_tsvector(string_to_array(words, ' '))`),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.userId, t.part] }), index("user_search_words").using("gin", t.search)],
);

export const groups = pgTable(
  "groups",
  {
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    groupId: text("group_id").notNull(),
    properties: text("properties").notNull().default("{}"),
    createdAt: millis("created_at").notNull(),
    updatedAt: millis("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.groupId] })],
);

export const groupMembers = pgTable(
  "group_members",
  {
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    groupId: text("group_id").notNull(),
    userId: text("user_id").notNull(),
    createdAt: millis("created_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.projectId, t.groupId, t.userId] }),
    index("group_members_user").on(t.projectId, t.userId),
  ],
);

export const apiTokens = pgTable("api_tokens", {
  id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
  name: text("name").notNull(),
  kind: text("kind", { enum: ["full", "public"] }).notNull(),
  projectId: integer("project_id").references(() => projects.id, { onDelete: "cascade" }),
  channel: text("channel"),
  prefix: text("prefix").notNull().unique(),
  hash: text("hash").notNull(),
  mayNotify: boolean("may_notify").notNull().default(false),
  createdBy: text("created_by"),
  createdByUserId: integer("created_by_user_id"),
  createdAt: millis("created_at").notNull(),
  lastUsedAt: millis("last_used_at"),
  revokedAt: millis("revoked_at"),
  limited: boolean("limited").notNull().default(false),
});

export const tokenProjects = pgTable(
  "token_projects",
  {
    tokenId: integer("token_id")
      .notNull()
      .references(() => apiTokens.id, { onDelete: "cascade" }),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.tokenId, t.projectId] }), index("token_projects_project").on(t.projectId)],
);

export const meta = pgTable("meta", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
});

export const users = pgTable("users", {
  id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
  username: text("username").notNull().unique(),
  passwordHash: text("password_hash").notNull(),
  role: text("role", { enum: ["owner", "admin", "member", "viewer"] }).notNull(),
  createdAt: millis("created_at").notNull(),
  updatedAt: millis("updated_at").notNull(),
  limited: boolean("limited").notNull().default(false),
  oidcSubject: text("oidc_subject").unique(),
});

export const userProjects = pgTable(
  "user_projects",
  {
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.userId, t.projectId] }), index("user_projects_project").on(t.projectId)],
);

// A person's TOTP authenticator: its secret (base32, as otpauth takes it), when it was confirmed
// with a code (null while being set up), and the last 30-second step a code was accepted for, so a
// code is never taken twice.
export const totpFactors = pgTable("totp_factors", {
  userId: integer("user_id")
    .primaryKey()
    .references(() => users.id, { onDelete: "cascade" }),
  secret: text("secret").notNull(),
  confirmedAt: millis("confirmed_at"),
  lastStep: bigint("last_step", { mode: "number" }),
  createdAt: millis("created_at").notNull(),
});

// The recovery codes of a person's second factor, as SHA-256 hashes; each is used once.
export const recoveryCodes = pgTable(
  "recovery_codes",
  {
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    codeHash: text("code_hash").notNull(),
    usedAt: millis("used_at"),
  },
  (t) => [primaryKey({ columns: [t.userId, t.codeHash] })],
);

// The half-signed-in: a right password whose second step (a code, or setting a factor up) is still
// to come. Not a session: it opens nothing but that step, and expires within minutes.
export const signInChallenges = pgTable(
  "sign_in_challenges",
  {
    tokenHash: text("token_hash").primaryKey(),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    // "verify" (a factor is there: ask for its code) or "enroll" (required but missing: set one up).
    purpose: text("purpose", { enum: ["verify", "enroll", "link"] }).notNull(),
    // The secret offered while setting up, until it is confirmed.
    secret: text("secret"),
    next: text("next").notNull(),
    createdAt: millis("created_at").notNull(),
    expiresAt: millis("expires_at").notNull(),
  },
  (t) => [index("sign_in_challenges_expiry").on(t.expiresAt)],
);

// A person's passkeys (WebAuthn credentials): a second factor after the password, and a way to
// sign in without one. The credential's id and COSE public key are base64url; `counter` is the
// authenticator's signature counter (a value that goes backwards is a cloned key).
export const passkeys = pgTable(
  "passkeys",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    credentialId: text("credential_id").notNull().unique(),
    publicKey: text("public_key").notNull(),
    counter: bigint("counter", { mode: "number" }).notNull().default(0),
    // The transports the browser named (comma-separated: "internal,hybrid"), a hint for sign-in.
    transports: text("transports"),
    name: text("name").notNull(),
    createdAt: millis("created_at").notNull(),
    lastUsedAt: millis("last_used_at"),
  },
  (t) => [index("passkeys_user").on(t.userId)],
);

// WebAuthn challenges handed out and not yet answered: each is taken once (deleted as it is
// checked) and expires within minutes. `user_id` is null for a sign-in with a passkey alone (the
// passkey names the person).
export const passkeyChallenges = pgTable(
  "passkey_challenges",
  {
    challenge: text("challenge").primaryKey(),
    purpose: text("purpose", { enum: ["register", "second_step", "sign_in"] }).notNull(),
    userId: integer("user_id").references(() => users.id, { onDelete: "cascade" }),
    createdAt: millis("created_at").notNull(),
    expiresAt: millis("expires_at").notNull(),
  },
  (t) => [index("passkey_challenges_expiry").on(t.expiresAt)],
);

export const auditLog = pgTable(
  "audit_log",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    at: millis("at").notNull(),
    action: text("action").notNull(),
    actor: text("actor").notNull(),
    actorUserId: integer("actor_user_id"),
    ip: text("ip"),
    subject: text("subject").notNull(),
    detail: text("detail"),
  },
  (t) => [index("audit_log_at").on(t.at)],
);

export const sessions = pgTable(
  "sessions",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    tokenHash: text("token_hash").notNull().unique(),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    csrfToken: text("csrf_token").notNull(),
    createdAt: millis("created_at").notNull(),
    expiresAt: millis("expires_at").notNull(),
  },
  (t) => [index("sessions_user").on(t.userId), index("sessions_expiry").on(t.expiresAt)],
);

export const pushSubscriptions = pgTable(
  "push_subscriptions",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    endpoint: text("endpoint").notNull().unique(),
    p256dh: text("p256dh").notNull(),
    auth: text("auth").notNull(),
    deviceName: text("device_name").notNull(),
    filters: text("filters"),
    // Also limited to events with these tags (a JSON object of key → value), and of this priority or more.
    tags: text("tags"),
    minPriority: integer("min_priority").notNull().default(1),
    createdAt: millis("created_at").notNull(),
    refreshedAt: millis("refreshed_at").notNull(),
    lastSuccessAt: millis("last_success_at"),
    lastError: text("last_error"),
    lastErrorAt: millis("last_error_at"),
  },
  (t) => [index("push_subscriptions_user").on(t.userId)],
);

export const integrations = pgTable(
  "integrations",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    // The name of a kind in domain/integration-kinds/registry.ts (a kind is added there, not here).
    kind: text("kind").notNull(),
    name: text("name").notNull(),
    // The kind's settings as JSON: what may be shown (a URL, a chat id, recipients) in `config`,
    // what may not (tokens, signing keys, URLs that are secrets) in `secrets`, never shown again.
    config: text("config").notNull().default("{}"),
    secrets: text("secrets").notNull().default("{}"),
    // Which notify events it gets (JSON: channels, exclude_channels, tags, min_priority; null: all
    // of its project's), and its own title and body templates (JSON; null: the default wording).
    filter: text("filter"),
    template: text("template"),
    enabled: boolean("enabled").notNull().default(true),
    createdByUserId: integer("created_by_user_id"),
    createdAt: millis("created_at").notNull(),
    lastSuccessAt: millis("last_success_at"),
    lastError: text("last_error"),
    lastErrorAt: millis("last_error_at"),
  },
  (t) => [index("integrations_project").on(t.projectId)],
);

// The delivery queue, shared by every instance: a worker claims due deliveries with a lease
// (FOR UPDATE SKIP LOCKED, so two never claim the same one), and settles one only while its lease
// is its own; a lease that runs out (its instance died) makes the delivery due again.
export const deliveries = pgTable(
  "deliveries",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
    target: text("target", { enum: ["push", "integration", "digest"] }).notNull(),
    targetId: integer("target_id").notNull(),
    eventId: bigint("event_id", { mode: "number" }),
    payload: text("payload").notNull(),
    status: text("status", { enum: ["pending", "sent", "failed", "gone"] })
      .notNull()
      .default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: millis("next_attempt_at").notNull(),
    lastError: text("last_error"),
    createdAt: millis("created_at").notNull(),
    finishedAt: millis("finished_at"),
    leaseOwner: text("lease_owner"),
    leaseUntil: millis("lease_until"),
  },
  (t) => [index("deliveries_due").on(t.status, t.nextAttemptAt), index("deliveries_target").on(t.target, t.targetId)],
);

export const deliveryAttempts = pgTable(
  "delivery_attempts",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
    deliveryId: bigint("delivery_id", { mode: "number" })
      .notNull()
      .references(() => deliveries.id, { onDelete: "cascade" }),
    at: millis("at").notNull(),
    ok: boolean("ok").notNull(),
    status: integer("status"),
    error: text("error"),
  },
  (t) => [index("delivery_attempts_delivery").on(t.deliveryId)],
);

// A project's daily or weekly summary, sent at `hour` (and on `weekday`, 1 Monday to 7 Sunday) in
// `timeZone` to some of its integrations (JSON list of ids) and e-mail addresses (JSON list).
// `lastPeriod` names the last period sent ("2026-03-02"): it moves in the transaction that queues
// the period's deliveries, only from another value, so a period is sent once across restarts and
// instances.
export const digests = pgTable(
  "digests",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    frequency: text("frequency", { enum: ["daily", "weekly"] }).notNull(),
    hour: integer("hour").notNull(),
    weekday: integer("weekday"),
    timeZone: text("time_zone").notNull(),
    integrationIds: text("integration_ids").notNull().default("[]"),
    emails: text("emails").notNull().default("[]"),
    enabled: boolean("enabled").notNull().default(true),
    createdAt: millis("created_at").notNull(),
    lastPeriod: text("last_period"),
    lastSentAt: millis("last_sent_at"),
    lastSuccessAt: millis("last_success_at"),
    lastError: text("last_error"),
    lastErrorAt: millis("last_error_at"),
  },
  (t) => [index("digests_project").on(t.projectId)],
);

export const idempotencyKeys = pgTable(
  "idempotency_keys",
  {
    tokenId: integer("token_id").notNull(),
    key: text("key").notNull(),
    fingerprint: text("fingerprint").notNull(),
    response: text("response").notNull(),
    createdAt: millis("created_at").notNull(),
    expiresAt: millis("expires_at"),
  },
  (t) => [
    primaryKey({ columns: [t.tokenId, t.key] }),
    index("idempotency_keys_created").on(t.createdAt),
    index("idempotency_keys_expires").on(t.expiresAt),
  ],
);

/** Fixed-window counters shared by every instance (sign-in attempts per address). */
export const rateLimits = pgTable("rate_limits", {
  key: text("key").primaryKey(),
  windowStart: millis("window_start").notNull(),
  count: integer("count").notNull(),
});

// Saved charts and funnels of a project (domain/charts.ts): the question as JSON (the API's own
// parameters).
export const charts = pgTable(
  "charts",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: ["series", "funnel", "metric", "retention"] }).notNull(),
    name: text("name").notNull(),
    definition: text("definition").notNull(),
    createdAt: millis("created_at").notNull(),
    updatedAt: millis("updated_at").notNull(),
  },
  (t) => [index("charts_project").on(t.projectId)],
);

// A project's inbound webhooks (domain/hooks.ts): POST /hooks/<id> from Stripe, GitHub, Alertmanager
// or anything sending JSON. The id is the URL's secret part; `secret` verifies signatures and is
// never shown again; `config` is the kind's own settings as JSON (generic: its mapping and header).
export const hooks = pgTable(
  "hooks",
  {
    id: text("id").primaryKey(),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: ["stripe", "github", "alertmanager", "generic"] }).notNull(),
    name: text("name").notNull(),
    channel: text("channel").notNull(),
    secret: text("secret"),
    config: text("config").notNull(),
    createdAt: millis("created_at").notNull(),
  },
  (t) => [index("hooks_project").on(t.projectId)],
);

// A project's dashboard as its team arranged it: the cards in order, as JSON (model/chart.ts
// CardRef: "activity" or a chart's id). No row: the default, the activity chart alone.
export const dashboards = pgTable("dashboards", {
  projectId: integer("project_id")
    .primaryKey()
    .references(() => projects.id, { onDelete: "cascade" }),
  cards: text("cards").notNull(),
  updatedAt: millis("updated_at").notNull(),
});

// Alert rules (domain/alerts.ts): what each expects, and its state, changed in the transaction
// that records the change as an event (so a notice happens once, whichever instance sees it).
export const alerts = pgTable(
  "alerts",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    kind: text("kind", { enum: ["absence", "count", "metric"] }).notNull(),
    filter: text("filter").notNull(),
    period: bigint("period", { mode: "number" }),
    cron: text("cron"),
    tz: text("tz"),
    grace: bigint("grace", { mode: "number" }).notNull(),
    window: bigint("window", { mode: "number" }),
    metric: text("metric"),
    above: doublePrecision("above"),
    below: doublePrecision("below"),
    repeat: bigint("repeat", { mode: "number" }),
    paused: boolean("paused").notNull(),
    state: text("state", { enum: ["ok", "firing"] }).notNull(),
    since: millis("since").notNull(),
    lastChecked: millis("last_checked"),
    lastNotified: millis("last_notified"),
    createdAt: millis("created_at").notNull(),
    updatedAt: millis("updated_at").notNull(),
    // Quiet (domain/quiet.ts): notify only after this many rounds firing in a row (the streak, counted
    // up to it), and what the last notice told ("ok" or "firing"), so a late notice goes out once.
    notifyAfter: integer("notify_after").notNull().default(1),
    streak: integer("streak").notNull().default(0),
    notified: text("notified", { enum: ["ok", "firing"] })
      .notNull()
      .default("ok"),
  },
  (t) => [index("alerts_project").on(t.projectId)],
);

// Checks (domain/checks.ts), the same table as SQLite's (store/sqlite/schema.ts says why it is so).
export const checks = pgTable(
  "checks",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    slug: text("slug").notNull(),
    uuid: text("uuid").notNull(),
    pushToken: text("push_token").notNull(),
    channel: text("channel").notNull(),
    period: bigint("period", { mode: "number" }),
    cron: text("cron"),
    tz: text("tz"),
    grace: bigint("grace", { mode: "number" }).notNull(),
    paused: boolean("paused").notNull(),
    state: text("state", { enum: ["new", "up", "started", "down", "paused"] }).notNull(),
    since: millis("since").notNull(),
    lastPing: millis("last_ping"),
    lastStart: millis("last_start"),
    lastStartRid: text("last_start_rid"),
    runs: text("runs").notNull(),
    nextDue: millis("next_due"),
    lastDuration: millis("last_duration"),
    createdAt: millis("created_at").notNull(),
    updatedAt: millis("updated_at").notNull(),
    // Quiet (domain/quiet.ts): notify after this many failures in a row (the streak, counted up to
    // it; counted: when it last counted one), and what the last notice told ("up" or "down").
    notifyAfter: integer("notify_after").notNull().default(1),
    streak: integer("streak").notNull().default(0),
    notified: text("notified", { enum: ["up", "down"] })
      .notNull()
      .default("up"),
    counted: millis("counted"),
  },
  (t) => [
    uniqueIndex("checks_uuid").on(t.uuid),
    uniqueIndex("checks_push_token").on(t.pushToken),
    index("checks_project_slug").on(t.projectId, t.slug),
    index("checks_next_due").on(t.nextDue),
  ],
);

// A project's ping key (store/sqlite/schema.ts).
export const checkKeys = pgTable(
  "check_keys",
  {
    projectId: integer("project_id")
      .primaryKey()
      .references(() => projects.id, { onDelete: "cascade" }),
    pingKey: text("ping_key").notNull(),
    createdAt: millis("created_at").notNull(),
    // The secret of the project's public status badges (/badge/<badge key>/...); null until one is asked for.
    badgeKey: text("badge_key"),
  },
  (t) => [uniqueIndex("check_keys_ping_key").on(t.pingKey), uniqueIndex("check_keys_badge_key").on(t.badgeKey)],
);

// Maintenance windows (domain/maintenance.ts): when a project's rules record changes of state but
// notify nobody. One-off (starts_at, ends_at) or recurring (cron in tz, for length ms).
export const maintenanceWindows = pgTable(
  "maintenance_windows",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    startsAt: millis("starts_at"),
    endsAt: millis("ends_at"),
    cron: text("cron"),
    tz: text("tz"),
    length: bigint("length", { mode: "number" }),
    createdAt: millis("created_at").notNull(),
  },
  (t) => [index("maintenance_windows_project").on(t.projectId)],
);

// Shared pages (domain/shares.ts): a project's chosen cards (a dashboard) or chosen checks, alert
// rules and metrics (a status page), shown without sign-in at /s/<key>. The key is the capability:
// 32 random bytes, URL-safe; the chosen ids are JSON lists. A revoked share answers 404 at once.
// A status page's 90 days are days in its time zone.
export const shares = pgTable(
  "shares",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    kind: text("kind").notNull(),
    key: text("key").notNull(),
    charts: text("charts").notNull(),
    checks: text("checks").notNull(),
    alerts: text("alerts").notNull(),
    metrics: text("metrics").notNull(),
    title: text("title").notNull(),
    text: text("text").notNull(),
    /** A status page's days are this zone's (an IANA name). */
    timeZone: text("time_zone").notNull().default("UTC"),
    createdBy: text("created_by").notNull(),
    createdAt: millis("created_at").notNull(),
    revokedAt: millis("revoked_at"),
  },
  (t) => [uniqueIndex("shares_key").on(t.key), index("shares_project").on(t.projectId)],
);

// Summaries of the events (store/summary/deltas.ts), the same tables as SQLite's (drizzle/sqlite/
// 0014_summaries.sql): kept by a trigger on events in the statement that inserts them, so every
// writer keeps them (drizzle/pg/0008_summaries.sql); built in the background for events from before
// them. Events per hour of each channel and name ('' once a project's names are too many).
export const eventCounts = pgTable(
  "event_counts",
  {
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    hour: integer("hour").notNull(),
    channelId: integer("channel_id").notNull(),
    name: text("event").notNull(),
    n: integer("n").notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.hour, t.channelId, t.name] })],
);

/** Events per hour with each value of a tag. */
export const tagCounts = pgTable(
  "tag_counts",
  {
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    key: text("key").notNull(),
    value: text("value").notNull(),
    hour: integer("hour").notNull(),
    n: integer("n").notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.key, t.value, t.hour] })],
);

const dayColumns = Object.fromEntries(
  Array.from({ length: 31 }, (_, i) => [`d${i}`, integer(`d${i}`).notNull().default(0)]),
) as Record<`d${number}`, ReturnType<typeof integer>>;

/** Who was active when: per user and UTC month, a bit per day (days) and per hour of each day (d0 … d30). */
export const activity = pgTable(
  "activity",
  {
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    kind: integer("kind").notNull(),
    key: text("key").notNull(),
    value: text("value").notNull(),
    month: integer("month").notNull(),
    userId: text("user_id").notNull(),
    days: integer("days").notNull().default(0),
    ...dayColumns,
  },
  (t) => [primaryKey({ columns: [t.projectId, t.kind, t.key, t.value, t.month, t.userId] })],
);

/** How many values each tag key (kind 1) and the event names (kind 2) have had, up to the limit past which they are not summarized. */
export const summaryKeys = pgTable(
  "summary_keys",
  {
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    kind: integer("kind").notNull(),
    key: text("key").notNull(),
    n: integer("n").notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.kind, t.key] })],
);

export const summaryValues = pgTable(
  "summary_values",
  {
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    kind: integer("kind").notNull(),
    key: text("key").notNull(),
    value: text("value").notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.kind, t.key, t.value] })],
);

/** Projects whose summaries are being built from their events, and how far (as SQLite's: store/sqlite/summaries.ts). */
export const summaryBuilds = pgTable("summary_builds", {
  projectId: integer("project_id")
    .primaryKey()
    .references(() => projects.id, { onDelete: "cascade" }),
  through: bigint("through", { mode: "number" }).notNull().default(0),
  counted: integer("counted").notNull().default(0),
  activeThrough: bigint("active_through", { mode: "number" }),
  activeUser: text("active_user"),
  activeTs: bigint("active_ts", { mode: "number" }),
  activeId: bigint("active_id", { mode: "number" }),
  activeDone: integer("active_done").notNull().default(0),
});
