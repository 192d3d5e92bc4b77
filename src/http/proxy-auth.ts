// The header a trusted sign-in proxy names the person in (SIGNALBOARD_AUTH_PROXY_HEADER), believed
// only when the request's peer (the socket's, never X-Forwarded-For) is in one of the ranges of
// SIGNALBOARD_AUTH_PROXY_TRUSTED. From any other peer it is ignored, and that is logged once per
// process: a proxy that reaches us from an address left out is a mistake to point out, and a
// forged header from anyone else must not fill the log.
import type { Server } from "bun";
import type { Config } from "../config.ts";
import { inRanges } from "../domain/addresses.ts";
import { log } from "../logger.ts";
import { clientIp } from "./client-ip.ts";

export type ProxyHeader = ReturnType<typeof proxyHeader>;

export function proxyHeader({
  authProxyHeader: header,
  authProxyTrusted: trusted,
}: Pick<Config, "authProxyHeader" | "authProxyTrusted">) {
  let told = false;
  return {
    /** The name the header gives, from a trusted peer; null without one, or from another peer. */
    named(request: Request, server: Server<unknown> | null): string | null {
      const value = header ? request.headers.get(header)?.trim() : undefined;
      if (!value) return null;
      const peer = clientIp(request, server, []);
      if (inRanges(trusted, peer)) return value;
      if (!told) {
        told = true;
        log.warn(
          `a request from ${peer} carried the sign-in header ${header}, but SIGNALBOARD_AUTH_PROXY_TRUSTED does not list that address: the header was ignored. If the sign-in proxy is there, add its address; this is said once`,
          { peer, header },
        );
      }
      return null;
    },
  };
}
