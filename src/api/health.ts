// Liveness and readiness for load balancers and install scripts.
import { Elysia } from "elysia";
import type { Deps } from "../app.ts";
import { StorageUnavailable } from "../http/errors.ts";
import { ok } from "./views.ts";

export function healthApi({ store, version }: Deps) {
  return new Elysia({ name: "api.health" })
    .get("/healthz", () => ok({ status: "ok", version }))
    .get("/readyz", () => {
      try {
        store.sqlite.query("SELECT 1").get();
      } catch {
        throw new StorageUnavailable("the database does not answer");
      }
      return ok({ status: "ready", version });
    });
}
