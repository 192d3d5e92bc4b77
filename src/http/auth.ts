// Bearer-token authentication and rate limits for the API. Failed attempts are charged to the
// client's IP, so guessing tokens runs into 429s; accepted requests are charged to the token
// (public tokens per token and client IP, since one ships to every visitor of a web page).
import type { Server } from "bun";
import type { Config } from "../config.ts";
import type { TokenService } from "../domain/tokens.ts";
import type { Rate } from "../domain/units.ts";
import { clientIp } from "./client-ip.ts";
import { Unauthorized } from "../errors.ts";
import { RateLimiter } from "../domain/limits.ts";
import type { Scope } from "../model/access.ts";

export type Guard = ReturnType<typeof createGuard>;

const HOW =
  "Send the header Authorization: Bearer <token>; create a token in Settings → API or with: signalboard token create --name NAME";

export function createGuard(
  tokens: TokenService,
  config: Pick<Config, "rateLimitFull" | "rateLimitPublic" | "rateLimitIp" | "trustProxy">,
) {
  const limiter = (rate: Rate | null) => (rate ? new RateLimiter(rate) : null);
  const full = limiter(config.rateLimitFull);
  const publicTokens = limiter(config.rateLimitPublic);
  const failures = limiter(config.rateLimitIp);

  function reject(ip: () => string, message: string): never {
    failures?.take(ip());
    throw new Unauthorized(message);
  }

  return {
    ip: (request: Request, server: Server<unknown> | null | undefined) => clientIp(request, server, config.trustProxy),

    async authenticate(request: Request, server: Server<unknown> | null | undefined): Promise<Scope> {
      // The peer's address costs a system call: asked for only when a limit needs it.
      const ip = () => this.ip(request, server);
      const header = request.headers.get("authorization");
      if (!header) reject(ip, `Missing Authorization header. ${HOW}`);
      const match = /^Bearer +([^\s]+) *$/i.exec(header);
      if (!match) reject(ip, `Malformed Authorization header: expected "Bearer <token>". ${HOW}`);
      const scope = await tokens.authenticate(match[1]!);
      if (scope === "unknown") reject(ip, `Unknown token. ${HOW}`);
      if (scope === "revoked") reject(ip, `This token was revoked. ${HOW}`);
      if (scope.kind === "full") full?.take(String(scope.tokenId));
      else publicTokens?.take(`${scope.tokenId}:${ip()}`);
      return scope;
    },

    /** Refuses a request whose token was revoked since authenticate() (while its body came in, say). */
    async recheck(scope: Scope): Promise<void> {
      if (!(await tokens.stillValid(scope))) throw new Unauthorized(`This token was revoked. ${HOW}`);
    },
  };
}
