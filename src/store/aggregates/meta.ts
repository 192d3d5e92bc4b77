// Small named values the server keeps for itself.
import { eq } from "drizzle-orm";
import type { MetaRepository } from "../store.ts";
import type { Sql } from "./sql.ts";

/**
 * Four pages: a database that cannot grow by that much is full for events too (one that fitted
 * a single page in the free space of a half-used one would pass, while a 5 KB event fails).
 */
const PROBE_BYTES = 16_000;

export function metaStore({ db, t }: Sql): MetaRepository {
  return {
    async get(key) {
      const [row] = await db.select({ value: t.meta.value }).from(t.meta).where(eq(t.meta.key, key)).limit(1);
      return row?.value ?? null;
    },

    async set(key, value) {
      await db.insert(t.meta).values({ key, value }).onConflictDoUpdate({ target: t.meta.key, set: { value } });
    },

    // Inside a write transaction: writes and removes a row of a few pages, so it fails where a new
    // event would (a full disk, a database at its size limit) and leaves nothing.
    async probe() {
      await db
        .insert(t.meta)
        .values({ key: "readiness.probe", value: "x".repeat(PROBE_BYTES) })
        .onConflictDoNothing();
      await db.delete(t.meta).where(eq(t.meta.key, "readiness.probe"));
    },
  };
}
