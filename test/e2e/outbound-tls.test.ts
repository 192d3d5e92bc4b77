// The outbound guard connects to the address it checked, not to the name, yet TLS still sends
// the name and verifies the certificate for it: over https (fetch with tls.serverName), over
// smtps:// and over STARTTLS (nodemailer on the guard's socket). Real TLS servers on 127.0.0.1
// with certificates of a test CA (test/fixtures/tls); the names resolve, once, through the client's
// own table to 127.0.0.1, and nowhere else: an ordinary lookup of them fails.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { SMTPServer } from "smtp-server";
import { run } from "./process.ts";

const TLS = join(import.meta.dir, "../fixtures/tls");
const pem = (name: string) => readFileSync(join(TLS, name), "utf8");
const GOOD = { cert: pem("signalboard.crt"), key: pem("signalboard.key") };
const OTHER = { cert: pem("other.crt"), key: pem("other.key") };

function https(tls: { cert: string; key: string }) {
  const seen: { host: string | null; body: string }[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    tls,
    async fetch(request) {
      seen.push({ host: request.headers.get("host"), body: await request.text() });
      return new Response("verified");
    },
  });
  return { port: server.port!, seen, stop: () => server.stop(true) };
}

/** An SMTP server on 127.0.0.1: `secure` speaks TLS from the start (smtps), else it offers STARTTLS. */
async function smtp(tls: { cert: string; key: string }, secure: boolean) {
  const mails: { subject: string; secure: boolean }[] = [];
  const server = new SMTPServer({
    secure,
    ...tls,
    authOptional: true,
    logger: false,
    onData(stream, session, callback) {
      let raw = "";
      stream.on("data", (chunk: Buffer) => (raw += chunk.toString("utf8")));
      stream.on("end", () => {
        mails.push({ subject: /^Subject: (.*)$/m.exec(raw)?.[1] ?? "", secure: session.secure });
        callback();
      });
    },
  });
  // Handshake failures (the client refusing the certificate) are what some of these tests are about.
  server.on("error", () => {});
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as { port: number }).port;
  return { port, mails, stop: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

type Outcome = {
  lookups: string[];
  fetched: { url: string; status?: number; body?: string; error?: string }[];
  mailed: { url: string; ok: boolean; error?: string }[];
};

/** The guard in a process that trusts the test CA, with push.signalboard.test and mail.signalboard.test at 127.0.0.1. */
async function client(fetch: string[], mail: string[]): Promise<Outcome> {
  const spec = {
    hosts: { "push.signalboard.test": ["127.0.0.1"], "mail.signalboard.test": ["127.0.0.1"] },
    allow: "127.0.0.1",
    fetch,
    mail,
  };
  const result = await run([process.execPath, join(import.meta.dir, "outbound-client.ts")], [JSON.stringify(spec)], {
    env: { NODE_EXTRA_CA_CERTS: join(TLS, "ca.crt") },
  });
  if (result.code !== 0) throw new Error(`the client failed (${result.code}):\n${result.stderr}`);
  return JSON.parse(result.stdout) as Outcome;
}

let good: ReturnType<typeof https>;
let other: ReturnType<typeof https>;
beforeAll(() => {
  good = https(GOOD);
  other = https(OTHER);
});
afterAll(() => {
  good.stop();
  other.stop();
});

describe("https through the guard", () => {
  test("connects to the checked address with the name's certificate verified; a certificate for another name is refused", async () => {
    const out = await client(
      [`https://push.signalboard.test:${good.port}/hook`, `https://push.signalboard.test:${other.port}/hook`],
      [],
    );
    expect(out.fetched[0]).toEqual({
      url: `https://push.signalboard.test:${good.port}/hook`,
      status: 200,
      body: "verified",
    });
    // The receiver was asked for the name, as it would have been without the guard.
    expect(good.seen).toEqual([{ host: `push.signalboard.test:${good.port}`, body: "hello" }]);
    expect(out.fetched[1]!.error).toContain("ERR_TLS_CERT_ALTNAME_INVALID");
    expect(other.seen).toEqual([]);
    // Each name was looked up once per request, by the guard (the system cannot resolve it).
    expect(out.lookups).toEqual(["push.signalboard.test", "push.signalboard.test"]);
  });
});

describe("SMTP through the guard", () => {
  let smtps: Awaited<ReturnType<typeof smtp>>;
  let starttls: Awaited<ReturnType<typeof smtp>>;
  let wrong: Awaited<ReturnType<typeof smtp>>;
  let wrongStarttls: Awaited<ReturnType<typeof smtp>>;
  beforeAll(async () => {
    smtps = await smtp(GOOD, true);
    starttls = await smtp(GOOD, false);
    wrong = await smtp(OTHER, true);
    wrongStarttls = await smtp(OTHER, false);
  });
  afterAll(async () => {
    await Promise.all([smtps.stop(), starttls.stop(), wrong.stop(), wrongStarttls.stop()]);
  });

  test("smtps:// and STARTTLS verify the server's certificate for the name in SIGNALBOARD_SMTP_URL", async () => {
    const urls = [
      `smtps://mail.signalboard.test:${smtps.port}`,
      `smtp://mail.signalboard.test:${starttls.port}`,
      `smtps://mail.signalboard.test:${wrong.port}`,
      `smtp://mail.signalboard.test:${wrongStarttls.port}`,
    ];
    const out = await client([], urls);
    expect(out.mailed.map((m) => m.ok)).toEqual([true, true, false, false]);
    expect(smtps.mails).toEqual([{ subject: `Via ${urls[0]}`, secure: true }]);
    expect(starttls.mails).toEqual([{ subject: `Via ${urls[1]}`, secure: true }]);
    expect(wrong.mails).toEqual([]);
    expect(wrongStarttls.mails).toEqual([]);
    for (const refused of out.mailed.slice(2))
      expect(refused.error).toBe("could not send over SMTP (ESOCKET: ERR_TLS_CERT_ALTNAME_INVALID)");
    expect(out.lookups).toEqual(Array(4).fill("mail.signalboard.test"));
  });
});
