// Web Push subscriptions (devices), integrations, and the delivery queue between them and events.

export type Subscription = {
  id: number;
  userId: number;
  endpoint: string;
  p256dh: string;
  auth: string;
  deviceName: string;
  /** null: every project; else a JSON list of {project, channels: string[] | null}. */
  filters: string | null;
  /** null: any tags; else a JSON object of key → value the event's tags must hold. */
  tags: string | null;
  /** The least priority it hears about (1: every event). */
  minPriority: number;
  createdAt: number;
  refreshedAt: number;
  lastSuccessAt: number | null;
  lastError: string | null;
  lastErrorAt: number | null;
};

/** Which notify events a receiver gets; every field optional, and an empty filter lets every one through. */
export type RouteFilter = {
  /** Only these channels (empty or absent: any). */
  channels?: string[];
  /** Never these channels (such as "alerts", or only "alerts" with channels). */
  exclude_channels?: string[];
  /** Tags the event must have, with these values (as their text: true, 3, pro). */
  tags?: Record<string, string>;
  /** 1 to 5: events of a lower priority are left out. */
  min_priority?: number;
};

/** An integration's own wording: mustache templates over the event (domain/templates.ts). */
export type Template = { title?: string; body?: string };

export type Integration = {
  id: number;
  projectId: number;
  /** The name of one of the kinds in domain/integration-kinds/registry.ts, whose module says what config and secrets hold. */
  kind: string;
  name: string;
  /** What may be shown: the kind's settings but its secrets (a URL, a chat id, recipients). */
  config: Record<string, unknown>;
  /** Tokens, signing keys and URLs that are secrets: written, never shown again. */
  secrets: Record<string, string>;
  filter: RouteFilter | null;
  template: Template | null;
  enabled: boolean;
  createdByUserId: number | null;
  createdAt: number;
  lastSuccessAt: number | null;
  lastError: string | null;
  lastErrorAt: number | null;
};

/** push: a device; integration: one of a project's integrations; digest: the e-mail addresses of a digest. */
export type DeliveryTarget = "push" | "integration" | "digest";
export type DeliveryStatus = "pending" | "sent" | "failed" | "gone";

export type Delivery = {
  id: number;
  target: DeliveryTarget;
  targetId: number;
  eventId: number | null;
  payload: string;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: number;
  lastError: string | null;
  createdAt: number;
  finishedAt: number | null;
  /** The worker sending it, and until when (a lease that runs out makes it due again). */
  leaseOwner: string | null;
  leaseUntil: number | null;
};

export type DeliveryAttempt = {
  id: number;
  deliveryId: number;
  at: number;
  ok: boolean;
  status: number | null;
  error: string | null;
};

export type NewDelivery = { target: DeliveryTarget; targetId: number; eventId: number | null; payload: string };

/** One device or integration. */
export type QueueTarget = Pick<Delivery, "target" | "targetId">;

/** What an attempt came to, as a device or integration list shows it. */
export type Outcome = { ok: boolean; error: string | null };

/** What an integration is made of, as it is stored. */
export type NewIntegration = Pick<
  Integration,
  "projectId" | "kind" | "name" | "config" | "secrets" | "filter" | "template" | "createdByUserId"
>;

/** What may change of an integration (its kind may not). */
export type IntegrationChanges = Partial<
  Pick<Integration, "name" | "config" | "secrets" | "filter" | "template" | "enabled">
>;

export type DigestFrequency = "daily" | "weekly";

/** A project's daily or weekly summary (domain/digests.ts). */
export type Digest = {
  id: number;
  projectId: number;
  name: string;
  frequency: DigestFrequency;
  /** 0-23, in timeZone. */
  hour: number;
  /** Weekly: 1 (Monday) to 7 (Sunday); null for daily. */
  weekday: number | null;
  timeZone: string;
  integrationIds: number[];
  emails: string[];
  enabled: boolean;
  createdAt: number;
  /** The last period sent, by the local date its report was due ("2026-03-02"). */
  lastPeriod: string | null;
  lastSentAt: number | null;
  lastSuccessAt: number | null;
  lastError: string | null;
  lastErrorAt: number | null;
};

export type NewDigest = Pick<
  Digest,
  "projectId" | "name" | "frequency" | "hour" | "weekday" | "timeZone" | "integrationIds" | "emails" | "lastPeriod"
>;
export type DigestChanges = Partial<
  Pick<Digest, "name" | "frequency" | "hour" | "weekday" | "timeZone" | "integrationIds" | "emails" | "enabled">
>;
