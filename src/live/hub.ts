// The in-process pub/sub between the writer and everything live. Services publish only after
// their write committed. Delivery is a synchronous call per subscriber, and subscribers do no more
// than note what they will need (the fan-out queues it for its next flush, the notifier wakes up):
// the cost of publishing does not depend on how many pages or streams are open.
import { log } from "../logger.ts";
import type { StoredEvent } from "../model/event.ts";
import type { Metric } from "../model/metric.ts";

export type LiveMessage =
  | { type: "event"; event: StoredEvent }
  | { type: "metric"; metric: Metric }
  | { type: "channel"; projectId: number; project: string; channel: string };

export type Subscriber = (message: LiveMessage) => void;

/**
 * How a service announces a committed change to every live view: into this process's hub, or, on
 * a database several instances share, to all of them (services.ts chooses).
 */
export type Announce = (message: LiveMessage) => void;

export class Hub {
  private readonly subscribers = new Set<Subscriber>();
  published = 0;

  subscribe(subscriber: Subscriber): () => void {
    this.subscribers.add(subscriber);
    return () => this.subscribers.delete(subscriber);
  }

  publish(message: LiveMessage): void {
    this.published++;
    for (const subscriber of this.subscribers) {
      try {
        subscriber(message);
      } catch (error) {
        // One broken subscriber must not stop delivery to the others.
        log.error("live subscriber failed", { error });
      }
    }
  }

  get size(): number {
    return this.subscribers.size;
  }
}
