// The notifier: works through the delivery queue off the request path. It wakes when a notify
// event is committed and polls for retries. Sends run independently: up to `concurrency` in flight,
// a new one starting as soon as any finishes, and at most PER_TARGET to one device or integration,
// so a receiver that hangs holds two slots, not the queue. Deliveries are rows in the database, so
// a restart loses none: it resends what was pending (at least once). A worker leases what it
// sends (notifications.claim): several instances on one database never send the same delivery at
// once, and a lease that runs out (its instance died mid-send) makes the delivery due again.
import { maskSecret } from "../domain/integration-kinds/configs.ts";
import type { Payload } from "../domain/payload.ts";
import type { OutboundRules } from "../domain/outbound.ts";
import type { Hub } from "../live/hub.ts";
import { log } from "../logger.ts";
import type { Metrics } from "../metrics.ts";
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { Store } from "../store/store.ts";
import { type RetryPolicy, settle } from "./outcome.ts";
import type { Mailer } from "./email.ts";
import { type SendResult, sendIntegration, sendMail, sendPush } from "./send.ts";
import type { Vapid } from "./vapid.ts";
import type { Delivery, QueueTarget } from "../model/notification.ts";

export type NotifierOptions = RetryPolicy & { concurrency: number; pollMs: number; graceMs: number };

const PER_TARGET = 2;
/** After stop() gave up on a send, how long the aborted send may take to let go. */
const RELEASE_MS = 1000;
/** How long a claimed delivery is this worker's: well past a send's own timeout (10 s) and the writes around it. */
export const LEASE_MS = 60_000;

export class Notifier {
  private readonly inFlight = new Map<number, { d: Delivery; done: Promise<void> }>();
  /** This worker, as its leases name it. */
  readonly id = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
  private readonly release = new AbortController();
  private scheduled = false;
  /** A fill is reading the queue: another would pick the same deliveries. */
  private filling = false;
  private refill = false;
  private stopping = false;
  private timer: ReturnType<typeof setInterval> | null = null;
  private unsubscribe: (() => void) | null = null;
  readonly stats = { sent: 0, failed: 0, retried: 0, gone: 0 };

  constructor(
    private readonly store: Store,
    private readonly vapid: () => Promise<Vapid>,
    private readonly options: NotifierOptions,
    private readonly metrics: Metrics,
    /** Where sends may go (every one goes through the outbound guard). */
    private readonly outbound: OutboundRules,
    private readonly mailer: Mailer | null = null,
  ) {}

  /** `only`: no other worker uses this store, so leases left by an earlier run of this one are void. */
  async start(hub: Hub, { only }: { only: boolean }): Promise<void> {
    if (only)
      await this.store.notifications
        .releaseLeases()
        .catch((error) => log.warn("could not release old notification leases", { error }));
    this.unsubscribe = hub.subscribe((message) => {
      if (message.type === "event" && message.event.notify && !message.event.historical) this.wake();
    });
    this.timer = setInterval(() => this.wake(), this.options.pollMs);
    this.wake(); // whatever a previous run left pending
  }

  /** Fills the free slots on the next turn of the event loop: requests and timers run in between. */
  wake(): void {
    if (this.scheduled || this.stopping) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.fill();
    });
  }

  /**
   * Takes no new sends at once, waits up to graceMs for those in flight, then lets the rest go:
   * they are aborted unrecorded and stay pending, so the next start sends them again.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.unsubscribe?.();
    const sends = () => [...this.inFlight.values()].map((s) => s.done);
    if (!(await settledWithin(sends(), this.options.graceMs))) {
      log.warn("stopping with notifications still being sent; they stay queued and are sent again at the next start", {
        deliveries: [...this.inFlight.keys()],
      });
      this.release.abort();
      await settledWithin(sends(), RELEASE_MS);
    }
    // What this worker still holds is due again at once, for the next start or another instance
    // (a worker that dies without this has its leases run out instead).
    await this.store.notifications.releaseLeases(this.id).catch((error) =>
      log.warn("could not release notification leases; they are due again when they run out", {
        error: (error as Error).message,
      }),
    );
    this.mailer?.close();
  }

  private async fill(): Promise<void> {
    if (this.stopping) return;
    if (this.filling) {
      this.refill = true;
      return;
    }
    this.filling = true;
    try {
      // Each round starts at least one delivery (full targets are not asked for), so a few rounds fill every slot.
      for (let round = 0; round < this.options.concurrency; round++) {
        const free = this.options.concurrency - this.inFlight.size;
        if (free <= 0) return;
        const now = Date.now();
        // At most one per device or integration per claim, none of full ones: every claimed delivery starts now.
        const claimed = await this.store.notifications.claim(
          now,
          free,
          { owner: this.id, until: now + LEASE_MS },
          this.fullTargets(),
        );
        if (!claimed.length) return;
        for (const d of claimed) this.begin(d);
      }
    } catch (error) {
      log.error("could not read the notification queue; will retry", { error });
    } finally {
      this.filling = false;
      if (this.refill) {
        this.refill = false;
        this.wake();
      }
    }
  }

  private begin(d: Delivery): void {
    const done = this.deliver(d).finally(() => {
      this.inFlight.delete(d.id);
      this.wake();
    });
    this.inFlight.set(d.id, { d, done });
  }

  private async deliver(d: Delivery): Promise<void> {
    // Anything thrown while preparing or sending (a key web-push refuses, a payload it cannot read)
    // is a failed attempt like a refusal: recorded, retried with backoff, given up in the end.
    const result = await this.send(d).catch(thrown);
    if (this.release.signal.aborted) return;
    try {
      this.metrics.notifications.inc({
        target: d.target,
        outcome: result.ok ? "delivered" : result.gone ? "gone" : result.retry ? "retryable" : "refused",
      });
      const settled = await this.store.tx((tx) => settle(tx, this.id, this.options, d, result));
      if (settled) this.stats[settled]++;
      else
        log.warn("a notification's lease ran out before its outcome was recorded; another attempt may repeat it", {
          delivery: d.id,
        });
    } catch (error) {
      // Unrecorded, the delivery stays leased to this worker until its lease runs out, then it is due again.
      log.error("could not record a notification's outcome; will retry", { delivery: d.id, error });
    }
  }

  private async send(d: Delivery): Promise<SendResult> {
    const payload = JSON.parse(d.payload) as Payload;
    const signal = this.release.signal;
    if (d.target === "push") {
      const device = await this.store.notifications.subscription(d.targetId);
      if (!device) return { ok: false, status: null, retry: false, gone: true, error: "the device was removed" };
      return sendPush(device, payload, await this.vapid(), signal, this.outbound);
    }
    if (d.target === "digest") {
      const digest = await this.store.digests.find(d.targetId);
      if (!digest) return { ok: false, status: null, retry: false, gone: true, error: "the digest was removed" };
      return sendMail(this.mailer, payload.to ?? [], payload, d);
    }
    const integration = await this.store.notifications.integration(d.targetId);
    if (!integration)
      return { ok: false, status: null, retry: false, gone: true, error: "the integration was removed" };
    if (!integration.enabled) return { ok: false, status: null, retry: false, error: "the integration is disabled" };
    const result = await sendIntegration(integration, payload, d, signal, this.mailer, this.outbound).catch(thrown);
    if (result.ok) return result;
    // An error message never carries a secret (a Discord or Slack URL, a bot token in Telegram's URL).
    let error = result.error;
    for (const secret of Object.values(integration.secrets))
      if (secret.length >= 4) error = error.split(secret).join(maskSecret(secret));
    return { ...result, error };
  }

  /** Sends in flight to this delivery's device or integration. */
  private load(t: QueueTarget): number {
    let n = 0;
    for (const { d } of this.inFlight.values()) if (d.target === t.target && d.targetId === t.targetId) n++;
    return n;
  }

  private fullTargets(): QueueTarget[] {
    return [...this.inFlight.values()].map(({ d }) => d).filter((d) => this.load(d) >= PER_TARGET);
  }
}

function thrown(error: unknown): SendResult {
  return {
    ok: false,
    status: null,
    retry: true,
    error: `could not send: ${error instanceof Error ? error.message : String(error)}`,
  };
}

/** Whether every promise settled within `ms`. */
async function settledWithin(promises: Promise<unknown>[], ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([Promise.allSettled(promises).then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
