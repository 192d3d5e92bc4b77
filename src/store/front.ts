// The store's own methods, built the same way by both stores from ACCESS (store.ts): a write runs
// as a transaction of its own in the group commit; every other method is the read path's (a point
// lookup, or a read through the gate).
import { ACCESS, type Repositories, type Store } from "./store.ts";

/** An aggregate's methods, as the front and the read gate call them: by name. */
export type Methods = Record<string, (...args: unknown[]) => Promise<unknown>>;

/** `outside`: what each read method is wrapped in (PostgreSQL: what a failure of the database means). */
export function storeFront(
  read: Repositories,
  tx: Store["tx"],
  outside: (fn: (...args: unknown[]) => Promise<unknown>) => (...args: unknown[]) => Promise<unknown> = (fn) => fn,
): Repositories {
  const front: Record<string, Methods> = {};
  for (const [aggregate, methods] of Object.entries(ACCESS) as [keyof Repositories, Record<string, string>][]) {
    const reads = read[aggregate] as unknown as Methods;
    const built: Methods = {};
    for (const [name, access] of Object.entries(methods)) {
      built[name] =
        access === "write"
          ? (...args) => tx((r) => (r[aggregate] as unknown as Methods)[name]!(...args))
          : outside(reads[name]!);
    }
    front[aggregate] = built;
  }
  return front as unknown as Repositories;
}
