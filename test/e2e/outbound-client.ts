// The outbound guard as a process of its own, for test/e2e/outbound-tls.test.ts: it trusts a test
// CA (NODE_EXTRA_CA_CERTS, read when a process starts), resolves names with the table it is
// given, sends what it is told to through the guard, and prints what happened as JSON.
//   bun outbound-client.ts '{"hosts": {"name": ["127.0.0.1"]}, "allow": "127.0.0.1", "fetch": [URL...], "mail": [SMTP URL...]}'
import { type Lookup, parseAllowList } from "../../src/domain/outbound.ts";
import { createMailer } from "../../src/notify/email.ts";
import { outboundFetch } from "../../src/notify/outbound.ts";

const spec = JSON.parse(process.argv[2]!) as {
  hosts: Record<string, string[]>;
  allow: string;
  fetch: string[];
  mail: string[];
};
const lookups: string[] = [];
const lookup: Lookup = async (host) => {
  lookups.push(host);
  const addresses = spec.hosts[host];
  if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
  return addresses;
};
const rules = { allow: parseAllowList(spec.allow), privateNetworks: "allow" as const, lookup };

const fetched = [];
for (const url of spec.fetch) {
  try {
    const response = await outboundFetch(rules, "integration", url, {
      method: "POST",
      body: "hello",
      signal: AbortSignal.timeout(10_000),
    });
    fetched.push({ url, status: response.status, body: await response.text() });
  } catch (error) {
    fetched.push({ url, error: `${(error as { code?: string }).code ?? ""} ${(error as Error).message}` });
  }
}

const mailed = [];
for (const url of spec.mail) {
  const mailer = createMailer(url, "Signalboard <alerts@example.com>", rules)!;
  const result = await mailer.send({
    to: ["ops@example.com"],
    payload: {
      title: `Via ${url}`,
      body: "Body",
      url: "https://sb.example.com/",
      tag: "t",
      icon: null,
      event: null,
      priority: 3,
    },
    delivery: { id: 1, createdAt: Date.now() },
  });
  mailer.close();
  mailed.push({ url, ...result });
}

console.log(JSON.stringify({ lookups, fetched, mailed }));
