// Rate limits. In one process: token buckets, where each key may spend `limit` requests at once
// and earns them back evenly over the window (buckets that have refilled are forgotten, so memory
// follows active clients only). Across instances sharing a database: a fixed window per key that
// every instance counts in (SharedStore.hit), for the limits that must hold globally (sign-in).
import type { SharedStore } from "../store/store.ts";
import type { Rate } from "./units.ts";
import { RateLimited } from "../errors.ts";

/** Charges a request to a key, or throws RateLimited; refund gives a charge back. */
export interface Limiter {
  take(key: string): Promise<void>;
  refund(key: string): Promise<void>;
}

/** This process's buckets: the limit holds per instance. */
export function memoryLimiter(rate: Rate): Limiter {
  const buckets = new RateLimiter(rate);
  return {
    take: async (key) => buckets.take(key),
    refund: async (key) => buckets.refund(key),
  };
}

/** One window per key for every instance on `shared`: the limit holds across all of them. */
export function sharedLimiter(shared: SharedStore, name: string, rate: Rate): Limiter {
  return {
    async take(key) {
      const now = Date.now();
      const { count, windowEndsAt } = await shared.hit(`${name}:${key}`, rate.windowMs, now);
      if (count <= rate.limit) return;
      const retryAfter = Math.max(1, Math.ceil((windowEndsAt - now) / 1000));
      throw new RateLimited(retryAfter, {
        limit: rate.limit,
        remaining: 0,
        reset: retryAfter,
        windowSeconds: Math.round(rate.windowMs / 1000),
      });
    },
    refund: (key) => shared.unhit(`${name}:${key}`),
  };
}

type Bucket = { tokens: number; updated: number };

const SWEEP_EVERY = 10_000;

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly perMs: number;

  constructor(readonly rate: Rate) {
    this.perMs = rate.limit / rate.windowMs;
  }

  /** Spends one request for `key`, or throws RateLimited with Retry-After and RateLimit headers. */
  take(key: string, now = Date.now()): void {
    const bucket = this.refill(key, now);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return;
    }
    this.refuse(bucket);
  }

  /** Gives back one request spent by `key` (charged up front for something that turned out fine). */
  refund(key: string, now = Date.now()): void {
    const bucket = this.refill(key, now);
    bucket.tokens = Math.min(this.rate.limit, bucket.tokens + 1);
  }

  /** Throws RateLimited if `key` has nothing left to spend, without spending. */
  check(key: string, now = Date.now()): void {
    const bucket = this.refill(key, now);
    if (bucket.tokens < 1) this.refuse(bucket);
  }

  private refuse(bucket: Bucket): never {
    const retryAfter = Math.max(1, Math.ceil((1 - bucket.tokens) / this.perMs / 1000));
    throw new RateLimited(retryAfter, {
      limit: this.rate.limit,
      remaining: 0,
      reset: retryAfter,
      windowSeconds: Math.round(this.rate.windowMs / 1000),
    });
  }

  private refill(key: string, now: number): Bucket {
    let bucket = this.buckets.get(key);
    if (!bucket) {
      if (this.buckets.size >= SWEEP_EVERY) this.sweep(now);
      bucket = { tokens: this.rate.limit, updated: now };
      this.buckets.set(key, bucket);
      return bucket;
    }
    bucket.tokens = Math.min(this.rate.limit, bucket.tokens + (now - bucket.updated) * this.perMs);
    bucket.updated = now;
    return bucket;
  }

  private sweep(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + (now - bucket.updated) * this.perMs >= this.rate.limit) this.buckets.delete(key);
    }
  }

  get size(): number {
    return this.buckets.size;
  }
}
