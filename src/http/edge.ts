// What the HTTP edge keeps beside the services: the API's token guard (with its rate limits), the
// dashboard's session guard, and the open streams.
import type { Services } from "../services.ts";
import { createGuard } from "./auth.ts";
import { createWebGuard } from "./session.ts";
import { StreamRegistry } from "./sse.ts";

export function createEdge(services: Services) {
  return {
    guard: createGuard(services.tokens, services.config),
    web: createWebGuard(services.accounts, services.config, services.proxySignIn),
    streams: new StreamRegistry(services.clock),
  };
}

export type Edge = ReturnType<typeof createEdge>;
