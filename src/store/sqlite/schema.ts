// The Drizzle schema. Times are Unix milliseconds in INTEGER columns. `drizzle-kit generate`
// turns changes here into SQL migrations under drizzle/. Two tables Drizzle cannot express (a
// WITHOUT ROWID tag index and the FTS5 search index) are hand-written: see manual-tables.ts.
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export const projects = sqliteTable("projects", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  name: text("name").notNull().unique(),
  retentionDays: integer("retention_days"),
  createdAt: integer("created_at").notNull(),
});

export const channels = sqliteTable(
  "channels",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("channels_project_name").on(t.projectId, t.name)],
);

export const events = sqliteTable(
  "events",
  {
    // AUTOINCREMENT: ids are never reused, so an SSE Last-Event-ID can never point at a newer event.
    id: integer("id").primaryKey({ autoIncrement: true }),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    channelId: integer("channel_id")
      .notNull()
      .references(() => channels.id, { onDelete: "cascade" }),
    name: text("event").notNull(),
    description: text("description"),
    icon: text("icon"),
    notify: integer("notify", { mode: "boolean" }).notNull().default(false),
    parser: text("parser", { enum: ["text", "markdown"] })
      .notNull()
      .default("text"),
    userId: text("user_id"),
    tags: text("tags"), // the JSON object as sent (typed values); event_tags indexes it for filters
    ts: integer("ts").notNull(), // event time: the client's timestamp, else the receive time
    receivedAt: integer("received_at").notNull(),
    historical: integer("historical", { mode: "boolean" }).notNull().default(false),
    priority: integer("priority").notNull().default(3), // 1 (min) to 5 (urgent)
  },
  (t) => [
    index("events_project_ts").on(t.projectId, t.ts, t.id),
    index("events_channel_ts").on(t.channelId, t.ts, t.id),
    index("events_user_ts").on(t.projectId, t.userId, t.ts, t.id).where(sql`${t.userId} IS NOT NULL`),
  ],
);

export const metrics = sqliteTable(
  "metrics",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    title: text("title").notNull(),
    valueNum: real("value_num"),
    valueText: text("value_text"),
    icon: text("icon"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [uniqueIndex("metrics_project_title").on(t.projectId, t.title)],
);

// One row per metric per minute holding the last value seen in that minute: charts stay exact at
// the resolution they draw, and a metric incremented thousands of times a second stays small.
export const metricHistory = sqliteTable(
  "metric_history",
  {
    metricId: integer("metric_id")
      .notNull()
      .references(() => metrics.id, { onDelete: "cascade" }),
    minute: integer("minute").notNull(),
    valueNum: real("value_num"),
    valueText: text("value_text"),
  },
  (t) => [primaryKey({ columns: [t.metricId, t.minute] })],
);

export const profiles = sqliteTable(
  "profiles",
  {
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    userId: text("user_id").notNull(),
    properties: text("properties").notNull().default("{}"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  // profiles_updated: the users page walks a project's profiles by their last identify, newest first.
  (t) => [
    primaryKey({ columns: [t.projectId, t.userId] }),
    index("profiles_updated").on(t.projectId, t.updatedAt, t.userId),
  ],
);

// Users whose searchable text may have changed (written by triggers: a profile inserted, changed
// or deleted; a project deleted, with user_id null), in order, for the indexer of the users search
// (users-index.ts), which keeps its place in search.db. Records it has passed are pruned.
export const profileChanges = sqliteTable("profile_changes", {
  seq: integer("seq").primaryKey({ autoIncrement: true }),
  projectId: integer("project_id").notNull(),
  userId: text("user_id"),
});

export const groups = sqliteTable(
  "groups",
  {
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    groupId: text("group_id").notNull(),
    properties: text("properties").notNull().default("{}"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.groupId] })],
);

export const groupMembers = sqliteTable(
  "group_members",
  {
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    groupId: text("group_id").notNull(),
    userId: text("user_id").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.projectId, t.groupId, t.userId] }),
    index("group_members_user").on(t.projectId, t.userId),
  ],
);

export const apiTokens = sqliteTable("api_tokens", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  name: text("name").notNull(),
  kind: text("kind", { enum: ["full", "public"] }).notNull(),
  projectId: integer("project_id").references(() => projects.id, { onDelete: "cascade" }),
  channel: text("channel"),
  prefix: text("prefix").notNull().unique(), // the first characters of the token, shown in lists
  hash: text("hash").notNull(), // SHA-256 of the whole token; the token itself is never stored
  // Public tokens live in web pages: only those allowed may make events that push to every device.
  mayNotify: integer("may_notify", { mode: "boolean" }).notNull().default(false),
  // Who made it: a dashboard member (kept by name if they are removed), or null for the command line.
  createdBy: text("created_by"),
  createdByUserId: integer("created_by_user_id"),
  createdAt: integer("created_at").notNull(),
  lastUsedAt: integer("last_used_at"),
  revokedAt: integer("revoked_at"),
  // A full-access token made by someone limited to some projects reaches only those (token_projects).
  limited: integer("limited", { mode: "boolean" }).notNull().default(false),
});

// The projects a limited full-access token reaches; a deleted project leaves its tokens' lists.
export const tokenProjects = sqliteTable(
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

// Small named values the server keeps for itself (keys, the search index's lineage).
export const meta = sqliteTable("meta", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
});

// Dashboard accounts. Usernames are stored lowercase; passwords only as Bun.password hashes.
export const users = sqliteTable("users", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  username: text("username").notNull().unique(),
  passwordHash: text("password_hash").notNull(),
  // owner, admin, member or viewer (accounts made before roles were "member" and became admins).
  role: text("role", { enum: ["owner", "admin", "member", "viewer"] }).notNull(),
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at").notNull(),
  // Limited to the projects of user_projects; otherwise every project.
  limited: integer("limited", { mode: "boolean" }).notNull().default(false),
  // The OpenID provider's `sub` for this person, once they signed in with it (SIGNALBOARD_OIDC_ISSUER).
  oidcSubject: text("oidc_subject").unique(),
});

// The projects a limited user may see; a deleted project leaves its users' lists.
export const userProjects = sqliteTable(
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
export const totpFactors = sqliteTable("totp_factors", {
  userId: integer("user_id")
    .primaryKey()
    .references(() => users.id, { onDelete: "cascade" }),
  secret: text("secret").notNull(),
  confirmedAt: integer("confirmed_at"),
  lastStep: integer("last_step"),
  createdAt: integer("created_at").notNull(),
});

// The recovery codes of a person's second factor, as SHA-256 hashes; each is used once.
export const recoveryCodes = sqliteTable(
  "recovery_codes",
  {
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    codeHash: text("code_hash").notNull(),
    usedAt: integer("used_at"),
  },
  (t) => [primaryKey({ columns: [t.userId, t.codeHash] })],
);

// The half-signed-in: a right password whose second step (a code, or setting a factor up) is still
// to come. Not a session: it opens nothing but that step, and expires within minutes.
export const signInChallenges = sqliteTable(
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
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [index("sign_in_challenges_expiry").on(t.expiresAt)],
);

// A person's passkeys (WebAuthn credentials): a second factor after the password, and a way to
// sign in without one. The credential's id and COSE public key are base64url; `counter` is the
// authenticator's signature counter (a value that goes backwards is a cloned key).
export const passkeys = sqliteTable(
  "passkeys",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    credentialId: text("credential_id").notNull().unique(),
    publicKey: text("public_key").notNull(),
    counter: integer("counter").notNull().default(0),
    // The transports the browser named (comma-separated: "internal,hybrid"), a hint for sign-in.
    transports: text("transports"),
    name: text("name").notNull(),
    createdAt: integer("created_at").notNull(),
    lastUsedAt: integer("last_used_at"),
  },
  (t) => [index("passkeys_user").on(t.userId)],
);

// WebAuthn challenges handed out and not yet answered: each is taken once (deleted as it is
// checked) and expires within minutes. `user_id` is null for a sign-in with a passkey alone (the
// passkey names the person).
export const passkeyChallenges = sqliteTable(
  "passkey_challenges",
  {
    challenge: text("challenge").primaryKey(),
    purpose: text("purpose", { enum: ["register", "second_step", "sign_in"] }).notNull(),
    userId: integer("user_id").references(() => users.id, { onDelete: "cascade" }),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [index("passkey_challenges_expiry").on(t.expiresAt)],
);

// The audit trail: sign-ins, tokens, members, deleted projects, retention, integrations and alert
// rules, with who, when (Unix ms) and from where. The newest 10,000 are kept (housekeeping).
// `actor` is a name as it was then (a removed member's entries keep it).
export const auditLog = sqliteTable(
  "audit_log",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    at: integer("at").notNull(),
    action: text("action").notNull(),
    actor: text("actor").notNull(),
    actorUserId: integer("actor_user_id"),
    ip: text("ip"),
    subject: text("subject").notNull(),
    detail: text("detail"),
  },
  (t) => [index("audit_log_at").on(t.at)],
);

// Dashboard sessions. The cookie holds a random id; only its SHA-256 is stored, so a copy of the
// database does not let anyone in. Each session has its own CSRF token.
export const sessions = sqliteTable(
  "sessions",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    tokenHash: text("token_hash").notNull().unique(),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    csrfToken: text("csrf_token").notNull(),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [index("sessions_user").on(t.userId), index("sessions_expiry").on(t.expiresAt)],
);

// Web Push subscriptions, one per device a user enabled. `filters` is null for "every project",
// or a JSON list of {project, channels: string[] | null}. `refreshedAt` moves whenever the device
// shows up again; subscriptions not seen for long are pruned (some push services keep answering
// 201 for endpoints that will never deliver again).
export const pushSubscriptions = sqliteTable(
  "push_subscriptions",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
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
    createdAt: integer("created_at").notNull(),
    refreshedAt: integer("refreshed_at").notNull(),
    lastSuccessAt: integer("last_success_at"),
    lastError: text("last_error"),
    lastErrorAt: integer("last_error_at"),
  },
  (t) => [index("push_subscriptions_user").on(t.userId)],
);

// Outbound integrations of a project: e-mail, Telegram, Gotify, Pushover, Matrix, a signed JSON
// webhook, an ntfy topic, Discord, Slack (domain/integration-kinds/ says what each one holds).
export const integrations = sqliteTable(
  "integrations",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
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
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    // The member who added it (no foreign key: kept when they are removed), null from before this was recorded.
    createdByUserId: integer("created_by_user_id"),
    createdAt: integer("created_at").notNull(),
    lastSuccessAt: integer("last_success_at"),
    lastError: text("last_error"),
    lastErrorAt: integer("last_error_at"),
  },
  (t) => [index("integrations_project").on(t.projectId)],
);

// The delivery queue. A notify event's deliveries are inserted in the same transaction as the
// event, so an acknowledged event's notifications survive a crash; the notifier sends them off the
// request path, retries with backoff, and records every attempt.
export const deliveries = sqliteTable(
  "deliveries",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    target: text("target", { enum: ["push", "integration", "digest"] }).notNull(),
    targetId: integer("target_id").notNull(),
    eventId: integer("event_id"),
    payload: text("payload").notNull(),
    status: text("status", { enum: ["pending", "sent", "failed", "gone"] })
      .notNull()
      .default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: integer("next_attempt_at").notNull(),
    lastError: text("last_error"),
    createdAt: integer("created_at").notNull(),
    finishedAt: integer("finished_at"),
    // Who is sending it, until when: a claim (notifications.claim) leases it; settling ends the lease.
    leaseOwner: text("lease_owner"),
    leaseUntil: integer("lease_until"),
  },
  (t) => [index("deliveries_due").on(t.status, t.nextAttemptAt), index("deliveries_target").on(t.target, t.targetId)],
);

export const deliveryAttempts = sqliteTable(
  "delivery_attempts",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    deliveryId: integer("delivery_id")
      .notNull()
      .references(() => deliveries.id, { onDelete: "cascade" }),
    at: integer("at").notNull(),
    ok: integer("ok", { mode: "boolean" }).notNull(),
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
export const digests = sqliteTable(
  "digests",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
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
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    createdAt: integer("created_at").notNull(),
    lastPeriod: text("last_period"),
    lastSentAt: integer("last_sent_at"),
    lastSuccessAt: integer("last_success_at"),
    lastError: text("last_error"),
    lastErrorAt: integer("last_error_at"),
  },
  (t) => [index("digests_project").on(t.projectId)],
);

// Idempotency-Key: the first answer to a request, kept until expires_at (a day for a client's key,
// longer for a webhook's delivery, which its service may send again days later), so a retry gets
// that answer back instead of storing the event twice. Keyed per token. A key written by a binary
// older than expires_at has none: it is kept a day from created_at.
export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    tokenId: integer("token_id").notNull(),
    key: text("key").notNull(),
    fingerprint: text("fingerprint").notNull(),
    response: text("response").notNull(),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at"),
  },
  (t) => [
    primaryKey({ columns: [t.tokenId, t.key] }),
    index("idempotency_keys_created").on(t.createdAt),
    index("idempotency_keys_expires").on(t.expiresAt),
  ],
);

// Saved charts and funnels of a project (domain/charts.ts): the question as JSON (the API's own
// parameters).
export const charts = sqliteTable(
  "charts",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: ["series", "funnel", "metric", "retention"] }).notNull(),
    name: text("name").notNull(),
    definition: text("definition").notNull(),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("charts_project").on(t.projectId)],
);

// A project's inbound webhooks (domain/hooks.ts): POST /hooks/<id> from Stripe, GitHub, Alertmanager
// or anything sending JSON. The id is the URL's secret part; `secret` verifies signatures and is
// never shown again; `config` is the kind's own settings as JSON (generic: its mapping and header).
export const hooks = sqliteTable(
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
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("hooks_project").on(t.projectId)],
);

// A project's dashboard as its team arranged it: the cards in order, as JSON (model/chart.ts
// CardRef: "activity" or a chart's id). No row: the default, the activity chart alone.
export const dashboards = sqliteTable("dashboards", {
  projectId: integer("project_id")
    .primaryKey()
    .references(() => projects.id, { onDelete: "cascade" }),
  cards: text("cards").notNull(),
  updatedAt: integer("updated_at").notNull(),
});

// Alert rules (domain/alerts.ts): what each expects, and its state, changed in the transaction
// that records the change as an event (so a notice happens once).
export const alerts = sqliteTable(
  "alerts",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    kind: text("kind", { enum: ["absence", "count", "metric"] }).notNull(),
    filter: text("filter").notNull(),
    period: integer("period"),
    cron: text("cron"),
    tz: text("tz"),
    grace: integer("grace").notNull(),
    window: integer("window"),
    metric: text("metric"),
    above: real("above"),
    below: real("below"),
    repeat: integer("repeat"),
    paused: integer("paused", { mode: "boolean" }).notNull(),
    state: text("state", { enum: ["ok", "firing"] }).notNull(),
    since: integer("since").notNull(),
    lastChecked: integer("last_checked"),
    lastNotified: integer("last_notified"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
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

// Checks (domain/checks.ts): what each expects of its pings and what they made of it, changed with
// the ping's event in one transaction. Silence is found by next_due (the round reads the due ones
// in its order); a slug is unique in its project by the service, not here, so a duplicate left by
// hand answers 409 rather than picking one.
export const checks = sqliteTable(
  "checks",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    slug: text("slug").notNull(),
    uuid: text("uuid").notNull(),
    pushToken: text("push_token").notNull(),
    channel: text("channel").notNull(),
    period: integer("period"),
    cron: text("cron"),
    tz: text("tz"),
    grace: integer("grace").notNull(),
    paused: integer("paused", { mode: "boolean" }).notNull(),
    state: text("state", { enum: ["new", "up", "started", "down", "paused"] }).notNull(),
    since: integer("since").notNull(),
    lastPing: integer("last_ping"),
    lastStart: integer("last_start"),
    lastStartRid: text("last_start_rid"),
    runs: text("runs").notNull(),
    nextDue: integer("next_due"),
    lastDuration: integer("last_duration"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    // Quiet (domain/quiet.ts): notify after this many failures in a row (the streak, counted up to
    // it; counted: when it last counted one), and what the last notice told ("up" or "down").
    notifyAfter: integer("notify_after").notNull().default(1),
    streak: integer("streak").notNull().default(0),
    notified: text("notified", { enum: ["up", "down"] })
      .notNull()
      .default("up"),
    counted: integer("counted"),
  },
  (t) => [
    uniqueIndex("checks_uuid").on(t.uuid),
    uniqueIndex("checks_push_token").on(t.pushToken),
    index("checks_project_slug").on(t.projectId, t.slug),
    index("checks_next_due").on(t.nextDue),
  ],
);

// A project's ping key: /ping/<key>/<slug> names its checks by slug. Made when first asked for.
export const checkKeys = sqliteTable(
  "check_keys",
  {
    projectId: integer("project_id")
      .primaryKey()
      .references(() => projects.id, { onDelete: "cascade" }),
    pingKey: text("ping_key").notNull(),
    createdAt: integer("created_at").notNull(),
    // The secret of the project's public status badges (/badge/<badge key>/...); null until one is asked for.
    badgeKey: text("badge_key"),
  },
  (t) => [uniqueIndex("check_keys_ping_key").on(t.pingKey), uniqueIndex("check_keys_badge_key").on(t.badgeKey)],
);

// Maintenance windows (domain/maintenance.ts): when a project's rules record changes of state but
// notify nobody. One-off (starts_at, ends_at) or recurring (cron in tz, for length ms).
export const maintenanceWindows = sqliteTable(
  "maintenance_windows",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    startsAt: integer("starts_at"),
    endsAt: integer("ends_at"),
    cron: text("cron"),
    tz: text("tz"),
    length: integer("length"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("maintenance_windows_project").on(t.projectId)],
);

// Shared pages (domain/shares.ts): a project's chosen cards (a dashboard) or chosen checks, alert
// rules and metrics (a status page), shown without sign-in at /s/<key>. The key is the capability:
// 32 random bytes, URL-safe; the chosen ids are JSON lists. A revoked share answers 404 at once.
// A status page's 90 days are days in its time zone.
export const shares = sqliteTable(
  "shares",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
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
    createdAt: integer("created_at").notNull(),
    revokedAt: integer("revoked_at"),
  },
  (t) => [uniqueIndex("shares_key").on(t.key), index("shares_project").on(t.projectId)],
);
