// A protocol-faithful Web Push service for tests, standing in for FCM, Mozilla's or Apple's, which
// cannot be reached from here. Like them it verifies the VAPID JWT (RFC 8292) and answers 201;
// unlike them it also holds each device's private keys, so it decrypts every aes128gcm message
// (RFC 8291, with http_ece, the reference implementation) and shows tests what a phone would show.
// It can be told to answer with other statuses (410, 429, 500...) to test retries and pruning.
import { type ECDH, createECDH, createPublicKey, randomBytes, verify } from "node:crypto";
import * as ece from "http_ece";

export type PushMessage = { title: string; body: string; url: string; tag: string };
export type Received = {
  device: string;
  message: PushMessage;
  headers: Record<string, string>;
  jwt: { aud: string; exp: number; sub: string };
};

type Device = { ecdh: ECDH; auth: Buffer };

function b64url(buffer: Buffer): string {
  return buffer.toString("base64url");
}

/** Checks `Authorization: vapid t=<jwt>, k=<public key>`; returns the JWT claims or why it is wrong. */
function verifyVapid(
  header: string | null,
  origin: string,
): { ok: true; claims: Received["jwt"] } | { ok: false; why: string } {
  const m = /^vapid t=([\w-]+\.[\w-]+\.[\w-]+), k=([\w-]+)$/.exec(header ?? "");
  if (!m) return { ok: false, why: "missing or malformed vapid Authorization" };
  const [head, body, signature] = m[1]!.split(".") as [string, string, string];
  const publicKey = Buffer.from(m[2]!, "base64url");
  if (publicKey.length !== 65 || publicKey[0] !== 4) return { ok: false, why: "k is not an uncompressed P-256 point" };
  const key = createPublicKey({
    key: { kty: "EC", crv: "P-256", x: b64url(publicKey.subarray(1, 33)), y: b64url(publicKey.subarray(33)) },
    format: "jwk",
  });
  const valid = verify(
    "sha256",
    Buffer.from(`${head}.${body}`),
    { key, dsaEncoding: "ieee-p1363" },
    Buffer.from(signature, "base64url"),
  );
  if (!valid) return { ok: false, why: "bad JWT signature" };
  const alg = JSON.parse(Buffer.from(head, "base64url").toString()) as { alg: string };
  const claims = JSON.parse(Buffer.from(body, "base64url").toString()) as Received["jwt"];
  if (alg.alg !== "ES256") return { ok: false, why: "JWT alg must be ES256" };
  if (claims.aud !== origin) return { ok: false, why: `JWT aud ${claims.aud} is not ${origin}` };
  if (!(claims.exp > Date.now() / 1000) || claims.exp > Date.now() / 1000 + 24 * 3600)
    return { ok: false, why: "JWT exp must be within 24 hours" };
  if (!/^(mailto:|https:)/.test(claims.sub)) return { ok: false, why: "JWT sub must be mailto: or https:" };
  return { ok: true, claims };
}

export async function startPushService() {
  const devices = new Map<string, Device>();
  const received: Received[] = [];
  const attempts: { device: string; status: number }[] = [];
  const scripted = new Map<string, { status: number; headers?: Record<string, string> }[]>();
  const rejected: string[] = [];

  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const url = new URL(request.url);
      const id = /^\/push\/([\w-]+)$/.exec(url.pathname)?.[1];
      if (request.method !== "POST" || !id) return new Response("not found", { status: 404 });
      const reply = scripted.get(id)?.shift();
      attempts.push({ device: id, status: reply?.status ?? (devices.has(id) ? 201 : 410) });
      if (reply) return new Response(`scripted ${reply.status}`, { status: reply.status, headers: reply.headers });
      const device = devices.get(id);
      if (!device) return new Response("unsubscribed", { status: 410 });
      const vapid = verifyVapid(request.headers.get("authorization"), url.origin);
      if (!vapid.ok) {
        rejected.push(vapid.why);
        return new Response(vapid.why, { status: 403 });
      }
      if (request.headers.get("content-encoding") !== "aes128gcm" || !request.headers.get("ttl")) {
        rejected.push("missing Content-Encoding: aes128gcm or TTL");
        return new Response("bad headers", { status: 400 });
      }
      const plaintext = ece.decrypt(Buffer.from(await request.arrayBuffer()), {
        version: "aes128gcm",
        privateKey: device.ecdh,
        authSecret: b64url(device.auth),
      });
      received.push({
        device: id,
        message: JSON.parse(plaintext.toString("utf8")) as PushMessage,
        headers: Object.fromEntries(request.headers),
        jwt: vapid.claims,
      });
      return new Response(null, { status: 201 });
    },
  });
  const base = `http://127.0.0.1:${server.port}`;

  return {
    url: base,
    received,
    attempts,
    rejected,
    /** A new device: what PushManager.subscribe() would return in a browser. */
    subscribe(): { id: string; endpoint: string; keys: { p256dh: string; auth: string } } {
      const id = randomBytes(8).toString("hex");
      const ecdh = createECDH("prime256v1");
      ecdh.generateKeys();
      const auth = randomBytes(16);
      devices.set(id, { ecdh, auth });
      return { id, endpoint: `${base}/push/${id}`, keys: { p256dh: b64url(ecdh.getPublicKey()), auth: b64url(auth) } };
    },
    /** The device unsubscribed: its endpoint answers 410 Gone from now on. */
    unsubscribe(id: string): void {
      devices.delete(id);
    },
    /** The next answers to this device's messages, in order (then back to normal). */
    answerNext(id: string, ...replies: { status: number; headers?: Record<string, string> }[]): void {
      scripted.set(id, [...(scripted.get(id) ?? []), ...replies]);
    },
    messagesFor(id: string): PushMessage[] {
      return received.filter((r) => r.device === id).map((r) => r.message);
    },
    stop: () => server.stop(true),
  };
}

export type PushService = Awaited<ReturnType<typeof startPushService>>;
