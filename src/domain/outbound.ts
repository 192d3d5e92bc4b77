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

export type AddressKind =
  | "loopback"
  | "unspecified"
  | "link-local"
  | "multicast"
  | "broadcast"
  | "reserved"
  | "private"
  | "public";

/** push: a device's push endpoint; integration: an integration's URL, or the SMTP server. */
export type Destination = "push" | "integration";

/** A range of addresses in IPv6 space, an IPv4 one as its IPv4-mapped form (::ffff:a.b.c.d). */
type Range = { base: bigint; bits: number };

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

const ALL = (1n << 128n) - 1n;
const MAPPED = 0xffff_0000_0000n;

function ipv4Bits(ip: string): bigint | null {
  const parts = ip.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^(0|[1-9]\d{0,2})$/.test(p) && Number(p) <= 255)) return null;
  return parts.reduce((n, p) => (n << 8n) | BigInt(p), 0n);
}

function ipv6Bits(ip: string): bigint | null {
  let text = ip.replace(/%.*$/, ""); // a zone (fe80::1%eth0) does not change the address
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = ipv4Bits(dotted[2]!);
    if (v4 === null) return null;
    text = `${dotted[1]}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(":") : [];
  const tail = halves.length === 2 ? (halves[1] ? halves[1].split(":") : []) : null;
  if (tail && head.length + tail.length > 7) return null;
  const groups = tail ? [...head, ...Array<string>(8 - head.length - tail.length).fill("0"), ...tail] : head;
  if (groups.length !== 8 || !groups.every((g) => /^[0-9a-f]{1,4}$/i.test(g))) return null;
  return groups.reduce((n, g) => (n << 16n) | BigInt(Number.parseInt(g, 16)), 0n);
}

/** An address (IPv4 dotted, or IPv6, brackets or not) in IPv6 space; null if it is not one. */
function addressBits(ip: string): bigint | null {
  const bare = ip.replace(/^\[(.*)\]$/, "$1");
  if (isIP(bare.replace(/%.*$/, "")) === 4) {
    const v4 = ipv4Bits(bare);
    return v4 === null ? null : MAPPED | v4;
  }
  return isIP(bare.replace(/%.*$/, "")) === 6 ? ipv6Bits(bare) : null;
}

function range(cidr: string): Range {
  const [address, prefix] = cidr.split("/") as [string, string];
  const bits = addressBits(address)!;
  const length = Number(prefix) + (address.includes(":") ? 0 : 96);
  return { base: bits & mask(length), bits: length };
}

const mask = (length: number) => (ALL << BigInt(128 - length)) & ALL;
const inRange = (bits: bigint, r: Range) => (bits & mask(r.bits)) === r.base;

/** The IPv4 address an IPv6 one carries, in IPv4-mapped form; null if it carries none. */
function embeddedIpv4(bits: bigint): bigint | null {
  if (EMBEDDING.some((r) => inRange(bits, r)) && bits > 1n) return MAPPED | (bits & 0xffff_ffffn);
  if (inRange(bits, SIX_TO_FOUR)) return MAPPED | ((bits >> 80n) & 0xffff_ffffn);
  return null;
}

const EMBEDDING = ["::ffff:0:0/96", "::/96", "::ffff:0:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48"].map(range);
const SIX_TO_FOUR = range("2002::/16");

// First match wins: broadcast before the reserved range it sits in.
const KINDS: [Range, AddressKind][] = (
  [
    ["::/128", "unspecified"],
    ["::1/128", "loopback"],
    ["fe80::/10", "link-local"],
    ["ff00::/8", "multicast"],
    ["fc00::/7", "private"],
    ["fec0::/10", "private"],
    ["0.0.0.0/8", "unspecified"],
    ["127.0.0.0/8", "loopback"],
    ["169.254.0.0/16", "link-local"],
    ["224.0.0.0/4", "multicast"],
    ["255.255.255.255/32", "broadcast"],
    ["240.0.0.0/4", "reserved"],
    ["10.0.0.0/8", "private"],
    ["172.16.0.0/12", "private"],
    ["192.168.0.0/16", "private"],
    ["100.64.0.0/10", "private"],
  ] as const
).map(([cidr, kind]) => [range(cidr), kind]);

function kindOfBits(bits: bigint): AddressKind {
  const own = KINDS.find(([r]) => inRange(bits, r))?.[1];
  if (own) return own;
  const inside = embeddedIpv4(bits);
  return inside === null ? "public" : (KINDS.find(([r]) => inRange(inside, r))?.[1] ?? "public");
}

/** An address as a message shows it: an IPv6 one that carries an IPv4 one with that one beside it. */
function shown(ip: string): string {
  const bits = addressBits(ip);
  if (bits === null || !ip.includes(":") || ip.includes(".")) return ip;
  const inside = embeddedIpv4(bits);
  if (inside === null) return ip;
  const v4 = Number(inside & 0xffff_ffffn);
  return `${ip} (${[v4 >>> 24, (v4 >>> 16) & 255, (v4 >>> 8) & 255, v4 & 255].join(".")})`;
}

/** What kind of address `ip` is (an IPv6 address carrying an IPv4 one: the IPv4 one's kind). */
export function addressKind(ip: string): AddressKind {
  const bits = addressBits(ip);
  if (bits === null) throw new Error(`${ip} is not an IP address`);
  return kindOfBits(bits);
}

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
