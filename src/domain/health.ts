// Readiness and the storage's counters: whether this instance can take requests, and what /metrics
// reads at scrape time. It can take requests when its database answers and, after a write failed
// for want of storage, once a probe write goes through again: a load balancer must stop sending
// events to an instance that would answer them 503, and send them again by itself.
import type { Store, WriterStats, GateStats } from "../store/store.ts";

export type Readiness = { ready: true } | { ready: false; reason: string };

/** `writers`: every writer that may be failing (the store's, and the writer thread's when there is one). */
export function healthService(store: Store, writers: { failing: boolean }[] = [store.writer]) {
  return {
    async readiness(): Promise<Readiness> {
      try {
        await store.ping();
      } catch {
        return { ready: false, reason: "the database does not answer" };
      }
      if (!writers.some((w) => w.failing)) return { ready: true };
      try {
        await store.meta.probe();
        return { ready: true };
      } catch {
        return { ready: false, reason: "writes fail: the disk or database is full, or not writable" };
      }
    },

    writerStats(): WriterStats {
      return store.writer.stats;
    },

    /** The read gate's counters; zeros where reads are not gated. */
    readStats(): GateStats {
      return store.reads ?? { running: 0, waiting: 0, timeouts: 0 };
    },

    pendingNotifications(): Promise<number> {
      return store.notifications.pendingCount();
    },

    lastEventId(): Promise<number> {
      return store.events.lastId();
    },
  };
}
