// Preloaded (bun --preload) into a server run from source by the analytics benchmark: a timer every
// 10 ms notes how much CPU the main thread used since the one before (/proc/self/task/PID/schedstat).
// A late timer with the thread busy meanwhile is the event loop held by work; late with the thread
// idle is the process waiting for a core that other processes hold. Each second, a JSON line
// {t, held, gap, gapHeld} (ms) is appended to LOOP_HOLD_FILE: the most CPU between two ticks, the
// longest gap between them, and the CPU used in that gap.
import { appendFileSync, readFileSync } from "node:fs";

const file = process.env.LOOP_HOLD_FILE;
if (file) {
  const schedstat = `/proc/self/task/${process.pid}/schedstat`;
  const cpuMs = () => Number(readFileSync(schedstat, "utf8").split(" ")[0]) / 1e6;
  let [lastAt, lastCpu] = [performance.now(), cpuMs()];
  let second = { held: 0, gap: 0, gapHeld: 0 };
  setInterval(() => {
    const [at, cpu] = [performance.now(), cpuMs()];
    const [gap, held] = [at - lastAt, cpu - lastCpu];
    second.held = Math.max(second.held, held);
    if (gap > second.gap) [second.gap, second.gapHeld] = [gap, held];
    [lastAt, lastCpu] = [at, cpu];
  }, 10).unref();
  setInterval(() => {
    appendFileSync(file, `${JSON.stringify({ t: Date.now(), ...second })}\n`);
    second = { held: 0, gap: 0, gapHeld: 0 };
  }, 1000).unref();
}
