// Small named values the server keeps for itself.
import { eq } from "drizzle-orm";
import type { Db } from "./db.ts";
import { meta } from "./schema.ts";

export function metaStore(db: Db) {
  return {
    get(key: string): string | null {
      return db.select({ value: meta.value }).from(meta).where(eq(meta.key, key)).get()?.value ?? null;
    },
    /**
     * Inside a write transaction: writes and removes a row about a page in size, so it fails
     * where a new event would (a full disk, a database at its size limit) and leaves nothing.
     */
    probe(): void {
      db.insert(meta).values({ key: "readiness.probe", value: "x".repeat(4000) }).onConflictDoNothing().run();
      db.delete(meta).where(eq(meta.key, "readiness.probe")).run();
    },
    set(key: string, value: string): void {
      db.insert(meta).values({ key, value }).onConflictDoUpdate({ target: meta.key, set: { value } }).run();
    },
  };
}

export type MetaStore = ReturnType<typeof metaStore>;
