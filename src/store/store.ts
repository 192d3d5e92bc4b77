// The storage seam. Services see only these asynchronous repositories, one per aggregate, and
// tx(): every write runs in the writer's group commit, and a multi-step write runs whole or not at
// all. Reads outside a transaction see what is committed. Each dialect implements this: SQLite in
// DATA_DIR (store/sqlite/), PostgreSQL for several instances (store/pg/).
import type { AuditEntry, NewAuditEntry } from "../model/audit.ts";
import type { Alert, AlertChanges, AlertTransition, NewAlert } from "../model/alert.ts";
import type { AlertMarkWrite } from "../model/alert-row.ts";
import type { Maintenance, NewMaintenance } from "../model/maintenance.ts";
import type { NewShare, Share } from "../model/share.ts";
import type {
  DroppedQuery,
  FunnelCounts,
  FunnelQuery,
  RetentionCounts,
  RetentionQuery,
  SeriesLine,
  SeriesQuery,
} from "../model/analytics.ts";
import type { CardRef, Chart, ChartChanges, NewChart } from "../model/chart.ts";
import type { Check, CheckChanges, CheckKey, CheckMark, CheckRun, NewCheck } from "../model/check.ts";
import type { Hook, HookChanges, NewHook } from "../model/hook.ts";
import type { StoredEvent, EventContent, NewEvent } from "../model/event.ts";
import type { EventFilter, Position } from "../model/filter.ts";
import type { Metric, MetricBucket, MetricPoint, MetricValue } from "../model/metric.ts";
import type {
  Delivery,
  DeliveryAttempt,
  DeliveryStatus,
  DeliveryTarget,
  Digest,
  DigestChanges,
  Integration,
  IntegrationChanges,
  NewDelivery,
  NewDigest,
  NewIntegration,
  Outcome,
  QueueTarget,
  Subscription,
} from "../model/notification.ts";
import type { Profile, Properties, UserFilter, UserSummary } from "../model/profile.ts";
import type { Channel, Project } from "../model/project.ts";
import type { NewToken, TokenRecord } from "../model/token.ts";
import type { Role, Session, User, UserRecord } from "../model/user.ts";

/** A page of a feed: newest first from `before`, or oldest first from `after`. */
export type Page = { before?: Position; after?: Position; limit: number };

export interface ProjectRepository {
  findByName(name: string): Promise<Project | null>;
  findById(id: number): Promise<Project | null>;
  /** Null when a project of that name already exists. */
  create(name: string, now?: number): Promise<Project | null>;
  list(): Promise<Project[]>;
  setRetention(id: number, days: number | null): Promise<void>;
  /** With its channels, metrics and tokens; delete its events first (events.deleteBatch). */
  delete(id: number): Promise<void>;
  findChannel(projectId: number, name: string): Promise<Channel | null>;
  /** The channel's id, creating the channel on first use. */
  ensureChannel(projectId: number, name: string, now: number): Promise<{ id: number; created: boolean }>;
  /** Null when the channel already exists. */
  createChannel(projectId: number, name: string, now?: number): Promise<Channel | null>;
  listChannels(projectId: number): Promise<Channel[]>;
  /** An empty channel; delete its events first. */
  deleteChannel(channel: Channel): Promise<void>;
  countEvents(where: { projectId: number } | { channelId: number }): Promise<number>;
}

export interface EventRepository {
  /**
   * Stores `e` and gives it its id, which is set by the time the write commits. Inside the write,
   * read the id only if `idNow` was given: PostgreSQL numbers a batch's events together as it
   * commits, unless one asks for its id at once (and then holds the cluster-wide order from there).
   */
  insert(e: NewEvent, options?: { idNow?: boolean }): Promise<StoredEvent>;
  /** What the events of a channel at one time say (an import's "already there" check). */
  contentAt(channelId: number, ts: number): Promise<EventContent[]>;
  findById(id: number): Promise<StoredEvent | null>;
  /** Newest first by event time (then id), or oldest first when paging forward with `after`. */
  list(filter: EventFilter & Page): Promise<StoredEvent[]>;
  /**
   * How many events `filter` matches (a feed's search), counted up to `cap` + 1: past `cap` it stops
   * reading and says cap + 1, so a search's count costs at most that many matches.
   */
  count(filter: EventFilter, cap: number): Promise<number>;
  /** A project's (or all) events with ids in (afterId, throughId], in id order, at most `limit`. */
  range(projectId: number | undefined, afterId: number, throughId: number, limit: number): Promise<StoredEvent[]>;
  /**
   * Events per channel (every channel of the project, by name) for each of `days` consecutive days
   * from `start` (Unix ms); with `filter`, only the events a feed with that filter shows (the
   * project is `projectId`, whatever the filter says).
   */
  activity(
    projectId: number,
    start: number,
    days: number,
    filter?: EventFilter,
  ): Promise<{ channel: string; counts: number[] }[]>;
  /** Deletes up to `limit` matching events (oldest first) with their tags; returns how many. */
  deleteBatch(where: { projectId: number; channelId?: number; before?: number }, limit: number): Promise<number>;
  lastId(): Promise<number>;
  /**
   * One step of building the summaries (store/summary/) of projects that had events before them,
   * or whose summaries are made again (a channel of users deleted): up to `limit` events summed.
   * False when there is nothing left to build. Questions about such a project read its events meanwhile.
   */
  buildSummaries(limit: number): Promise<boolean>;
}

export interface MetricRepository {
  current(
    projectId: number,
    title: string,
  ): Promise<{ id: number; value: MetricValue | null; icon: string | null } | null>;
  /** Stores the value as current and as this minute's point in the history. */
  save(m: {
    projectId: number;
    title: string;
    value: MetricValue;
    icon: string | null;
    now: number;
  }): Promise<{ id: number; icon: string | null }>;
  /**
   * Adds `delta` to the number in one statement (a new metric starts at 0), and records the sum
   * as this minute's point; `holds` its value (and nothing changed) when the metric holds text or a boolean.
   */
  increment(m: {
    projectId: number;
    title: string;
    delta: number;
    icon: string | null;
    now: number;
  }): Promise<{ id: number; value: number; icon: string | null } | { holds: MetricValue }>;
  list(projectId: number): Promise<Metric[]>;
  find(projectId: number, title: string): Promise<Metric | null>;
  /** The points in [since, until] (Unix ms), oldest first (newest first with "desc"), at most `limit`. */
  history(
    metricId: number,
    since: number,
    until: number,
    limit: number,
    order?: "asc" | "desc",
  ): Promise<MetricPoint[]>;
  /**
   * The points in [since, until] in spans of `width` ms that start at multiples of it (Unix time),
   * oldest first, one bucket per span that holds a point; computed by the database.
   */
  buckets(metricId: number, since: number, until: number, width: number): Promise<MetricBucket[]>;
  /** The last point before `before` (Unix ms): the value a metric held when a window starts; null when none. */
  pointBefore(metricId: number, before: number): Promise<MetricPoint | null>;
  delete(metricId: number): Promise<void>;
}

export interface ProfileRepository {
  /** Merges `properties` into the user's (null removes one). */
  identify(projectId: number, userId: string, properties: Properties, now: number): Promise<void>;
  find(projectId: number, userId: string): Promise<Profile | null>;
  group(projectId: number, groupId: string, properties: Properties, now: number): Promise<void>;
  addMember(projectId: number, groupId: string, userId: string, now: number): Promise<void>;
  groupsOf(projectId: number, userId: string): Promise<{ groupId: string; properties: Properties }[]>;
  /** A project's users (from its events and its profiles), newest activity first: store/user-list.ts. */
  listUsers(filter: UserFilter): Promise<UserSummary[]>;
  /** One user as the list shows them; null when they have no event and no profile. */
  summary(projectId: number, userId: string): Promise<UserSummary | null>;
}

export interface TokenRepository {
  insert(token: NewToken): Promise<TokenRecord>;
  findByPrefix(prefix: string): Promise<TokenRecord | null>;
  findById(id: number): Promise<TokenRecord | null>;
  list(includeRevoked?: boolean): Promise<TokenRecord[]>;
  /**
   * Whether a token that is not revoked has this name. In a transaction, no other writer can give
   * a token that name before the transaction ends (PostgreSQL takes a lock on the name).
   */
  activeNamed(name: string): Promise<boolean>;
  /**
   * Keeps the live tokens a user created within `projectIds`: full-access ones are limited to them
   * (or to what they already had of them), public ones of another project revoked; returns how many were revoked.
   */
  narrowCreatedBy(userId: number, projectIds: number[], now: number): Promise<number>;
  /** False when it was revoked already. */
  revoke(id: number, now: number): Promise<boolean>;
  /** Revokes the live tokens a member created; returns how many. */
  revokeCreatedBy(userId: number, now: number): Promise<number>;
  setMayNotify(id: number, mayNotify: boolean): Promise<void>;
  touch(id: number, at: number): Promise<void>;
}

export interface UserRepository {
  count(): Promise<number>;
  /** Null when the username is taken. `projectIds`: the projects they are limited to; null (or absent) for every project. */
  create(
    u: { username: string; passwordHash: string; role: Role; projectIds?: number[] | null; oidcSubject?: string },
    now: number,
  ): Promise<User | null>;
  findByUsername(username: string): Promise<UserRecord | null>;
  findById(id: number): Promise<User | null>;
  /** The person linked to the OpenID provider's subject (`sub`). */
  findBySubject(subject: string): Promise<User | null>;
  /** The subject a person is linked to, or null (they never signed in with the provider). */
  subjectOf(id: number): Promise<string | null>;
  /** Links a person to a subject; false when another person holds it already. */
  linkSubject(id: number, subject: string, now: number): Promise<boolean>;
  list(): Promise<User[]>;
  setPassword(id: number, passwordHash: string, now: number): Promise<void>;
  setRole(id: number, role: Role, now: number): Promise<void>;
  /** Limits the user to these projects; null lets them see every project. */
  setProjects(id: number, projectIds: number[] | null, now: number): Promise<void>;
  /** Adds a project to a limited user's (one they created); nothing for a user who sees every project. */
  addProject(id: number, projectId: number): Promise<void>;
  /** The users limited to some projects, with theirs: who may hear of a project's events. */
  limitedReach(): Promise<{ userId: number; projectIds: number[] }[]>;
  /** With their sessions and devices. */
  delete(id: number): Promise<void>;
  createSession(s: {
    tokenHash: string;
    userId: number;
    csrfToken: string;
    createdAt: number;
    expiresAt: number;
  }): Promise<void>;
  sessionActive(sessionId: number, now: number): Promise<boolean>;
  /** The live session with that token hash and its user. */
  findSession(tokenHash: string, now: number): Promise<Session | null>;
  deleteSession(tokenHash: string): Promise<void>;
  /** Every session of the user, but `except` (the one that asked, when they change their own password). */
  deleteSessionsOf(userId: number, except?: number): Promise<void>;
  deleteExpiredSessions(now: number): Promise<number>;
  activeSessions(userId: number, now: number): Promise<number>;
}

export interface NotificationRepository {
  /** Creates or refreshes the device with this endpoint (a browser keeps one per origin). */
  saveSubscription(
    s: { userId: number; endpoint: string; p256dh: string; auth: string; deviceName: string },
    now: number,
  ): Promise<Subscription>;
  refreshSubscription(userId: number, endpoint: string, now: number): Promise<boolean>;
  subscriptionsOf(userId: number): Promise<Subscription[]>;
  allSubscriptions(): Promise<Subscription[]>;
  subscriptionsWithOwner(id?: number): Promise<(Subscription & { username: string })[]>;
  subscription(id: number): Promise<Subscription | null>;
  setFilters(id: number, filters: string | null): Promise<void>;
  /** The tags (JSON, or null for any) and least priority a device hears about. */
  setSubscriptionRoute(id: number, route: { tags: string | null; minPriority: number }): Promise<void>;
  deleteSubscription(id: number): Promise<void>;
  pruneSubscriptions(notRefreshedSince: number): Promise<number>;
  recordSubscriptionOutcome(id: number, outcome: Outcome, now: number): Promise<void>;
  createIntegration(i: NewIntegration, now: number): Promise<Integration>;
  /** Null when there is no such integration. */
  updateIntegration(id: number, changes: IntegrationChanges): Promise<Integration | null>;
  integrationsOf(projectId: number): Promise<Integration[]>;
  integration(id: number): Promise<Integration | null>;
  integrationsCreatedBy(userId: number): Promise<number>;
  disableCreatedBy(userId: number): Promise<number>;
  setIntegrationEnabled(id: number, enabled: boolean): Promise<void>;
  deleteIntegration(id: number): Promise<void>;
  recordIntegrationOutcome(id: number, outcome: Outcome, now: number): Promise<void>;
  enqueue(rows: NewDelivery[], now: number): Promise<number>;
  /**
   * Leases up to `limit` pending deliveries whose time has come (oldest first, none of `except`'s
   * targets) to `lease.owner` until `lease.until`: no other worker claims them meanwhile, and one
   * whose lease runs out (its worker died) is due again.
   */
  claim(
    now: number,
    limit: number,
    lease: { owner: string; until: number },
    except: QueueTarget[],
  ): Promise<Delivery[]>;
  /** Ends every lease, or `owner`'s: for a worker that is the only one (its leases died with it). */
  releaseLeases(owner?: string): Promise<number>;
  pendingCount(): Promise<number>;
  /** Records one attempt, and the delivery's new state; only under `owner`'s lease (false, and nothing written, without it). */
  settle(
    id: number,
    owner: string,
    attempt: { ok: boolean; status: number | null; error: string | null },
    next: { status: DeliveryStatus; nextAttemptAt?: number },
    now: number,
  ): Promise<boolean>;
  /** A target is gone: drops what was queued for it. */
  abandon(target: DeliveryTarget, targetId: number, now: number): Promise<void>;
  delivery(id: number): Promise<Delivery | null>;
  deliveriesFor(target: DeliveryTarget, targetIds: number[], limit?: number): Promise<Delivery[]>;
  attemptsOf(deliveryId: number): Promise<DeliveryAttempt[]>;
  /** Forgets finished deliveries (and their attempts) older than `before`. */
  pruneDeliveries(before: number): Promise<number>;
}

export interface DigestRepository {
  create(d: NewDigest, now: number): Promise<Digest>;
  find(id: number): Promise<Digest | null>;
  /** A project's digests, oldest first. */
  list(projectId: number): Promise<Digest[]>;
  /** Every enabled digest (the runner's round). */
  enabled(): Promise<Digest[]>;
  update(id: number, changes: DigestChanges): Promise<Digest | null>;
  delete(id: number): Promise<void>;
  /**
   * Marks `period` sent, if the digest's last period is still `last` (in a transaction, with the
   * deliveries it queues): false when another run (here or on another instance) got there first.
   */
  claimPeriod(id: number, last: string | null, period: string, now: number): Promise<boolean>;
  recordOutcome(id: number, outcome: Outcome, now: number): Promise<void>;
}

export interface IdempotencyRepository {
  /**
   * Claims the key for a request before its work is done: null when it is this request's now
   * (do the work, then complete), or what the request that holds it stored. A claim waits for a
   * concurrent one of the same key to commit or roll back. The key is kept `keepMs` from `now`
   * (a day unless given); an expired key is claimed afresh.
   */
  claim(
    tokenId: number,
    key: string,
    fingerprint: string,
    now: number,
    keepMs?: number,
  ): Promise<{ fingerprint: string; response: string } | null>;
  complete(tokenId: number, key: string, response: string): Promise<void>;
  prune(now: number): Promise<number>;
}

/** Questions about a project's events, answered by the database (reads only, through the gate of store/reads.ts). */
export interface AnalyticsRepository {
  /**
   * The events `q.filter` matches, counted (or their distinct users) in each bucket between
   * consecutive `q.bounds`: one line, or with `q.groupBy` the `q.limit` groups with the most, most
   * first, and the rest as one line marked `other` (absent when there is no rest).
   */
  series(q: SeriesQuery): Promise<SeriesLine[]>;
  /** Each step's users, and the median time from the step before (the rule of FunnelQuery). */
  funnel(q: FunnelQuery): Promise<FunnelCounts>;
  /** Users who reached the step before `q.step` but not it, in the order of their ids' code points, after `q.after`. */
  dropped(q: DroppedQuery): Promise<string[]>;
  /** Each cohort's users and how many of them came back in each period after (the rule of RetentionQuery). */
  retention(q: RetentionQuery): Promise<RetentionCounts>;
}

export interface ChartRepository {
  create(chart: NewChart, now: number): Promise<Chart>;
  find(id: number): Promise<Chart | null>;
  /** A project's charts, in the order they were made. */
  list(projectId: number): Promise<Chart[]>;
  /** Null when there is no such chart. */
  update(id: number, changes: ChartChanges, now: number): Promise<Chart | null>;
  /** False when there was no such chart. */
  delete(id: number): Promise<boolean>;
  /**
   * The cards of the project's dashboard in order; null while its team never arranged it. With
   * `lock` (in a transaction), no other writer changes it before the transaction ends.
   */
  layout(projectId: number, options?: { lock?: boolean }): Promise<CardRef[] | null>;
  setLayout(projectId: number, cards: CardRef[], now: number): Promise<void>;
}

/** The events of a filter within a window of time. */
export type WindowQuestion = { filter: EventFilter & { projectId: number }; from: number; to: number };

export interface AlertRepository {
  create(alert: NewAlert, now: number): Promise<Alert>;
  find(id: number): Promise<Alert | null>;
  /** A project's rules, in the order they were made. */
  list(projectId: number): Promise<Alert[]>;
  /** Every rule that is not paused, of every project: what a round checks. */
  active(): Promise<Alert[]>;
  /** Null when there is no such rule. */
  update(id: number, changes: AlertChanges & Partial<AlertMarkWrite>, now: number): Promise<Alert | null>;
  /** False when there was no such rule. */
  delete(id: number): Promise<boolean>;
  /** Writes the rule's new state only if it is still `t.from` (and not paused); false when it was not. */
  transition(t: AlertTransition, now: number): Promise<boolean>;
  /** Records when rules were checked last. */
  checked(ids: number[], at: number): Promise<void>;
  /** For each question, how many events of its filter happened with from <= time < to (one read of the read path for them all). */
  counts(questions: WindowQuestion[]): Promise<number[]>;
  /** For each filter, when its latest event happened, up to `until`; null when none did (one read of the read path for them all). */
  latest(filters: (EventFilter & { projectId: number })[], until: number): Promise<(number | null)[]>;
}

export interface HookRepository {
  create(hook: NewHook): Promise<Hook>;
  /** Null when there is no such hook. */
  find(id: string): Promise<Hook | null>;
  /** A project's hooks, in the order they were made. */
  list(projectId: number): Promise<Hook[]>;
  /** Null when there is no such hook. */
  update(id: string, changes: HookChanges): Promise<Hook | null>;
  /** False when there was no such hook. */
  delete(id: string): Promise<boolean>;
}

export interface CheckRepository {
  create(check: NewCheck, now: number): Promise<Check>;
  find(id: number): Promise<Check | null>;
  /**
   * The checks a ping URL names, at most two (two: a slug that is not unique). With `lock`, in a
   * write, they are held to the end of its transaction: another ping of the same check waits.
   */
  findBy(key: CheckKey, options?: { lock?: boolean }): Promise<Check[]>;
  /** A project's checks, in the order they were made. */
  list(projectId: number): Promise<Check[]>;
  /** How many checks the project has. */
  count(projectId: number): Promise<number>;
  /** Null when there is no such check. */
  update(id: number, changes: CheckChanges, now: number): Promise<Check | null>;
  /** False when there was no such check. */
  delete(id: number): Promise<boolean>;
  /** The checks whose next_due is `now` or earlier, soonest first, at most `limit` (a range of an index). */
  due(now: number, limit: number): Promise<Check[]>;
  /** Writes `changes` only if the check still is at `from`; false when it was not. */
  transition(id: number, from: CheckMark, changes: CheckChanges, now: number): Promise<boolean>;
  /** In a write: holds checks' names (slugs, UUIDs, push tokens) to the end of the transaction, so a check-then-create cannot race. */
  lockNames(): Promise<void>;
  /** The project's ping key; null until one is made. */
  pingKey(projectId: number): Promise<string | null>;
  setPingKey(projectId: number, key: string, now: number): Promise<void>;
  projectOfPingKey(key: string): Promise<number | null>;
  /** The project's badge key (its public status badges' secret); null until one is made. */
  badgeKey(projectId: number): Promise<string | null>;
  /** Sets the project's badge key; its ping key must have been made (setPingKey) first. */
  setBadgeKey(projectId: number, key: string): Promise<void>;
  projectOfBadgeKey(key: string): Promise<number | null>;
  /**
   * The latest finished runs (success, fail, exit status) of each of the project's checks named by
   * `slugs`, oldest first, at most `limit` each, from their ping events: one statement for all of
   * them, each check's part a range of the tag index (a gated read).
   */
  runs(projectId: number, slugs: string[], limit: number): Promise<Record<string, CheckRun[]>>;
}

export interface MaintenanceRepository {
  create(window: NewMaintenance, now: number): Promise<Maintenance>;
  find(id: number): Promise<Maintenance | null>;
  /** A project's windows, in the order they were made. */
  list(projectId: number): Promise<Maintenance[]>;
  /** False when there was no such window. */
  delete(id: number): Promise<boolean>;
}

export interface ShareRepository {
  create(share: NewShare, now: number): Promise<Share>;
  /** Revoked ones too. */
  find(id: number): Promise<Share | null>;
  /** The share a link's key names; null when there is none, or it was revoked. */
  findByKey(key: string): Promise<Share | null>;
  /** A project's shares not revoked, in the order they were made. */
  list(projectId: number): Promise<Share[]>;
  /** False when there was no such share, or it was revoked already. Takes access away (open streams of it end). */
  revoke(id: number, now: number): Promise<boolean>;
}

export interface AuditRepository {
  record(entry: NewAuditEntry): Promise<void>;
  /** Newest first, before the entry with id `before` when given. */
  list(q: { before?: number; limit: number }): Promise<AuditEntry[]>;
  /** Keeps the newest `keep` entries; returns how many went. */
  prune(keep: number): Promise<number>;
}

export interface MetaRepository {
  get(key: string): Promise<string | null>;
  set(key: string, value: string): Promise<void>;
  /** Writes and removes a row of a few pages: fails where a new event would (a full disk). */
  probe(): Promise<void>;
}

/** A TOTP authenticator as kept: its secret, whether it was confirmed with a code, the last step a code was taken for. */
export type TotpFactor = { secret: string; confirmedAt: number | null; lastStep: number | null; createdAt: number };

/** The half-signed-in: a right password whose second step is still to come (not a session). */
export type SignInChallenge = {
  userId: number;
  /** verify: a code; enroll: set a factor up; link: a sign-in link made on the command line. */
  purpose: "verify" | "enroll" | "link";
  /** The secret offered while setting a factor up at sign-in, until it is confirmed. */
  secret: string | null;
  next: string;
  createdAt: number;
  expiresAt: number;
};

import type { Passkey } from "../model/passkey.ts";

export type { Passkey };
export type NewPasskey = Omit<Passkey, "id" | "lastUsedAt">;

/** A WebAuthn challenge handed out: for adding a passkey, a sign-in's second step, or a sign-in with a passkey alone (no user). */
export type PasskeyChallenge = {
  challenge: string;
  purpose: "register" | "second_step" | "sign_in";
  userId: number | null;
  createdAt: number;
  expiresAt: number;
};

/** Second factors (TOTP and its recovery codes, passkeys) and the sign-ins waiting for one. */
export interface FactorRepository {
  totp(userId: number): Promise<TotpFactor | null>;
  /** The users with a confirmed factor (an authenticator or a passkey), of those given. */
  withFactor(userIds: number[]): Promise<number[]>;
  /**
   * Turns TOTP on with a secret already checked against a code of `step`: the factor replaces any
   * other, and the recovery codes (hashes) replace the old ones. False when a confirmed factor is
   * already there (two tabs confirming at once: the first wins).
   */
  enableTotp(userId: number, secret: string, step: number, codeHashes: string[], now: number): Promise<boolean>;
  /** Takes the step a code was accepted for: false when that step or a later one was taken already (a replay). */
  takeStep(userId: number, step: number): Promise<boolean>;
  /** Uses a recovery code once: false when it is not theirs or was used. */
  useRecoveryCode(userId: number, codeHash: string, now: number): Promise<boolean>;
  recoveryCodesLeft(userId: number): Promise<number>;
  /** Removes the factor and its recovery codes; false when there was none. */
  removeTotp(userId: number): Promise<boolean>;
  createChallenge(tokenHash: string, c: SignInChallenge): Promise<void>;
  findChallenge(tokenHash: string, now: number): Promise<SignInChallenge | null>;
  deleteChallenge(tokenHash: string): Promise<void>;
  /** Ends a challenge of `purpose` that has not expired and gives it back, once: null for a second taker. */
  takeChallenge(tokenHash: string, purpose: SignInChallenge["purpose"], now: number): Promise<SignInChallenge | null>;
  /** Removes expired sign-in steps and passkey challenges; how many. */
  deleteExpiredChallenges(now: number): Promise<number>;
  /** Their passkeys, oldest first. */
  passkeys(userId: number): Promise<Passkey[]>;
  passkeyByCredential(credentialId: string): Promise<Passkey | null>;
  /** Adds a passkey; null when that credential is kept already (for anyone). */
  addPasskey(p: NewPasskey): Promise<Passkey | null>;
  /** Removes one of their passkeys; what was removed, or null when it is not theirs (or gone). */
  removePasskey(userId: number, id: number): Promise<Passkey | null>;
  /** Removes all their passkeys; how many. */
  removePasskeys(userId: number): Promise<number>;
  /**
   * Records a use with the signature counter the authenticator gave: false when the kept counter is
   * not below it (a replay or a cloned key), unless both are 0 (authenticators without a counter).
   */
  usePasskey(id: number, counter: number, now: number): Promise<boolean>;
  createPasskeyChallenge(c: PasskeyChallenge): Promise<void>;
  /** Takes a challenge once: the challenge, deleted as it is read, or null when unknown, used or expired. */
  takePasskeyChallenge(challenge: string, now: number): Promise<PasskeyChallenge | null>;
}

export type Repositories = {
  projects: ProjectRepository;
  events: EventRepository;
  metrics: MetricRepository;
  profiles: ProfileRepository;
  tokens: TokenRepository;
  users: UserRepository;
  factors: FactorRepository;
  notifications: NotificationRepository;
  digests: DigestRepository;
  idempotency: IdempotencyRepository;
  meta: MetaRepository;
  analytics: AnalyticsRepository;
  charts: ChartRepository;
  alerts: AlertRepository;
  checks: CheckRepository;
  hooks: HookRepository;
  maintenance: MaintenanceRepository;
  shares: ShareRepository;
  audit: AuditRepository;
};

/** What a gated read is, for the read gate's limits (store/reads.ts). */
export type ReadKind = "feed" | "replay" | "chart" | "funnel" | "users" | "user" | "history" | "count" | "alert";

/**
 * How each repository method runs when called on the store itself: "write", a transaction of its
 * own in the group commit; "read", a point lookup on the reader; a ReadKind, through the read gate
 * (store/reads.ts), never on the thread that acknowledges writes. Declared here once, for every
 * method (the compiler refuses a method left out); both stores build their front from it (front.ts).
 */
export type Access = "write" | "read" | ReadKind;

export const ACCESS: { [R in keyof Repositories]: { [M in keyof Repositories[R]]-?: Access } } = {
  projects: {
    findByName: "read",
    findById: "read",
    create: "write",
    list: "read",
    setRetention: "write",
    delete: "write",
    findChannel: "read",
    ensureChannel: "write",
    createChannel: "write",
    listChannels: "read",
    deleteChannel: "write",
    countEvents: "count",
  },
  events: {
    insert: "write",
    contentAt: "read",
    findById: "read",
    list: "feed",
    count: "count",
    range: "replay",
    activity: "chart",
    deleteBatch: "write",
    lastId: "read",
    buildSummaries: "write",
  },
  metrics: {
    current: "read",
    save: "write",
    increment: "write",
    list: "read",
    find: "read",
    history: "history",
    buckets: "history",
    pointBefore: "history",
    delete: "write",
  },
  profiles: {
    identify: "write",
    find: "read",
    group: "write",
    addMember: "write",
    groupsOf: "read",
    listUsers: "users",
    summary: "user",
  },
  tokens: {
    insert: "write",
    findByPrefix: "read",
    findById: "read",
    list: "read",
    activeNamed: "read",
    narrowCreatedBy: "write",
    revoke: "write",
    revokeCreatedBy: "write",
    setMayNotify: "write",
    touch: "write",
  },
  factors: {
    totp: "read",
    withFactor: "read",
    enableTotp: "write",
    takeStep: "write",
    useRecoveryCode: "write",
    recoveryCodesLeft: "read",
    removeTotp: "write",
    createChallenge: "write",
    findChallenge: "read",
    deleteChallenge: "write",
    takeChallenge: "write",
    deleteExpiredChallenges: "write",
    passkeys: "read",
    passkeyByCredential: "read",
    addPasskey: "write",
    removePasskey: "write",
    removePasskeys: "write",
    usePasskey: "write",
    createPasskeyChallenge: "write",
    takePasskeyChallenge: "write",
  },
  users: {
    count: "read",
    create: "write",
    findByUsername: "read",
    findById: "read",
    findBySubject: "read",
    subjectOf: "read",
    linkSubject: "write",
    list: "read",
    setPassword: "write",
    setRole: "write",
    setProjects: "write",
    addProject: "write",
    limitedReach: "read",
    delete: "write",
    createSession: "write",
    sessionActive: "read",
    findSession: "read",
    deleteSession: "write",
    deleteSessionsOf: "write",
    deleteExpiredSessions: "write",
    activeSessions: "read",
  },
  notifications: {
    saveSubscription: "write",
    refreshSubscription: "write",
    subscriptionsOf: "read",
    allSubscriptions: "read",
    subscriptionsWithOwner: "read",
    subscription: "read",
    setFilters: "write",
    setSubscriptionRoute: "write",
    deleteSubscription: "write",
    pruneSubscriptions: "write",
    recordSubscriptionOutcome: "write",
    createIntegration: "write",
    updateIntegration: "write",
    integrationsOf: "read",
    integration: "read",
    integrationsCreatedBy: "read",
    disableCreatedBy: "write",
    setIntegrationEnabled: "write",
    deleteIntegration: "write",
    recordIntegrationOutcome: "write",
    enqueue: "write",
    claim: "write",
    releaseLeases: "write",
    pendingCount: "read",
    settle: "write",
    abandon: "write",
    delivery: "read",
    deliveriesFor: "read",
    attemptsOf: "read",
    pruneDeliveries: "write",
  },
  digests: {
    create: "write",
    find: "read",
    list: "read",
    enabled: "read",
    update: "write",
    delete: "write",
    claimPeriod: "write",
    recordOutcome: "write",
  },
  idempotency: { claim: "write", complete: "write", prune: "write" },
  meta: { get: "read", set: "write", probe: "write" },
  analytics: { series: "chart", funnel: "funnel", dropped: "funnel", retention: "funnel" },
  charts: {
    create: "write",
    find: "read",
    list: "read",
    update: "write",
    delete: "write",
    layout: "read",
    setLayout: "write",
  },
  alerts: {
    create: "write",
    find: "read",
    list: "read",
    active: "read",
    update: "write",
    delete: "write",
    transition: "write",
    checked: "write",
    counts: "alert",
    latest: "alert",
  },
  checks: {
    create: "write",
    find: "read",
    findBy: "read",
    count: "read",
    list: "read",
    update: "write",
    delete: "write",
    due: "read",
    transition: "write",
    lockNames: "write",
    pingKey: "read",
    setPingKey: "write",
    projectOfPingKey: "read",
    badgeKey: "read",
    setBadgeKey: "write",
    projectOfBadgeKey: "read",
    runs: "feed",
  },
  hooks: { create: "write", find: "read", list: "read", update: "write", delete: "write" },
  maintenance: { create: "write", find: "read", list: "read", delete: "write" },
  shares: { create: "write", find: "read", findByKey: "read", list: "read", revoke: "write" },
  audit: { record: "write", list: "read", prune: "write" },
};

/** The read gate's counters (store/reads.ts): reads running and waiting now, and those out of budget so far. */
export type GateStats = { running: number; waiting: number; timeouts: number };

export type WriterStats = {
  batches: number;
  writes: number;
  lastBatchSize: number;
  queueDepth: number;
  /** PostgreSQL: seconds this instance's batches held the cluster-wide event order (one holder at a time, across all instances). */
  orderHeldSeconds?: number;
};

/**
 * What instances sharing one database learn from it (PostgreSQL): every instance's events as they
 * commit, small messages for all, one leader for a job, and counters all of them see.
 */
export interface SharedStore {
  /**
   * Calls `onEvents` with every event committed after `afterId`, by any instance (this one too),
   * in id order with none skipped, soon after it commits, until stop().
   */
  follow(afterId: number, onEvents: (events: StoredEvent[]) => void): { stop(): Promise<void> };
  /** Sends `payload` to every instance, this one included (after what the caller wrote has committed). */
  broadcast(payload: string): Promise<void>;
  onBroadcast(listener: (payload: string) => void): () => void;
  /** Runs `work` unless another instance is running the job `name`; false when one is. */
  asLeader(name: string, work: () => Promise<void>): Promise<boolean>;
  /** Counts a hit on `key` in a fixed window every instance shares: the hits in the window so far, this one included. */
  hit(key: string, windowMs: number, now: number): Promise<{ count: number; windowEndsAt: number }>;
  /** Takes one hit on `key` back (charged up front for something that turned out fine). */
  unhit(key: string): Promise<void>;
}

export interface Store extends Repositories {
  /**
   * Runs `work` in the next group commit and settles after the commit. `work` must not wait for
   * anything but the repositories it is given. A write that throws is undone alone; `signal` (a
   * request's) skips a write whose client left before its transaction began.
   */
  tx<T>(work: (tx: Repositories) => Promise<T>, signal?: AbortSignal): Promise<T>;
  /** Changes whenever access may have been taken away (a token revoked, a session ended), here or elsewhere. */
  accessVersion(): string;
  /** Set when other instances may share this database; null when this process is its only server. */
  readonly shared: SharedStore | null;
  /** What it is, for logs and /readyz: "sqlite" or "postgresql". */
  readonly dialect: "sqlite" | "postgresql";
  /** The read gate's counters (store/reads.ts); null where reads are not gated (a command's store). */
  readonly reads: GateStats | null;
  /** The writer's counters, and whether its last commit failed for want of storage. */
  readonly writer: { readonly stats: WriterStats; readonly failing: boolean };
  /** Reads, answering? (readiness) */
  ping(): Promise<void>;
  /**
   * A consistent copy of the whole database, taken online, written to `target` (a file), or
   * nothing written if it fails; `replace` lets it write over an older copy.
   */
  backup(target: string, options: { replace: boolean }): Promise<void>;
  /**
   * A project's events (or one channel's), oldest first by time then id, in pages of at most
   * `pageSize`, all read from one snapshot of the database: every event committed before the first
   * page is read is in it and none committed later, whatever is written meanwhile. The snapshot
   * holds a connection of its own until the pages end or the loop over them is left.
   */
  snapshotEvents(where: { projectId: number; channel?: string }, pageSize: number): AsyncIterable<StoredEvent[]>;
  /** Throws when writing a file at `target` would destroy the database (its file, or one beside it that belongs to it). */
  refuseOwnFile(target: string): void;
  /** Housekeeping: forgets what has served its time. */
  prune(now: number, limits: { deliveriesBefore: number; subscriptionsBefore: number }): Promise<void>;
  close(): Promise<void>;
}
