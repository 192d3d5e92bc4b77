import { describe, expect, test } from "bun:test";
import { ConfigError, describeSettings, loadConfig } from "../../src/config.ts";
import { parseByteSize, parseDuration, parseRate } from "../../src/domain/units.ts";

describe("configuration", () => {
  test("defaults", () => {
    const c = loadConfig({}, {});
    expect(c.port).toBe(8080);
    expect(c.host).toBe("0.0.0.0");
    expect(c.dataDir).toEndWith("/data");
    expect(c.baseUrl).toBe("http://localhost:8080");
    expect(c.defaultProject).toBe("default");
    expect(c.bodyLimit).toBe(64 * 1024);
    expect(c.sqliteSync).toBe("full");
  });

  test("environment variables, and flags over them", () => {
    const env = {
      PORT: "9000",
      HOST: "127.0.0.1",
      DATA_DIR: "/tmp/x",
      BASE_URL: "https://sb.example.com/",
      SIGNALBOARD_SQLITE_SYNC: "normal",
      SIGNALBOARD_BODY_LIMIT: "1MiB",
      SIGNALBOARD_PING_BODY_LIMIT: "2KiB",
      SIGNALBOARD_DEFAULT_PROJECT: "home",
    };
    const c = loadConfig({}, env);
    expect(c).toMatchObject({
      port: 9000,
      host: "127.0.0.1",
      dataDir: "/tmp/x",
      baseUrl: "https://sb.example.com",
      sqliteSync: "normal",
      bodyLimit: 1024 * 1024,
      pingBodyLimit: 2048,
      defaultProject: "home",
    });
    expect(loadConfig({ port: "7000" }, env).port).toBe(7000);
  });

  test("e-mail: SIGNALBOARD_SMTP_URL (or _FILE) and SIGNALBOARD_SMTP_FROM; a bad URL is named, its password never shown", async () => {
    const file = `/tmp/sb-config-smtp-${process.pid}`;
    await Bun.write(file, "smtps://mailer:s3cret@mail.example.com:465\n");
    expect(loadConfig({}, { SIGNALBOARD_SMTP_URL_FILE: file })).toMatchObject({
      smtpUrl: "smtps://mailer:s3cret@mail.example.com:465",
      smtpFrom: "Signalboard <signalboard@localhost>",
    });
    const c = loadConfig(
      {},
      {
        SIGNALBOARD_SMTP_URL: "smtp://mail.example.com:587",
        SIGNALBOARD_SMTP_FROM: "Alerts <alerts@example.com>",
        BASE_URL: "https://sb.example.com",
      },
    );
    expect(c).toMatchObject({ smtpUrl: "smtp://mail.example.com:587", smtpFrom: "Alerts <alerts@example.com>" });
    expect(loadConfig({}, { BASE_URL: "https://sb.example.com" })).toMatchObject({
      smtpUrl: undefined,
      smtpFrom: "Signalboard <signalboard@sb.example.com>",
    });
    let message = "";
    try {
      loadConfig({}, { SIGNALBOARD_SMTP_URL: "http://mailer:s3cret@mail.example.com" });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain("SIGNALBOARD_SMTP_URL (--smtp-url)");
    expect(message).not.toContain("s3cret");
    expect(() => loadConfig({}, { SIGNALBOARD_SMTP_FROM: "not an address" })).toThrow("SIGNALBOARD_SMTP_FROM");
  });

  test("outbound: SIGNALBOARD_OUTBOUND_ALLOW (--outbound-allow) and SIGNALBOARD_OUTBOUND_PRIVATE (--outbound-private)", () => {
    expect(loadConfig({}, {})).toMatchObject({ outboundAllow: { ranges: [], names: [] }, outboundPrivate: "allow" });
    const c = loadConfig(
      {},
      { SIGNALBOARD_OUTBOUND_ALLOW: "127.0.0.1/32, fd00::/8,ntfy.lan", SIGNALBOARD_OUTBOUND_PRIVATE: "deny" },
    );
    expect(c.outboundAllow.ranges).toHaveLength(2);
    expect(c.outboundAllow.names).toEqual(["ntfy.lan"]);
    expect(c.outboundPrivate).toBe("deny");
    // The flags win over the environment.
    const flagged = loadConfig(
      { "outbound-allow": "gotify.lan", "outbound-private": "allow" },
      { SIGNALBOARD_OUTBOUND_ALLOW: "127.0.0.1", SIGNALBOARD_OUTBOUND_PRIVATE: "deny" },
    );
    expect(flagged).toMatchObject({ outboundAllow: { ranges: [], names: ["gotify.lan"] }, outboundPrivate: "allow" });
    expect(() => loadConfig({ "outbound-allow": "10.0.0.0/33" }, {})).toThrow(
      'SIGNALBOARD_OUTBOUND_ALLOW (--outbound-allow) is "10.0.0.0/33": it must be addresses, CIDR ranges or host names separated by commas, such as 127.0.0.1/32,192.168.1.0/24,ntfy.lan: 10.0.0.0/33 has no prefix length from 0 to 32 after its /.',
    );
    expect(() => loadConfig({}, { SIGNALBOARD_OUTBOUND_PRIVATE: "sometimes" })).toThrow(
      "SIGNALBOARD_OUTBOUND_PRIVATE (--outbound-private)",
    );
  });

  test("an SMTP server on an address or name the outbound rules refuse stops the start, unless it is allowed", () => {
    for (const url of [
      "smtp://localhost:25",
      "smtp://user:s3cret@127.0.0.1:587",
      "smtps://[::1]:465",
      "smtp://0x7f.1",
    ]) {
      let message = "";
      try {
        loadConfig({}, { SIGNALBOARD_SMTP_URL: url });
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        message = (error as Error).message;
      }
      expect(message).toStartWith("SIGNALBOARD_SMTP_URL names ");
      expect(message).toContain("SIGNALBOARD_OUTBOUND_ALLOW=");
      expect(message).not.toContain("s3cret");
    }
    expect(
      loadConfig({}, { SIGNALBOARD_SMTP_URL: "smtp://localhost:25", SIGNALBOARD_OUTBOUND_ALLOW: "localhost" }).smtpUrl,
    ).toBe("smtp://localhost:25");
    expect(
      loadConfig({}, { SIGNALBOARD_SMTP_URL: "smtp://127.0.0.1:25", SIGNALBOARD_OUTBOUND_ALLOW: "127.0.0.1" }).smtpUrl,
    ).toBe("smtp://127.0.0.1:25");
    // A mail server on the LAN is fine, unless private networks are refused.
    expect(loadConfig({}, { SIGNALBOARD_SMTP_URL: "smtp://192.168.1.5:25" }).smtpUrl).toBe("smtp://192.168.1.5:25");
    expect(() =>
      loadConfig({}, { SIGNALBOARD_SMTP_URL: "smtp://192.168.1.5:25", SIGNALBOARD_OUTBOUND_PRIVATE: "deny" }),
    ).toThrow("SIGNALBOARD_OUTBOUND_PRIVATE=deny");
  });

  test("a secret can come from NAME_FILE", async () => {
    const file = `/tmp/sb-config-${process.pid}`;
    await Bun.write(file, "https://from-file.example.com\n");
    expect(loadConfig({}, { BASE_URL_FILE: file }).baseUrl).toBe("https://from-file.example.com");
    // Both set: refused, not one of them picked silently (a flag still wins over both).
    expect(() => loadConfig({}, { BASE_URL: "https://old.example.com", BASE_URL_FILE: file })).toThrow(
      "BASE_URL and BASE_URL_FILE are both set",
    );
    expect(
      loadConfig(
        { "base-url": "https://flag.example.com" },
        { BASE_URL: "https://old.example.com", BASE_URL_FILE: file },
      ).baseUrl,
    ).toBe("https://flag.example.com");
    // An empty file is a mistake too (PORT_FILE empty meant port 0: any free port).
    const empty = `/tmp/sb-config-empty-${process.pid}`;
    await Bun.write(empty, "\n");
    expect(() => loadConfig({}, { PORT_FILE: empty })).toThrow("PORT_FILE");
  });

  for (const [flags, env, name] of [
    [{ port: "eighty" }, {}, "PORT"],
    [{}, { PORT: "70000" }, "PORT"],
    [{}, { SIGNALBOARD_SQLITE_SYNC: "sometimes" }, "SIGNALBOARD_SQLITE_SYNC"],
    [{}, { SIGNALBOARD_BODY_LIMIT: "lots" }, "SIGNALBOARD_BODY_LIMIT"],
    [{}, { SIGNALBOARD_PING_BODY_LIMIT: "200KiB" }, "SIGNALBOARD_PING_BODY_LIMIT"],
    [{ "rate-limit-ping": "often" }, {}, "SIGNALBOARD_RATE_LIMIT_PING"],
    [{}, { SIGNALBOARD_DEFAULT_PROJECT: "My Project" }, "SIGNALBOARD_DEFAULT_PROJECT"],
    [{}, { BASE_URL: "not a url" }, "BASE_URL"],
    [{}, { SIGNALBOARD_RATE_LIMIT_PUBLIC: "fast" }, "SIGNALBOARD_RATE_LIMIT_PUBLIC"],
    [{ "base-url": "ftp://files.example.com" }, {}, "BASE_URL"],
    [{ "session-ttl": "0d" }, {}, "SIGNALBOARD_SESSION_TTL"],
    [{}, { SIGNALBOARD_TRUST_PROXY: "10.0.0.0/8" }, "SIGNALBOARD_TRUST_PROXY"],
    [{}, { SIGNALBOARD_OUTBOUND_ALLOW: "300.0.0.0/8" }, "SIGNALBOARD_OUTBOUND_ALLOW"],
    [{ "outbound-private": "no" }, {}, "SIGNALBOARD_OUTBOUND_PRIVATE"],
    [{}, { SIGNALBOARD_VAPID_SUBJECT_FILE: "/nonexistent/vapid-subject" }, "SIGNALBOARD_VAPID_SUBJECT_FILE"],
  ] as const) {
    test(`an invalid ${name} names the setting`, () => {
      expect(() => loadConfig(flags, env)).toThrow(ConfigError);
      try {
        loadConfig(flags, env);
      } catch (error) {
        expect((error as Error).message).toContain(name);
      }
    });
  }

  test("--help text lists every setting with its flag and variable", () => {
    const text = describeSettings();
    for (const s of [
      "--port",
      "PORT",
      "--data-dir",
      "DATA_DIR",
      "--base-url",
      "BASE_URL",
      "SIGNALBOARD_SQLITE_SYNC",
      "SIGNALBOARD_BODY_LIMIT",
      "SIGNALBOARD_DEFAULT_PROJECT",
    ])
      expect(text).toContain(s);
  });
});

describe("units", () => {
  test("sizes", () => {
    expect(parseByteSize("65536")).toBe(65536);
    expect(parseByteSize("64KiB")).toBe(65536);
    expect(parseByteSize("1 MiB")).toBe(1048576);
    expect(parseByteSize("2mb")).toBe(2_000_000);
    expect(() => parseByteSize("big")).toThrow();
  });
  test("durations", () => {
    expect(parseDuration("30s")).toBe(30_000);
    expect(parseDuration("12h")).toBe(43_200_000);
    expect(() => parseDuration("10")).toThrow();
  });
  test("rates", () => {
    expect(parseRate("60/m")).toEqual({ limit: 60, windowMs: 60_000 });
    expect(parseRate("0")).toBeNull();
    expect(parseRate("off")).toBeNull();
    expect(() => parseRate("60")).toThrow();
  });
});

describe("single sign-on settings", () => {
  const base = { SIGNALBOARD_OIDC_ISSUER: "https://auth.example.com", SIGNALBOARD_OIDC_CLIENT_ID: "signalboard" };
  test("defaults, and a role map read in order", () => {
    const c = loadConfig(
      {},
      { ...base, SIGNALBOARD_OIDC_ROLES_CLAIM: "groups", SIGNALBOARD_OIDC_ROLE_MAP: "a=admin, b = viewer" },
    );
    expect(c).toMatchObject({
      oidcScopes: ["openid", "profile", "email"],
      oidcName: "single sign-on",
      oidcDefaultRole: "viewer",
      passwordLogin: true,
    });
    expect(c.oidcRoleMap).toEqual([
      { group: "a", role: "admin" },
      { group: "b", role: "viewer" },
    ]);
  });
  test("half a set-up, a map without its claim, a role that is not given, scopes without openid: refused", () => {
    expect(() => loadConfig({}, { SIGNALBOARD_OIDC_ISSUER: base.SIGNALBOARD_OIDC_ISSUER })).toThrow(
      /SIGNALBOARD_OIDC_CLIENT_ID/,
    );
    expect(() => loadConfig({}, { SIGNALBOARD_OIDC_CLIENT_ID: "x" })).toThrow(/SIGNALBOARD_OIDC_ISSUER/);
    expect(() => loadConfig({}, { ...base, SIGNALBOARD_OIDC_ROLE_MAP: "a=admin" })).toThrow(
      /SIGNALBOARD_OIDC_ROLES_CLAIM/,
    );
    expect(() =>
      loadConfig({}, { ...base, SIGNALBOARD_OIDC_ROLES_CLAIM: "groups", SIGNALBOARD_OIDC_ROLE_MAP: "a=owner" }),
    ).toThrow(/admin, member or viewer/);
    expect(() => loadConfig({}, { ...base, SIGNALBOARD_OIDC_SCOPES: "profile email" })).toThrow(/include openid/);
  });
  test("the mistakes an operator makes say what to write instead", () => {
    const claim = { ...base, SIGNALBOARD_OIDC_ROLES_CLAIM: "groups" };
    // Pairs separated by semicolons were read as one group, "sb-admins=admin;sb-team", given member.
    expect(() => loadConfig({}, { ...claim, SIGNALBOARD_OIDC_ROLE_MAP: "sb-admins=admin;sb-team=member" })).toThrow(
      /SIGNALBOARD_OIDC_ROLE_MAP .*separate the pairs with commas/,
    );
    expect(() => loadConfig({}, { ...claim, SIGNALBOARD_OIDC_ROLE_MAP: "sb-admins:admin" })).toThrow(
      /"sb-admins:admin" has no =/,
    );
    // A claim with no map to read it with does nothing: a misspelt map's name would go unseen.
    expect(() => loadConfig({}, claim)).toThrow(
      /SIGNALBOARD_OIDC_ROLES_CLAIM is set without SIGNALBOARD_OIDC_ROLE_MAP: map groups to roles/,
    );
    // The discovery document's URL is not the issuer: discovery would look under it again.
    expect(() =>
      loadConfig({}, { ...base, SIGNALBOARD_OIDC_ISSUER: "https://auth.example.com/.well-known/openid-configuration" }),
    ).toThrow(/SIGNALBOARD_OIDC_ISSUER .* without \/\.well-known\/openid-configuration: https:\/\/auth\.example\.com/);
    // Documented as on or off, and said so.
    expect(() => loadConfig({}, { SIGNALBOARD_PASSWORD_LOGIN: "of" })).toThrow(
      'SIGNALBOARD_PASSWORD_LOGIN (--password-login) is "of": it must be on or off.',
    );
    expect(loadConfig({}, { SIGNALBOARD_PASSWORD_LOGIN: "off" }).passwordLogin).toBe(false);
  });
});
