// The client's address: the socket's peer, unless that peer is a proxy we were told to trust, in
// which case the right-most X-Forwarded-For entry that is not itself a trusted proxy.
import type { Server } from "bun";

export function clientIp(
  request: Request,
  server: Server<unknown> | null | undefined,
  trustedProxies: readonly string[],
): string {
  const peer = normalise(server?.requestIP(request)?.address ?? "unknown");
  if (trustedProxies.length === 0 || !trustedProxies.includes(peer)) return peer;
  const forwarded = request.headers.get("x-forwarded-for");
  if (!forwarded) return peer;
  const hops = forwarded
    .split(",")
    .map((h) => normalise(h.trim()))
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    if (!trustedProxies.includes(hops[i]!)) return hops[i]!;
  }
  return hops[0] ?? peer;
}

function normalise(address: string): string {
  return address.startsWith("::ffff:") ? address.slice(7) : address;
}
