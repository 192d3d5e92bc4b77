// Small named values the server keeps for itself.
import { eq } from "drizzle-orm";
import type { MetaRepository } from "../store.ts";
import type { Ctx } from "./context.ts";
import { meta } from "./schema.ts";

/** A few pages: a database that cannot take this cannot take events either. */
const PROBE_BYTES = 16_000;

export function metaStore({ db }: Ctx): MetaRepository {
  return {
    async get(key) {
      return (await db.select({ value: meta.value }).from(meta).where(eq(meta.key, key)).limit(1))[0]?.value ?? null;
    },
    async set(key, value) {
      await db.insert(meta).values({ key, value }).onConflictDoUpdate({ target: meta.key, set: { value } });
    },
    async probe() {
      await db
        .insert(meta)
        .values({ key: "readiness.probe", value: "x".repeat(PROBE_BYTES) })
        .onConflictDoNothing();
      await db.delete(meta).where(eq(meta.key, "readiness.probe"));
    },
  };
}
