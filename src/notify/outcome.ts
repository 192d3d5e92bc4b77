// What one attempt did to a delivery, written in one transaction: the attempt itself, the
// delivery's next state (sent, retried later with backoff, failed, or gone with its device), and
// the target's last outcome that the device and integration lists show.
import { log } from "../logger.ts";
import type { Repositories } from "../store/store.ts";
import type { SendResult } from "./send.ts";
import type { Delivery } from "../model/notification.ts";

export type Settled = "sent" | "gone" | "retried" | "failed";
export type RetryPolicy = { retryBaseMs: number; maxAttempts: number };

const MAX_DELAY_MS = 3_600_000;

/** Inside a write transaction, under `owner`'s lease: null (and nothing written) when the lease is no longer its. */
export async function settle(
  tx: Repositories,
  owner: string,
  policy: RetryPolicy,
  d: Delivery,
  result: SendResult,
): Promise<Settled | null> {
  const n = tx.notifications;
  const now = Date.now();
  const outcome = { ok: result.ok, error: result.ok ? null : result.error };
  const attempt = { ok: result.ok, status: result.status, error: outcome.error };
  const attempts = d.attempts + 1;
  const next: { status: Settled; state: { status: Delivery["status"]; nextAttemptAt?: number } } = result.ok
    ? { status: "sent", state: { status: "sent" } }
    : result.gone
      ? { status: "gone", state: { status: "gone" } }
      : result.retry && attempts < policy.maxAttempts
        ? {
            status: "retried",
            state: { status: "pending", nextAttemptAt: now + retryDelay(policy, attempts, result.retryAfterMs) },
          }
        : { status: "failed", state: { status: "failed" } };
  if (!(await n.settle(d.id, owner, attempt, next.state, now))) return null;
  if (d.target === "push") await n.recordSubscriptionOutcome(d.targetId, outcome, now);
  else if (d.target === "digest") await tx.digests.recordOutcome(d.targetId, outcome, now);
  else await n.recordIntegrationOutcome(d.targetId, outcome, now);
  if (next.status === "gone" && d.target === "push") {
    await n.abandon("push", d.targetId, now);
    await n.deleteSubscription(d.targetId);
    log.info("removed a push subscription the push service no longer knows", {
      subscription: d.targetId,
      status: result.status,
    });
  }
  if (next.status === "failed")
    log.warn("notification delivery failed", {
      delivery: d.id,
      target: d.target,
      targetId: d.targetId,
      attempts,
      status: result.status,
      error: outcome.error,
    });
  return next.status;
}

/** Exponential (×3 per attempt, ±20% so retries of many deliveries spread out), or as Retry-After says. */
function retryDelay(policy: RetryPolicy, attempts: number, retryAfterMs: number | undefined): number {
  const backoff = Math.min(MAX_DELAY_MS, policy.retryBaseMs * 3 ** (attempts - 1)) * (0.8 + Math.random() * 0.4);
  return Math.min(MAX_DELAY_MS, Math.max(backoff, retryAfterMs ?? 0));
}
