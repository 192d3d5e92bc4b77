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
  createdAt: number;
  refreshedAt: number;
  lastSuccessAt: number | null;
  lastError: string | null;
  lastErrorAt: number | null;
};

export type IntegrationKind = "webhook" | "ntfy" | "discord" | "slack";

export type Integration = {
  id: number;
  projectId: number;
  kind: IntegrationKind;
  name: string;
  url: string;
  topic: string | null;
  secret: string | null;
  enabled: boolean;
  createdByUserId: number | null;
  createdAt: number;
  lastSuccessAt: number | null;
  lastError: string | null;
  lastErrorAt: number | null;
};

export type DeliveryTarget = "push" | "integration";
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

export type DeliveryAttempt = { id: number; deliveryId: number; at: number; ok: boolean; status: number | null; error: string | null };

export type NewDelivery = { target: DeliveryTarget; targetId: number; eventId: number | null; payload: string };

/** One device or integration. */
export type QueueTarget = Pick<Delivery, "target" | "targetId">;

/** What an attempt came to, as a device or integration list shows it. */
export type Outcome = { ok: boolean; error: string | null };
