// A clock the test moves. Its time is the real time plus how far the test moved it on, so what the
// services stamp with it and what they stamp with Date.now() agree until the test says otherwise;
// or, stopped, a time that moves only when the test moves it.
// The timers set on it (housekeeping, digests, alert rounds, token use) fire only when the test
// moves it past them, each awaited: no job of the server runs by itself in the middle of a test.
import type { Clock, Timer } from "../src/clock.ts";

type Pending = { at: number; every: number | null; fn: () => unknown };

export class TestClock implements Clock {
  private readonly real: () => number;
  private offset: number;
  private readonly pending = new Set<Pending>();

  /** `at`: the time it starts at (now, unless given); `stopped`: it moves only by advance(). */
  constructor(at = Date.now(), { stopped = false } = {}) {
    const started = Date.now();
    this.real = stopped ? () => started : Date.now;
    this.offset = at - started;
  }

  now(): number {
    return this.real() + this.offset;
  }

  every(ms: number, fn: () => unknown): Timer {
    return this.schedule({ at: this.now() + ms, every: ms, fn });
  }

  after(ms: number, fn: () => unknown): Timer {
    return this.schedule({ at: this.now() + ms, every: null, fn });
  }

  /**
   * Moves the clock on by `ms`, running the timers that fall due on the way in the order they are
   * due, the clock at each one's moment, each awaited. A repeating timer fires once however many
   * of its periods went by (as after a machine's sleep), then counts on from where the clock stops.
   */
  async advance(ms: number): Promise<void> {
    const target = this.now() + ms;
    for (;;) {
      const due = [...this.pending].filter((p) => p.at <= target).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.offset += Math.max(0, due.at - this.now());
      if (due.every === null) this.pending.delete(due);
      else due.at = target + due.every;
      await due.fn();
    }
    this.offset += Math.max(0, target - this.now());
  }

  /** How many timers are set (those not cancelled, and not yet fired if they fire once). */
  get timers(): number {
    return this.pending.size;
  }

  private schedule(pending: Pending): Timer {
    this.pending.add(pending);
    return { cancel: () => void this.pending.delete(pending) };
  }
}
