// A real OpenID provider for the tests (panva's oidc-provider, the certified implementation), on
// 127.0.0.1. Its login is a one-field form (who to be); consent is granted at once. The tests can
// rotate its signing key (a new provider instance behind the same issuer) and have the token
// endpoint's ID token replaced, to see what Signalboard does with a token for another audience or
// signed by a key that is not the provider's.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { decodeJwt, exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from "jose";
import Provider from "oidc-provider";

export type Person = { email?: string; email_verified?: boolean; preferred_username?: string; groups?: string[] };

export type SigningKey = { jwk: JWK; key: CryptoKey };

export async function newSigningKey(kid = `k-${crypto.randomUUID().slice(0, 8)}`): Promise<SigningKey> {
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  return { jwk: { ...(await exportJWK(privateKey)), kid, alg: "RS256", use: "sig" }, key: privateKey };
}

/** Signs `payload` as an ID token with `key` (the provider's, or another). */
export function signIdToken(payload: JWTPayload, key: SigningKey): Promise<string> {
  return new SignJWT(payload).setProtectedHeader({ alg: "RS256", kid: key.jwk.kid }).sign(key.key);
}

export type TestProvider = {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Who exists at the provider, by subject. */
  people: Map<string, Person>;
  /** The key it signs with now. */
  signingKey: SigningKey;
  /** A new signing key, the old one gone from its keys (as after a rotation). */
  rotate(): Promise<void>;
  /** Lets the client come back to another Signalboard too (one whose port was known only once it listened). */
  allowRedirect(baseUrl: string): void;
  /** Replaces the ID token of the token endpoint's next answers (given the real one's claims); null stops. */
  tamper: ((claims: JWTPayload) => Promise<string>) | null;
  /** While true, the issuer's address answers every request with 503, as a provider down for maintenance. */
  down: boolean;
  close(): Promise<void>;
};

export async function startOidcProvider(opts: { redirectUri: string; afterSignOut: string }): Promise<TestProvider> {
  const redirectUris = [opts.redirectUri];
  const afterSignOuts = [opts.afterSignOut];
  const clientId = "signalboard";
  const clientSecret = "a-secret-of-at-least-thirty-two-characters";
  const people = new Map<string, Person>();
  let provider: Provider;
  let handler: (req: IncomingMessage, res: ServerResponse) => void;

  const inner = createServer((req, res) => {
    if (req.url?.startsWith("/interaction/")) void interaction(req, res);
    else handler(req, res);
  });
  await new Promise<void>((done) => inner.listen(0, "127.0.0.1", done));
  const innerUrl = `http://127.0.0.1:${(inner.address() as AddressInfo).port}`;

  // The issuer's address: a front that passes everything to the provider, and can change its tokens.
  const state: Pick<TestProvider, "tamper" | "down"> = { tamper: null, down: false };
  const front = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      if (state.down) return new Response("down for maintenance", { status: 503 });
      const url = new URL(request.url);
      const headers = new Headers(request.headers);
      const answer = await fetch(`${innerUrl}${url.pathname}${url.search}`, {
        method: request.method,
        headers,
        body: request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer(),
        redirect: "manual",
      });
      const out = new Headers(answer.headers);
      out.delete("content-length");
      out.delete("content-encoding");
      let body: string | ArrayBuffer = await answer.arrayBuffer();
      if (url.pathname === "/token" && answer.ok && state.tamper) {
        const json = JSON.parse(new TextDecoder().decode(body));
        json.id_token = await state.tamper(decodeJwt(json.id_token));
        body = JSON.stringify(json);
      }
      return new Response(body, { status: answer.status, headers: out });
    },
  });
  const issuer = `http://127.0.0.1:${front.port}`;

  function make(key: SigningKey): Provider {
    const p = new Provider(issuer, {
      clients: [
        {
          client_id: clientId,
          client_secret: clientSecret,
          redirect_uris: redirectUris,
          post_logout_redirect_uris: afterSignOuts,
          grant_types: ["authorization_code"],
          response_types: ["code"],
        },
      ],
      jwks: { keys: [key.jwk] },
      cookies: { keys: ["test-cookie-key"] },
      claims: {
        openid: ["sub"],
        email: ["email", "email_verified"],
        profile: ["preferred_username", "name"],
        groups: ["groups"],
      },
      features: { devInteractions: { enabled: false }, rpInitiatedLogout: { enabled: true } },
      interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
      async findAccount(_ctx, sub) {
        const person = people.get(sub);
        if (!person) return undefined;
        return { accountId: sub, claims: async () => ({ sub, ...person }) };
      },
      // Consent is not what is tested: every client gets what it asks for.
      async loadExistingGrant(ctx) {
        const oidc = ctx.oidc;
        const id = oidc.result?.consent?.grantId ?? oidc.session!.grantIdFor(oidc.client!.clientId);
        if (id) {
          const found = await oidc.provider.Grant.find(id);
          if (found) return found;
        }
        const grant = new oidc.provider.Grant({ clientId: oidc.client!.clientId, accountId: oidc.session!.accountId! });
        grant.addOIDCScope("openid profile email groups");
        await grant.save();
        return grant;
      },
    });
    return p;
  }

  async function interaction(req: IncomingMessage, res: ServerResponse) {
    try {
      if (req.method === "GET") {
        await provider.interactionDetails(req, res);
        res.setHeader("Content-Type", "text/html; charset=utf-8");
        res.end(
          `<!doctype html><title>Test provider</title><form method="post"><label>Who are you? <input name="login" autofocus></label><button type="submit">Continue</button></form>`,
        );
        return;
      }
      let body = "";
      for await (const chunk of req) body += chunk;
      const login = new URLSearchParams(body).get("login") ?? "";
      const result = people.has(login)
        ? { login: { accountId: login } }
        : { error: "access_denied", error_description: "no such person" };
      await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
    } catch (error) {
      res.statusCode = 500;
      res.end(String(error));
    }
  }

  const self: TestProvider = {
    issuer,
    clientId,
    clientSecret,
    people,
    signingKey: await newSigningKey(),
    async rotate() {
      self.signingKey = await newSigningKey();
      provider = make(self.signingKey);
      handler = provider.callback();
    },
    allowRedirect(baseUrl) {
      redirectUris.push(`${baseUrl}/auth/oidc/callback`);
      afterSignOuts.push(`${baseUrl}/login`);
      provider = make(self.signingKey);
      handler = provider.callback();
    },
    get tamper() {
      return state.tamper;
    },
    set tamper(t) {
      state.tamper = t;
    },
    get down() {
      return state.down;
    },
    set down(d) {
      state.down = d;
    },
    async close() {
      front.stop(true);
      await new Promise((done) => inner.close(done));
    },
  };
  provider = make(self.signingKey);
  handler = provider.callback();
  return self;
}
