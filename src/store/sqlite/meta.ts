// Small named values the server keeps for itself.
import { eq } from "drizzle-orm";
import type { Db } from "./db.ts";
import { meta } from "./schema.ts";

/**
 * Four pages: a database that cannot grow by that much is full for events too (one that fitted
 * a single page in the free space of a half-used one would pass, while a 5 KB event fails).
 */
const PROBE_BYTES = 16_000;

export function metaStore(db: Db) {
  return {
    get(key: string): string | null {
      return db.select({ value: meta.value }).from(meta).where(eq(meta.key, key)).get()?.value ?? null;
    },
    /**
     * Inside a write transaction: writes and removes a row of a few pages, so it fails where a
     * new event would (a full disk, a database at its size limit) and leaves nothing.
     */
    probe(): void {
      db.insert(meta)
        .values({ key: "readiness.probe", value: "x".repeat(PROBE_BYTES) })
        .onConflictDoNothing()
        .run();
      db.delete(meta).where(eq(meta.key, "readiness.probe")).run();
    },
    set(key: string, value: string): void {
      db.insert(meta).values({ key, value }).onConflictDoUpdate({ target: meta.key, set: { value } }).run();
    },
  };
}
