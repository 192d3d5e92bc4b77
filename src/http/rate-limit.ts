// Token buckets: each key may spend `limit` requests at once and earns them back evenly over the
// window. Buckets that have refilled are forgotten, so memory follows active clients only.
import type { Rate } from "../domain/units.ts";
import { RateLimited } from "../errors.ts";

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
    throw new RateLimited(retryAfter, { limit: this.rate.limit, remaining: 0, reset: retryAfter, windowSeconds: Math.round(this.rate.windowMs / 1000) });
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
