// The outbound rules (src/domain/outbound.ts): what kind of address each spelling is, what is
// refused for a push endpoint and for an integration, the operator's allow list (addresses, CIDR
// ranges, names), and that a name is judged by every address it resolves to.
import { describe, expect, test } from "bun:test";
import { type AddressKind, addressKind } from "../../src/domain/addresses.ts";
import {
  checkHost,
  checkUrl,
  describeRefusal,
  destinationProblem,
  hostOf,
  type Lookup,
  NO_ALLOW_LIST,
  type OutboundRules,
  parseAllowList,
} from "../../src/domain/outbound.ts";

const nowhere: Lookup = async (host) => {
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
};

function rules(allow = "", privateNetworks: "allow" | "deny" = "allow", lookup: Lookup = nowhere): OutboundRules {
  return { allow: parseAllowList(allow), privateNetworks, lookup };
}

const fixed =
  (table: Record<string, string[]>): Lookup =>
  async (host) => {
    if (!table[host]) return nowhere(host);
    return table[host]!;
  };

describe("kinds of address", () => {
  test("IPv4", () => {
    const cases: [string, AddressKind][] = [
      ["127.0.0.1", "loopback"],
      ["127.255.255.254", "loopback"],
      ["0.0.0.0", "unspecified"],
      ["0.1.2.3", "unspecified"],
      ["169.254.169.254", "link-local"],
      ["169.254.0.1", "link-local"],
      ["224.0.0.1", "multicast"],
      ["239.255.255.250", "multicast"],
      ["255.255.255.255", "broadcast"],
      ["240.0.0.1", "reserved"],
      ["10.0.0.1", "private"],
      ["172.16.0.1", "private"],
      ["172.31.255.255", "private"],
      ["172.32.0.1", "public"],
      ["192.168.1.1", "private"],
      ["100.64.0.1", "private"],
      ["100.127.255.255", "private"],
      ["100.128.0.1", "public"],
      ["8.8.8.8", "public"],
      ["93.184.215.14", "public"],
    ];
    for (const [ip, kind] of cases) expect({ ip, kind: addressKind(ip) }).toEqual({ ip, kind });
  });

  test("IPv6, and the IPv4 address inside its mapped, compatible, NAT64 and 6to4 forms", () => {
    const cases: [string, AddressKind][] = [
      ["::1", "loopback"],
      ["0:0:0:0:0:0:0:1", "loopback"],
      ["::", "unspecified"],
      ["fe80::1", "link-local"],
      ["febf:ffff::1", "link-local"],
      ["fe80::1%eth0", "link-local"],
      ["ff02::1", "multicast"],
      ["fc00::1", "private"],
      ["fd12:3456::1", "private"],
      ["fec0::1", "private"],
      ["2606:4700::1111", "public"],
      ["::ffff:127.0.0.1", "loopback"],
      ["::ffff:7f00:1", "loopback"],
      ["::ffff:a9fe:a9fe", "link-local"],
      ["::ffff:169.254.169.254", "link-local"],
      ["::ffff:10.0.0.1", "private"],
      ["::ffff:8.8.8.8", "public"],
      ["::127.0.0.1", "loopback"],
      ["::7f00:1", "loopback"],
      ["::a9fe:a9fe", "link-local"],
      ["::ffff:0:127.0.0.1", "loopback"],
      ["64:ff9b::a9fe:a9fe", "link-local"],
      ["64:ff9b::127.0.0.1", "loopback"],
      ["64:ff9b::8.8.8.8", "public"],
      ["64:ff9b:1::7f00:1", "loopback"],
      ["2002:7f00:1::1", "loopback"],
      ["2002:a9fe:a9fe::", "link-local"],
      ["2002:808:808::1", "public"],
      ["[::1]", "loopback"],
    ];
    for (const [ip, kind] of cases) expect({ ip, kind: addressKind(ip) }).toEqual({ ip, kind });
  });

  test("numeric spellings reach the rules as dotted addresses: the WHATWG URL parser rewrites them", () => {
    const spellings: [string, string][] = [
      ["http://2852039166/", "169.254.169.254"],
      ["http://0xa9fea9fe/", "169.254.169.254"],
      ["http://0251.0376.0251.0376/", "169.254.169.254"],
      ["http://169.254.43518/", "169.254.169.254"],
      ["http://127.1/", "127.0.0.1"],
      ["http://0x7f.1/", "127.0.0.1"],
      ["http://0177.0.0.1/", "127.0.0.1"],
      ["http://0/", "0.0.0.0"],
      ["http://[::ffff:169.254.169.254]/", "::ffff:a9fe:a9fe"],
      ["http://[0:0:0:0:0:0:0:1]/", "::1"],
      ["http://LOCALHOST./", "localhost"],
      ["http://ｌｏｃａｌｈｏｓｔ/", "localhost"],
      ["smtp://user:pass@0x7f.1:25", "127.0.0.1"],
    ];
    for (const [url, host] of spellings) expect({ url, host: hostOf(url) }).toEqual({ url, host });
    // What the parser refuses never becomes a name to resolve.
    for (const url of ["http://1.2.3.4.5/", "http://256.0.0.1/", "http://0x100000000/", "http://[fe80::1%25eth0]/"])
      expect(() => new URL(url)).toThrow();
  });
});

describe("what is refused", () => {
  test("for an integration: this machine, link-local, multicast, broadcast, reserved; private networks are fine", async () => {
    for (const host of [
      "127.0.0.1",
      "::1",
      "0.0.0.0",
      "::",
      "169.254.169.254",
      "fe80::1",
      "::ffff:a9fe:a9fe",
      "::a9fe:a9fe",
      "64:ff9b::a9fe:a9fe",
      "224.0.0.1",
      "255.255.255.255",
      "240.0.0.1",
      "localhost",
      "LocalHost.",
      "api.localhost",
      "metadata.google.internal",
      "metadata.goog",
    ]) {
      const verdict = await checkHost(rules(), "integration", host);
      expect({ host, refused: "refusal" in verdict }).toEqual({ host, refused: true });
    }
    for (const host of ["10.0.0.1", "192.168.1.20", "172.20.0.5", "100.100.0.1", "fd00::5", "8.8.8.8"])
      expect(await checkHost(rules(), "integration", host)).toEqual({ ok: true, addresses: [host] });
  });

  test("SIGNALBOARD_OUTBOUND_PRIVATE=deny refuses private networks for integrations too", async () => {
    for (const host of ["10.0.0.1", "192.168.1.20", "172.20.0.5", "100.100.0.1", "fd00::5", "::ffff:10.0.0.1"]) {
      const verdict = await checkHost(rules("", "deny"), "integration", host);
      expect("refusal" in verdict && verdict.refusal.why).toContain("SIGNALBOARD_OUTBOUND_PRIVATE=deny");
    }
    expect((await checkHost(rules("", "deny"), "integration", "8.8.8.8")).ok).toBe(true);
  });

  test("a push endpoint: private networks too, and it must be https:", async () => {
    for (const url of ["https://10.0.0.1/p", "https://192.168.0.9/p", "https://[fd00::1]/p", "https://100.64.1.1/p"]) {
      const verdict = await checkUrl(rules(), "push", url);
      expect("refusal" in verdict && verdict.refusal.why).toContain("a private network address");
    }
    const http = await checkUrl(rules(), "push", "http://8.8.8.8/push");
    expect("refusal" in http && describeRefusal(http.refusal)).toBe(
      "push endpoints are https: URLs (every push service's is), and this one is http:; SIGNALBOARD_OUTBOUND_ALLOW=8.8.8.8 would allow it",
    );
    // An unresolvable name over http: is refused as well (only an https: one waits for its send).
    expect("refusal" in (await checkUrl(rules(), "push", "http://push.example.com/x"))).toBe(true);
    expect(await checkUrl(rules(), "push", "https://push.example.com/x")).toEqual({
      ok: false,
      unresolved: "could not resolve push.example.com (ENOTFOUND)",
    });
    expect(await checkUrl(rules(), "push", "https://8.8.8.8/push")).toEqual({ ok: true, addresses: ["8.8.8.8"] });
  });

  test("a name is judged by every address it resolves to; the addresses come back IPv4 first", async () => {
    const lookup = fixed({
      "ok.example": ["2606:4700::1111", "93.184.215.14"],
      "mixed.example": ["93.184.215.14", "127.0.0.1"],
      "mapped.example": ["::ffff:169.254.169.254"],
      "lan.example": ["192.168.1.5"],
      "empty.example": [],
    });
    expect(await checkHost(rules("", "allow", lookup), "integration", "ok.example")).toEqual({
      ok: true,
      addresses: ["93.184.215.14", "2606:4700::1111"],
    });
    const mixed = await checkHost(rules("", "allow", lookup), "integration", "mixed.example");
    expect("refusal" in mixed && describeRefusal(mixed.refusal)).toBe(
      "mixed.example resolves to 127.0.0.1, this machine (a loopback address); SIGNALBOARD_OUTBOUND_ALLOW=mixed.example would allow it",
    );
    expect("refusal" in (await checkHost(rules("", "allow", lookup), "integration", "mapped.example"))).toBe(true);
    expect((await checkHost(rules("", "allow", lookup), "integration", "lan.example")).ok).toBe(true);
    expect("refusal" in (await checkUrl(rules("", "allow", lookup), "push", "https://lan.example/"))).toBe(true);
    expect(await checkHost(rules("", "allow", lookup), "integration", "empty.example")).toEqual({
      ok: false,
      unresolved: "could not resolve empty.example: it has no address",
    });
  });

  test("a refusal says what the address is and the entry that would allow it", async () => {
    const cases: [string, string][] = [
      [
        "169.254.169.254",
        "169.254.169.254 is a link-local address, where cloud metadata services answer; SIGNALBOARD_OUTBOUND_ALLOW=169.254.169.254 would allow it",
      ],
      ["::1", "::1 is this machine (a loopback address); SIGNALBOARD_OUTBOUND_ALLOW=::1 would allow it"],
      [
        "::ffff:a9fe:a9fe",
        "::ffff:a9fe:a9fe (169.254.169.254) is a link-local address, where cloud metadata services answer; SIGNALBOARD_OUTBOUND_ALLOW=::ffff:a9fe:a9fe would allow it",
      ],
      [
        "localhost",
        "localhost names this machine (a loopback address); SIGNALBOARD_OUTBOUND_ALLOW=localhost would allow it",
      ],
    ];
    for (const [host, words] of cases) {
      const verdict = await checkHost(rules(), "integration", host);
      expect("refusal" in verdict && describeRefusal(verdict.refusal)).toBe(words);
    }
  });

  test("when saved, a name that does not resolve is let through (it is checked when sent); a refused one is not", async () => {
    expect(await destinationProblem(rules(), "integration", "http://nas.lan/hook")).toBeNull();
    expect(await destinationProblem(rules(), "integration", "http://[::1]:8080/")).toStartWith("::1 is this machine");
    // A resolver that never answers: the save does not wait for it.
    const hanging = rules("", "allow", () => new Promise<string[]>(() => {}));
    expect(await destinationProblem(hanging, "integration", "http://slow.example/")).toBeNull();
  });
});

describe("SIGNALBOARD_OUTBOUND_ALLOW", () => {
  test("addresses, CIDR ranges (IPv4 and IPv6) and names; an IPv4 range covers that address's IPv6 forms", async () => {
    const r = rules(
      "127.0.0.1/32, 10.0.0.0/8 ,fd00::/8,169.254.169.254,::1,ntfy.lan,*.home.arpa,LocalHost",
      "allow",
      fixed({ localhost: ["127.0.0.1"] }),
    );
    for (const host of [
      "127.0.0.1",
      "::ffff:127.0.0.1",
      "64:ff9b::7f00:1",
      "169.254.169.254",
      "::1",
      "10.9.8.7",
      "fd12::1",
      "localhost",
    ])
      expect({ host, ok: (await checkHost(r, "integration", host)).ok }).toEqual({ host, ok: true });
    for (const host of ["127.0.0.2", "169.254.169.253", "fe80::1", "::2"])
      expect({ host, ok: (await checkHost(r, "integration", host)).ok }).toEqual({ host, ok: false });
    // Allowed addresses are allowed for push endpoints too, and over http:.
    expect((await checkUrl(r, "push", "http://127.0.0.1:8080/push/1")).ok).toBe(true);
    expect((await checkUrl(r, "push", "http://10.1.1.1/push/1")).ok).toBe(true);
    expect((await checkUrl(r, "push", "http://127.0.0.2/push/1")).ok).toBe(false);
  });

  test("a listed name is allowed whatever it resolves to, and still connected to by the address it resolved to", async () => {
    const lookup = fixed({ "ntfy.lan": ["127.0.0.1"], "gotify.home.arpa": ["::1"], "home.arpa": ["127.0.0.1"] });
    const r = rules("ntfy.lan,*.home.arpa", "allow", lookup);
    expect(await checkHost(r, "integration", "ntfy.lan")).toEqual({ ok: true, addresses: ["127.0.0.1"] });
    expect(await checkHost(r, "integration", "NTFY.lan.")).toEqual({ ok: true, addresses: ["127.0.0.1"] });
    expect(await checkHost(r, "integration", "gotify.home.arpa")).toEqual({ ok: true, addresses: ["::1"] });
    expect((await checkHost(r, "integration", "home.arpa")).ok).toBe(false); // *.x covers the names under x only
    expect((await checkUrl(r, "push", "http://ntfy.lan/push")).ok).toBe(true);
  });

  test("a host's bits are masked by its prefix; empty is none; a bad entry is refused in a sentence", () => {
    expect(parseAllowList("")).toEqual(NO_ALLOW_LIST);
    expect(parseAllowList(" , ")).toEqual(NO_ALLOW_LIST);
    expect(parseAllowList("10.1.2.3/8")).toEqual(parseAllowList("10.0.0.0/8"));
    for (const bad of [
      "10.0.0.0/33",
      "::1/129",
      "10.0.0.0/x",
      "10.0.0.0/8/1",
      "300.1.1.1",
      "127.1",
      "0x7f.1",
      "http://ntfy.lan",
      "ntfy lan",
      "ntfy.lan/24",
      "-bad.lan",
    ])
      expect(() => parseAllowList(bad)).toThrow(
        /^must be addresses, CIDR ranges or host names separated by commas, such as 127\.0\.0\.1\/32,192\.168\.1\.0\/24,ntfy\.lan: /,
      );
  });
});
