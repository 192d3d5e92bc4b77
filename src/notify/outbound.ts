// The one way out: every request the server makes on someone's behalf (Web Push, each integration
// kind, SMTP) goes through here. The host is resolved once and checked (domain/outbound.ts), and
// the connection is made to a checked address, never to the name again: a name that answers
// differently on the next lookup (DNS rebinding) cannot slip past. Over https the request still
// names the host: TLS sends it (SNI) and verifies the certificate for it, and the Host header
// carries it, so the receiver sees what it would have seen. Redirects are not followed.
import { connect, isIP, type Socket } from "node:net";
import {
  checkHost,
  checkUrl,
  type Destination,
  describeRefusal,
  type OutboundRules,
  type Verdict,
} from "../domain/outbound.ts";

/** A destination the rules refuse: its attempt fails without a connection, and trying again will not help. */
export class DestinationRefused extends Error {
  constructor(why: string) {
    super(`destination refused: ${why}`);
  }
}

/** The host did not resolve: perhaps it will later. */
export class Unresolved extends Error {}

function connectable(verdict: Verdict): string[] {
  if (verdict.ok) return verdict.addresses;
  if ("refusal" in verdict) throw new DestinationRefused(describeRefusal(verdict.refusal));
  throw new Unresolved(verdict.unresolved);
}

/** Errors that say no connection was made, so the next checked address may be tried. */
const NOT_CONNECTED = new Set(["ECONNREFUSED", "ENETUNREACH", "EHOSTUNREACH", "EADDRNOTAVAIL", "ConnectionRefused"]);
const notConnected = (error: unknown) => NOT_CONNECTED.has((error as { code?: string }).code ?? "");

/**
 * fetch() through the rules: the request goes to an address of `url`'s host that was checked
 * (the next one only if the previous refused the connection). Throws DestinationRefused or
 * Unresolved before any connection; otherwise as fetch does.
 */
export async function outboundFetch(
  rules: OutboundRules,
  destination: Destination,
  url: string,
  init: RequestInit & { signal: AbortSignal },
): Promise<Response> {
  const target = new URL(url);
  const addresses = connectable(await checkUrl(rules, destination, target, init.signal));
  const name = target.hostname.replace(/^\[(.*)\]$/, "$1");
  const headers = new Headers(init.headers);
  headers.set("Host", target.host);
  let failure: unknown;
  for (const address of addresses) {
    const direct = new URL(target);
    direct.hostname = isIP(address) === 6 ? `[${address}]` : address;
    try {
      return await fetch(direct, {
        ...init,
        headers,
        redirect: "manual",
        // The certificate is verified for the name, not for the address connected to.
        ...(target.protocol === "https:" && !isIP(name) ? { tls: { serverName: name } } : {}),
      });
    } catch (error) {
      if (!notConnected(error)) throw error;
      failure = error;
    }
  }
  throw failure;
}

/** A TCP connection to `host`:`port` through the rules (the SMTP server's); TLS, if any, is the caller's. */
export async function outboundSocket(
  rules: OutboundRules,
  host: string,
  port: number,
  signal: AbortSignal,
): Promise<Socket> {
  const addresses = connectable(await checkHost(rules, "integration", host, signal));
  let failure: unknown;
  for (const address of addresses) {
    try {
      return await open(address, port, signal);
    } catch (error) {
      if (!notConnected(error)) throw error;
      failure = error;
    }
  }
  throw failure;
}

function open(address: string, port: number, signal: AbortSignal): Promise<Socket> {
  signal.throwIfAborted();
  return new Promise<Socket>((resolve, reject) => {
    const socket = connect({ host: address, port });
    const settle = () => {
      signal.removeEventListener("abort", abort);
      socket.removeListener("error", fail);
      socket.removeListener("connect", connected);
    };
    const abort = () => {
      settle();
      socket.destroy();
      reject(signal.reason);
    };
    const fail = (error: Error) => {
      settle();
      reject(error);
    };
    const connected = () => {
      settle();
      resolve(socket);
    };
    signal.addEventListener("abort", abort, { once: true });
    socket.once("error", fail);
    socket.once("connect", connected);
  });
}
