// Where the server may send on someone's behalf: the rules every outbound destination is checked
// against (push endpoints, every integration kind, the SMTP server), when it is saved and again at
// each send. A host is resolved once and every address it resolves to is checked; the sender then
// connects to one of those addresses (notify/outbound.ts), never to the name again, so a name that
// answers differently on the next lookup (DNS rebinding) cannot slip past.
//
// Always refused unless the operator lists them in SIGNALBOARD_OUTBOUND_ALLOW: this machine
// (loopback, unspecified), link-local (where cloud metadata services answer), multicast, broadcast
// and reserved addresses. An IPv6 address that carries an IPv4 one (IPv4-mapped, IPv4-compatible,
// NAT64, 6to4) is judged by the IPv4 address inside. Numeric spellings (2852039166, 0xa9fea9fe,
// 0177.0.0.1, 127.1) never reach these rules as names: the WHATWG URL parser turns them into
// dotted addresses first. Private networks are fine for integrations (a Gotify on the LAN) unless
// SIGNALBOARD_OUTBOUND_PRIVATE=deny; push endpoints are refused them, and must be https: (push
// services are public), unless the operator lists them.
import { lookup as dnsLookup } from "node:dns/promises";
import { isIP } from "node:net";
import {
  type AddressKind,
  addressBits,
  embeddedIpv4,
  inRange,
  kindOfBits,
  type Range,
  range,
  shown,
} from "./addresses.ts";

/** push: a device's push endpoint; integration: an integration's URL, or the SMTP server. */
export type Destination = "push" | "integration";

/** SIGNALBOARD_OUTBOUND_ALLOW: addresses and ranges, and host names (exact, or "*.lan" for every name under lan). */
export type AllowList = { ranges: Range[]; names: string[] };

/** A host's addresses, every one, as the system's resolver gives them. */
export type Lookup = (host: string) => Promise<string[]>;

export type OutboundRules = { allow: AllowList; privateNetworks: "allow" | "deny"; lookup: Lookup };

/** Why a destination is refused, and the SIGNALBOARD_OUTBOUND_ALLOW entry that would let it through. */
export type Refusal = { why: string; allowWith: string };

export type Verdict =
  | { ok: true; addresses: string[] }
  | { ok: false; refusal: Refusal }
  | { ok: false; unresolved: string };

export const systemLookup: Lookup = async (host) => (await dnsLookup(host, { all: true })).map((a) => a.address);

export const NO_ALLOW_LIST: AllowList = { ranges: [], names: [] };

const WORDS: Record<Exclude<AddressKind, "public" | "private">, string> = {
  loopback: "this machine (a loopback address)",
  unspecified: "an unspecified address, which reaches this machine",
  "link-local": "a link-local address, where cloud metadata services answer",
  multicast: "a multicast address",
  broadcast: "the broadcast address",
  reserved: "a reserved address",
};

/** Names that mean this machine or a cloud's metadata service wherever they are looked up. */
const NAMES: [RegExp, AddressKind][] = [
  [/^(.+\.)?localhost$/, "loopback"],
  [/^metadata\.google\.internal$|^metadata\.goog$/, "link-local"],
];

const LABEL = /^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$/;

/** A host as rules compare it: lowercase, without brackets or a final dot. */
export function normalHost(host: string): string {
  return host
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1")
    .replace(/\.+$/, "");
}

/** The host of a URL of any scheme (smtp:// too), with the WHATWG parser's spelling of addresses. */
export function hostOf(url: string | URL): string {
  const parsed = typeof url === "string" ? new URL(url.replace(/^[a-z][a-z0-9+.-]*:/i, "http:")) : url;
  return normalHost(parsed.hostname);
}

/**
 * SIGNALBOARD_OUTBOUND_ALLOW: comma-separated addresses, CIDR ranges and host names. Throws a
 * sentence that starts "must" (config.ts reads it as "it must ...") for an entry that is none of those.
 */
export function parseAllowList(text: string): AllowList {
  const out: AllowList = { ranges: [], names: [] };
  for (const entry of text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [address, prefix, extra] = entry.split("/");
    const bits = addressBits(address!);
    if (bits !== null) {
      const max = address!.includes(":") ? 128 : 32;
      if (extra !== undefined || (prefix !== undefined && !(/^\d{1,3}$/.test(prefix) && Number(prefix) <= max)))
        throw new Error(`${mustList}: ${entry} has no prefix length from 0 to ${max} after its /`);
      out.ranges.push(range(`${address}/${prefix ?? max}`));
      continue;
    }
    const name = normalHost(entry);
    const labels = name.replace(/^\*\./, "").split(".");
    if (prefix !== undefined || !labels.every((l) => LABEL.test(l)) || /^(\d+|0x[0-9a-f]*)$/.test(labels.at(-1)!))
      throw new Error(`${mustList}: ${entry} is none of those`);
    out.names.push(name);
  }
  return out;
}

const mustList =
  "must be addresses, CIDR ranges or host names separated by commas, such as 127.0.0.1/32,192.168.1.0/24,ntfy.lan";

const listedName = (allow: AllowList, host: string) =>
  allow.names.some((n) => n === host || (n.startsWith("*.") && host.endsWith(n.slice(1))));

function listedAddress(allow: AllowList, bits: bigint): boolean {
  const inside = embeddedIpv4(bits);
  return allow.ranges.some((r) => inRange(bits, r) || (inside !== null && inRange(inside, r)));
}

/** Why one address is refused for `destination` ("a link-local address, ..."), or null. */
function refusalOf(
  rules: Pick<OutboundRules, "allow" | "privateNetworks">,
  destination: Destination,
  address: string,
): string | null {
  const bits = addressBits(address);
  if (bits === null) return "not an IP address";
  if (listedAddress(rules.allow, bits)) return null;
  const kind = kindOfBits(bits);
  if (kind === "public") return null;
  if (kind !== "private") return WORDS[kind];
  if (destination === "push") return "a private network address (push services are public)";
  if (rules.privateNetworks === "deny")
    return "a private network address, which SIGNALBOARD_OUTBOUND_PRIVATE=deny refuses";
  return null;
}

/**
 * What can be said of `host` without a lookup: refused (an address or a name the rules refuse),
 * allowed (a listed name, or an allowed address: its addresses), or a name to resolve (null).
 */
export function judgeLiteral(
  rules: Pick<OutboundRules, "allow" | "privateNetworks">,
  destination: Destination,
  rawHost: string,
): Verdict | null {
  const host = normalHost(rawHost);
  if (addressBits(host) !== null) {
    const why = refusalOf(rules, destination, host);
    return why
      ? { ok: false, refusal: { why: `${shown(host)} is ${why}`, allowWith: host } }
      : { ok: true, addresses: [host] };
  }
  if (listedName(rules.allow, host)) return null;
  const named = NAMES.find(([pattern]) => pattern.test(host))?.[1];
  if (named && named !== "public" && named !== "private")
    return { ok: false, refusal: { why: `${host} names ${WORDS[named]}`, allowWith: host } };
  return null;
}

/** Races `promise` with `signal` (a lookup cannot be cancelled, only no longer waited for). */
function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener("abort", abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
  });
}

/**
 * Resolves `host` once and checks every address it has: all must be allowed. The addresses come
 * back in the order to try them (IPv4 first): connect to those, not to the name.
 */
export async function checkHost(
  rules: OutboundRules,
  destination: Destination,
  rawHost: string,
  signal?: AbortSignal,
): Promise<Verdict> {
  const host = normalHost(rawHost);
  const literal = judgeLiteral(rules, destination, host);
  if (literal) return literal;
  let addresses: string[];
  try {
    addresses = await unlessAborted(rules.lookup(host), signal);
  } catch (error) {
    if (signal?.aborted) throw error;
    const code = (error as { code?: string }).code;
    return { ok: false, unresolved: `could not resolve ${host}${code ? ` (${code})` : ""}` };
  }
  if (!addresses.length) return { ok: false, unresolved: `could not resolve ${host}: it has no address` };
  if (!listedName(rules.allow, host))
    for (const address of addresses) {
      const why = refusalOf(rules, destination, address);
      if (why) return { ok: false, refusal: { why: `${host} resolves to ${shown(address)}, ${why}`, allowWith: host } };
    }
  const v4 = addresses.filter((a) => isIP(a) === 4);
  return { ok: true, addresses: [...v4, ...addresses.filter((a) => isIP(a) !== 4)] };
}

/** As checkHost, for a URL; a push endpoint must also be https:, unless the operator lists where it goes. */
export async function checkUrl(
  rules: OutboundRules,
  destination: Destination,
  url: string | URL,
  signal?: AbortSignal,
): Promise<Verdict> {
  let parsed: URL;
  try {
    parsed = typeof url === "string" ? new URL(url) : url;
  } catch {
    return { ok: false, refusal: { why: "it is not a URL", allowWith: "" } };
  }
  const host = hostOf(parsed);
  const verdict = await checkHost(rules, destination, host, signal);
  if (destination !== "push" || parsed.protocol === "https:" || "refusal" in verdict) return verdict;
  const listed =
    listedName(rules.allow, host) ||
    (verdict.ok && verdict.addresses.every((a) => listedAddress(rules.allow, addressBits(a)!)));
  if (listed) return verdict;
  return {
    ok: false,
    refusal: {
      why: `push endpoints are https: URLs (every push service's is), and this one is ${parsed.protocol}`,
      allowWith: host,
    },
  };
}

/** A refusal in words, with the setting that would allow it. */
export function describeRefusal(r: Refusal): string {
  return r.allowWith ? `${r.why}; SIGNALBOARD_OUTBOUND_ALLOW=${r.allowWith} would allow it` : r.why;
}

/** How long a save waits for a name to resolve; past it (or if it does not resolve) the name is checked when sent. */
const SAVE_LOOKUP_MS = 3000;

/**
 * When a destination is saved: why the rules refuse it, or null. A name that does not resolve
 * from here (a LAN name, seen from where the CLI runs) is let through: it is checked at each send.
 */
export async function destinationProblem(
  rules: OutboundRules,
  destination: Destination,
  url: string,
): Promise<string | null> {
  let verdict: Verdict;
  try {
    verdict = await checkUrl(rules, destination, url, AbortSignal.timeout(SAVE_LOOKUP_MS));
  } catch {
    return null; // the lookup took too long
  }
  return "refusal" in verdict ? describeRefusal(verdict.refusal) : null;
}
