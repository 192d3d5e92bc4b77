// Preloaded (bun --preload) into a server run from source by the analytics benchmark: a timer every
// 10 ms notes how much CPU the main thread used since the one before (/proc/self/task/PID/schedstat).
// A late timer with the thread busy meanwhile is the event loop held by work; late with the thread
// idle is the process waiting for a core that other processes hold, or the thread asleep in a call
// that blocks (a lock waited for inside SQLite, a disk flush). Schedstat also tells the time spent
// waiting for a core, so what is left of a late tick is the loop held, running or blocked. Each
// second, a JSON line {t, held, gap, gapHeld, stalled} (ms) is appended to LOOP_HOLD_FILE: the most
// CPU between two ticks, the longest gap between them, the CPU used in that gap, and the longest
// time the loop did not turn, waiting for a core left out.
import { appendFileSync, readFileSync } from "node:fs";

const TICK_MS = 10;
const file = process.env.LOOP_HOLD_FILE;
if (file) {
  const schedstat = `/proc/self/task/${process.pid}/schedstat`;
  /** CPU used and time spent waiting for a core, so far (ms). */
  const sched = () => {
    const [cpu, waited] = readFileSync(schedstat, "utf8").split(" ");
    return [Number(cpu) / 1e6, Number(waited) / 1e6] as const;
  };
  let [lastAt, [lastCpu, lastWaited]] = [performance.now(), sched()];
  let second = { held: 0, gap: 0, gapHeld: 0, stalled: 0 };
  setInterval(() => {
    const [at, [cpu, waited]] = [performance.now(), sched()];
    const [gap, held] = [at - lastAt, cpu - lastCpu];
    second.held = Math.max(second.held, held);
    second.stalled = Math.max(second.stalled, gap - (waited - lastWaited) - TICK_MS);
    if (gap > second.gap) [second.gap, second.gapHeld] = [gap, held];
    [lastAt, lastCpu, lastWaited] = [at, cpu, waited];
  }, TICK_MS).unref();
  setInterval(() => {
    appendFileSync(file, `${JSON.stringify({ t: Date.now(), ...second })}\n`);
    second = { held: 0, gap: 0, gapHeld: 0, stalled: 0 };
  }, 1000).unref();
}
