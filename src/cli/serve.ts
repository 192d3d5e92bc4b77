import { readFileSync } from "node:fs";
import { log, setLogLevel } from "../logger.ts";
import { startServer } from "../server.ts";
import { type Command, configFrom, parse, UsageError } from "./command.ts";

export const serve: Command = {
  summary: "run the server (the default command)",
  usage: "signalboard serve [--port N] [--host H] [--data-dir DIR] [...settings]",
  async run(argv) {
    const { values, positionals } = parse(argv, {});
    // A stray word must not go unnoticed: the server would start instead of what was meant.
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}": serve takes only settings`);
    const config = configFrom(values);
    setLogLevel(config.logLevel);
    // The signals are heard from the start: one that comes while the server starts stops it once started.
    const starting = startServer(config);
    let stopping = false;
    const shutdown = (reason: string) => {
      if (stopping) return;
      stopping = true;
      log.info("stopping", { reason });
      setTimeout(() => process.exit(1), 4800).unref(); // a last resort; stop() finishes well before
      void starting.then(
        (running) => running.stop().then(() => process.exit(0)),
        () => {}, // it did not start: that is reported as the command's failure
      );
    };
    for (const signal of stopSignals()) process.once(signal, () => shutdown(signal));
    if (process.env.npm_lifecycle_event) followParent(() => shutdown("npm, which started it, has ended"));
    await starting;
    return new Promise<number>(() => {}); // runs until a signal
  },
};

/**
 * SIGTERM (a service manager, kill), SIGINT (Ctrl-C) and SIGHUP (its terminal closed) stop the
 * server cleanly. SIGHUP only when it was not ignored at the start: under nohup, a hangup must
 * leave it running, and a handler would override the ignoring.
 */
function stopSignals(): NodeJS.Signals[] {
  return hangupIgnored() ? ["SIGTERM", "SIGINT"] : ["SIGTERM", "SIGINT", "SIGHUP"];
}

/** Whether SIGHUP was ignored when the process started (nohup), from Linux's /proc; elsewhere assumed so. */
function hangupIgnored(): boolean {
  try {
    const mask = /^SigIgn:\s*([0-9a-f]+)$/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1];
    return mask !== undefined && (BigInt(`0x${mask}`) & 1n) === 1n; // SIGHUP is signal 1: the lowest bit
  } catch {
    return true; // without /proc, a hangup keeps its default: it ends the process
  }
}

/**
 * npm (`npm start`, `npx bun src/main.ts serve`) runs the server under `sh -c` and passes a SIGTERM
 * to that shell only, which dies of it without passing it on: the server went on, orphaned, holding
 * its port. Under npm, its going (the server handed to another parent) is the signal to stop.
 */
function followParent(stop: () => void): void {
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) stop();
  }, 250).unref();
}
