// The notifier: works through the delivery queue off the request path. It wakes when a notify
// event is committed and polls for retries; sends a few deliveries at a time; records every
// attempt; backs off exponentially (or as Retry-After says); removes a device the push service
// says is gone. Deliveries are rows in the database, so a restart loses none: it resends what was
// pending (at least once).
import { maskUrl, type Payload } from "../domain/notifications.ts";
import type { Hub } from "../live/hub.ts";
import { log } from "../logger.ts";
import type { Metrics } from "../metrics.ts";
import type { Store } from "../store/index.ts";
import type { DeliveryRow } from "../store/notifications.ts";
import { type SendResult, sendIntegration, sendPush } from "./send.ts";
import type { Vapid } from "./vapid.ts";

export type NotifierOptions = { concurrency: number; retryBaseMs: number; maxAttempts: number; pollMs: number };

const MAX_DELAY_MS = 3_600_000;

export class Notifier {
  private readonly busy = new Set<number>();
  /** Deliveries whose outcome could not be written: not picked again until then (ms). */
  private readonly held = new Map<number, number>();
  private running: Promise<void> | null = null;
  private again = false;
  private timer: ReturnType<typeof setInterval> | null = null;
  private unsubscribe: (() => void) | null = null;
  readonly stats = { sent: 0, failed: 0, retried: 0, gone: 0 };

  constructor(
    private readonly store: Store,
    private readonly vapid: Vapid,
    private readonly options: NotifierOptions,
    private readonly metrics: Metrics,
  ) {}

  start(hub: Hub): void {
    this.unsubscribe = hub.subscribe(({ message }) => {
      if (message.type === "event" && message.event.notify && !message.event.historical) this.wake();
    });
    this.timer = setInterval(() => this.wake(), this.options.pollMs);
    this.wake(); // whatever a previous run left pending
  }

  /** Runs a pass now (or right after the one under way). */
  wake(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain().finally(() => {
      this.running = null;
      if (this.again) {
        this.again = false;
        this.wake();
      }
    });
  }

  /** Stops polling and waits for the sends under way. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.unsubscribe?.();
    this.timer = null;
    await this.running;
  }

  private async drain(): Promise<void> {
    for (;;) {
      const due = this.store.notifications.due(Date.now(), this.options.concurrency, this.busyIds());
      if (!due.length) return;
      await Promise.all(due.map((d) => this.deliver(d)));
      // Sends that fail at once settle in microtasks: without a turn of the event loop, requests,
      // timers and signals would wait for the queue to run dry.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  private async deliver(d: DeliveryRow): Promise<void> {
    this.busy.add(d.id);
    try {
      // Anything thrown while preparing or sending (a key web-push refuses, a payload it cannot read)
      // is a failed attempt like a refusal: recorded, retried with backoff, given up in the end.
      const result = await this.send(d).catch(thrown);
      await this.store.writer.submit(() => this.settle(d, result));
    } catch (error) {
      // Unrecorded, the delivery is still due: without a pause it would be sent again at once, and again.
      this.held.set(d.id, Date.now() + this.options.retryBaseMs);
      log.error("could not record a notification's outcome; will retry", { delivery: d.id, error });
    } finally {
      this.busy.delete(d.id);
    }
  }

  private busyIds(): number[] {
    const now = Date.now();
    for (const [id, until] of this.held) if (until <= now) this.held.delete(id);
    return [...this.busy, ...this.held.keys()];
  }

  private async send(d: DeliveryRow): Promise<SendResult> {
    const payload = JSON.parse(d.payload) as Payload;
    if (d.target === "push") {
      const device = this.store.notifications.subscription(d.targetId);
      if (!device) return { ok: false, status: null, retry: false, gone: true, error: "the device was removed" };
      return sendPush(device, payload, this.vapid);
    }
    const integration = this.store.notifications.integration(d.targetId);
    if (!integration) return { ok: false, status: null, retry: false, gone: true, error: "the integration was removed" };
    if (!integration.enabled) return { ok: false, status: null, retry: false, error: "the integration is disabled" };
    const result = await sendIntegration(integration, payload, d.id).catch(thrown);
    // An error message must never carry the integration's URL: for Discord and Slack it is the secret.
    return result.ok ? result : { ...result, error: result.error.split(integration.url).join(maskUrl(integration.url)) };
  }

  /** In a write transaction: the attempt, the delivery's next state, the target's last outcome. */
  private settle(d: DeliveryRow, result: SendResult): void {
    this.metrics.notifications.inc({ target: d.target, outcome: result.ok ? "delivered" : result.gone ? "gone" : result.retry ? "retryable" : "refused" });
    const n = this.store.notifications;
    const now = Date.now();
    const outcome = { ok: result.ok, error: result.ok ? null : result.error };
    if (d.target === "push") n.recordSubscriptionOutcome(d.targetId, outcome, now);
    else n.recordIntegrationOutcome(d.targetId, outcome, now);
    const attempt = { ok: result.ok, status: result.status, error: outcome.error };
    if (result.ok) {
      n.settle(d.id, attempt, { status: "sent" }, now);
      this.stats.sent++;
      return;
    }
    if (result.gone) {
      n.settle(d.id, attempt, { status: "gone" }, now);
      if (d.target === "push") {
        n.abandon("push", d.targetId, now);
        n.deleteSubscription(d.targetId);
        log.info("removed a push subscription the push service no longer knows", { subscription: d.targetId, status: result.status });
      }
      this.stats.gone++;
      return;
    }
    const attempts = d.attempts + 1;
    if (result.retry && attempts < this.options.maxAttempts) {
      const backoff = Math.min(MAX_DELAY_MS, this.options.retryBaseMs * 3 ** (attempts - 1)) * (0.8 + Math.random() * 0.4);
      const delay = Math.min(MAX_DELAY_MS, Math.max(backoff, result.retryAfterMs ?? 0));
      n.settle(d.id, attempt, { status: "pending", nextAttemptAt: now + delay }, now);
      this.stats.retried++;
      return;
    }
    n.settle(d.id, attempt, { status: "failed" }, now);
    this.stats.failed++;
    log.warn("notification delivery failed", { delivery: d.id, target: d.target, targetId: d.targetId, attempts, status: result.status, error: result.error });
  }
}

function thrown(error: unknown): SendResult {
  return { ok: false, status: null, retry: true, error: `could not send: ${error instanceof Error ? error.message : String(error)}` };
}
