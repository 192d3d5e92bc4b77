// Small named values the server keeps for itself.
import { eq } from "drizzle-orm";
import type { Db } from "./db.ts";
import { meta } from "./schema.ts";

export function metaStore(db: Db) {
  return {
    get(key: string): string | null {
      return db.select({ value: meta.value }).from(meta).where(eq(meta.key, key)).get()?.value ?? null;
    },
    set(key: string, value: string): void {
      db.insert(meta).values({ key, value }).onConflictDoUpdate({ target: meta.key, set: { value } }).run();
    },
  };
}

export type MetaStore = ReturnType<typeof metaStore>;
