// Time as the services read it, and the timers of the work that runs by time (housekeeping,
// digests, alert rounds). The system's clock unless something else is given: a test passes its own,
// which it moves on at will, so sessions expire, rules fire and digests fall due without waiting.

export type Timer = { cancel(): void };

export interface Clock {
  /** Milliseconds since the epoch, as Date.now(). */
  now(): number;
  /** Calls `fn` every `ms` until cancelled. `background`: the timer alone does not keep the process alive. */
  every(ms: number, fn: () => unknown, options?: { background?: boolean }): Timer;
  /** Calls `fn` once, `ms` from now, unless cancelled. */
  after(ms: number, fn: () => unknown): Timer;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  every(ms, fn, { background = false } = {}) {
    const timer = setInterval(fn, ms);
    if (background) timer.unref();
    return { cancel: () => clearInterval(timer) };
  },
  after(ms, fn) {
    const timer = setTimeout(fn, ms);
    return { cancel: () => clearTimeout(timer) };
  },
};
