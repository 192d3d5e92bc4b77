// IP addresses as numbers: parsing (IPv4 dotted, IPv6 in any of its forms), ranges, and what kind
// of address each is. Every address lives in IPv6 space, an IPv4 one as its IPv4-mapped form
// (::ffff:a.b.c.d), so one range check serves both families; an IPv6 address that carries an
// IPv4 one (IPv4-mapped, IPv4-compatible, NAT64, 6to4) is of that IPv4 address's kind.
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

/** A range of addresses in IPv6 space, an IPv4 one as its IPv4-mapped form (::ffff:a.b.c.d). */
export type Range = { base: bigint; bits: number };

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
export function addressBits(ip: string): bigint | null {
  const bare = ip.replace(/^\[(.*)\]$/, "$1");
  if (isIP(bare.replace(/%.*$/, "")) === 4) {
    const v4 = ipv4Bits(bare);
    return v4 === null ? null : MAPPED | v4;
  }
  return isIP(bare.replace(/%.*$/, "")) === 6 ? ipv6Bits(bare) : null;
}

export function range(cidr: string): Range {
  const [address, prefix] = cidr.split("/") as [string, string];
  const bits = addressBits(address)!;
  const length = Number(prefix) + (address.includes(":") ? 0 : 96);
  return { base: bits & mask(length), bits: length };
}

/**
 * Comma-separated addresses and CIDR ranges (IPv4 or IPv6; an address alone is a range of one).
 * Throws a sentence that starts "must" (config.ts reads it as "it must ...") for anything else.
 */
export function parseRanges(text: string): Range[] {
  const out: Range[] = [];
  for (const entry of text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [address, prefix, extra] = entry.split("/");
    const max = address!.includes(":") ? 128 : 32;
    if (addressBits(address!) === null || extra !== undefined) throw new Error(`${mustRanges}: ${entry} is neither`);
    if (prefix !== undefined && !(/^\d{1,3}$/.test(prefix) && Number(prefix) <= max))
      throw new Error(`${mustRanges}: ${entry} has no prefix length from 0 to ${max} after its /`);
    out.push(range(`${address}/${prefix ?? max}`));
  }
  return out;
}

const mustRanges = "must be addresses or CIDR ranges separated by commas, such as 10.0.0.5,172.18.0.0/16,fd00::/8";

/** Whether `ip` (as a socket names it: IPv4, IPv6 or IPv4-mapped IPv6) is in one of `ranges`. */
export function inRanges(ranges: readonly Range[], ip: string): boolean {
  const bits = addressBits(ip);
  return bits !== null && ranges.some((r) => inRange(bits, r));
}

const mask = (length: number) => (ALL << BigInt(128 - length)) & ALL;
export const inRange = (bits: bigint, r: Range) => (bits & mask(r.bits)) === r.base;

/** The IPv4 address an IPv6 one carries, in IPv4-mapped form; null if it carries none. */
export function embeddedIpv4(bits: bigint): bigint | null {
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

export function kindOfBits(bits: bigint): AddressKind {
  const own = KINDS.find(([r]) => inRange(bits, r))?.[1];
  if (own) return own;
  const inside = embeddedIpv4(bits);
  return inside === null ? "public" : (KINDS.find(([r]) => inRange(inside, r))?.[1] ?? "public");
}

/** An address as a message shows it: an IPv6 one that carries an IPv4 one with that one beside it. */
export function shown(ip: string): string {
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
