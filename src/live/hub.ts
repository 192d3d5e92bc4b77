// The in-process pub/sub between the writer and every live view. Services publish only after
// their write committed. Delivery is a synchronous call per subscriber; a subscriber that cannot
// keep up is the subscriber's problem (see http/sse.ts: bounded queues), never the publisher's.
import type { EventRow } from "../store/events.ts";
import type { MetricRow } from "../store/metrics.ts";
import { log } from "../logger.ts";

export type LiveMessage =
  | { type: "event"; event: EventRow }
  | { type: "metric"; metric: MetricRow }
  | { type: "channel"; projectId: number; project: string; channel: string };

/**
 * A published message. Rendering it (JSON, an HTML fragment) is memoised per format, so views
 * that differ only in their filters share one render.
 */
export class Published {
  private readonly rendered = new Map<string, unknown>();
  constructor(readonly message: LiveMessage) {}

  render<T>(format: string, render: (message: LiveMessage) => T): T {
    if (!this.rendered.has(format)) this.rendered.set(format, render(this.message));
    return this.rendered.get(format) as T;
  }
}

export type Subscriber = (published: Published) => void;

export class Hub {
  private readonly subscribers = new Set<Subscriber>();
  published = 0;

  subscribe(subscriber: Subscriber): () => void {
    this.subscribers.add(subscriber);
    return () => this.subscribers.delete(subscriber);
  }

  publish(message: LiveMessage): void {
    this.published++;
    const published = new Published(message);
    for (const subscriber of this.subscribers) {
      try {
        subscriber(published);
      } catch (error) {
        // One broken view must not stop delivery to the others.
        log.error("live subscriber failed", { error });
      }
    }
  }

  get size(): number {
    return this.subscribers.size;
  }
}
