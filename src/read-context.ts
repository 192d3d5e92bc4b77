// What a read knows of the request it serves: whether its client is still there. Set by the HTTP
// edge around a handler (http/routes.ts), read by the store's read gate (store/reads.ts), so a
// question whose client left is dropped from the queue or stopped in the database, without every
// service passing a signal down.
import { AsyncLocalStorage } from "node:async_hooks";

const current = new AsyncLocalStorage<AbortSignal>();

/** Runs `work` with reads on behalf of a client whose leaving `signal` reports. */
export function forClient<T>(signal: AbortSignal, work: () => T): T {
  return current.run(signal, work);
}

/** The signal of the client the current read is for, if any (commands and background jobs have none). */
export function clientSignal(): AbortSignal | undefined {
  return current.getStore();
}
