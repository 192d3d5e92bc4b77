// Passkeys (WebAuthn): added in Settings → Account, used as the second step after a password or to
// sign in without one. @simplewebauthn/server does the protocol and the crypto; here are the rules:
// the relying party is BASE_URL's host (its origin is the only one accepted), each challenge is
// kept server-side for a few minutes and taken once, and the signature counter never goes back.
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from "@simplewebauthn/server";
import { decodeClientDataJSON, isoBase64URL } from "@simplewebauthn/server/helpers";
import { z } from "zod";
import { type Clock, systemClock } from "../clock.ts";
import { AppError, BadRequest, Conflict, NotFound, ValidationError } from "../errors.ts";
import type { Actor } from "../model/audit.ts";
import type { User } from "../model/user.ts";
import type { Passkey, PasskeyChallenge, Store } from "../store/store.ts";
import { audited, recordAudit } from "./audit.ts";
import { checkCode } from "./second-factor.ts";

/** How long a challenge handed to the browser may wait for its answer. */
export const PASSKEY_CHALLENGE_TTL_MS = 5 * 60_000;
const RP_NAME = "Signalboard";

export type PasskeyUse = "second_step" | "sign_in";

/** The browser's answer as @simplewebauthn/browser sends it: checked in shape here, in substance by the library. */
const credentialJson = z.object({
  id: z.string().min(1).max(1024),
  rawId: z.string().min(1).max(1024),
  type: z.literal("public-key"),
  response: z.object({ clientDataJSON: z.string().min(1).max(8192) }).passthrough(),
  clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
  authenticatorAttachment: z.string().optional(),
});

const nameRule = z
  .string()
  .trim()
  .min(1, "give the passkey a name, such as the device it is on")
  .max(64, "must be at most 64 characters");

const challengeExpired = () =>
  new BadRequest(
    "This passkey request expired or was already answered. Start again (a request is good for 5 minutes, once).",
    "challenge_expired",
  );

/** A passkey answer that opens nothing (401): `code` says why for scripts, the message for people. */
export class PasskeyRefused extends AppError {
  constructor(code: "passkey_unknown" | "passkey_refused", message: string) {
    super("unauthenticated", code, message);
  }
}

function parseAnswer(raw: string): z.infer<typeof credentialJson> {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw ValidationError.field("response", "invalid_json", "response: not the browser's answer (not JSON)");
  }
  const parsed = credentialJson.safeParse(json);
  if (!parsed.success)
    throw ValidationError.field(
      "response",
      "invalid",
      `response: not a passkey answer (${parsed.error.issues[0]!.message})`,
    );
  return parsed.data;
}

/** The challenge the browser signed, from its client data (checked again, in full, by the library). */
function challengeOf(answer: { response: { clientDataJSON: string } }): string {
  try {
    const challenge = decodeClientDataJSON(answer.response.clientDataJSON).challenge;
    if (typeof challenge === "string" && challenge) return challenge;
  } catch {
    // the same answer as a challenge never handed out
  }
  throw challengeExpired();
}

const userHandleOf = (userId: number) => new TextEncoder().encode(`signalboard-user-${userId}`);

export function passkeyService(store: Store, options: { baseUrl: string; clock?: Clock }) {
  const clock = options.clock ?? systemClock;
  const base = new URL(options.baseUrl);
  const rpID = base.hostname;
  const origin = base.origin;

  async function offer(purpose: PasskeyChallenge["purpose"], userId: number | null, challenge: string, now: number) {
    await store.factors.createPasskeyChallenge({
      challenge,
      purpose,
      userId,
      createdAt: now,
      expiresAt: now + PASSKEY_CHALLENGE_TTL_MS,
    });
  }

  /** Takes the answer's challenge (once): it must have been handed out for this purpose (and person). */
  async function take(
    answer: { response: { clientDataJSON: string } },
    purpose: PasskeyChallenge["purpose"],
    now: number,
  ) {
    const taken = await store.factors.takePasskeyChallenge(challengeOf(answer), now);
    if (!taken || taken.purpose !== purpose) throw challengeExpired();
    return taken;
  }

  return {
    rpID,
    origin,

    list: (userId: number): Promise<Passkey[]> => store.factors.passkeys(userId),

    async has(userId: number): Promise<boolean> {
      return (await store.factors.passkeys(userId)).length > 0;
    },

    /** What the browser needs to make a passkey for them (none they have already: excludeCredentials). */
    async registrationOptions(user: User, now = clock.now()): Promise<PublicKeyCredentialCreationOptionsJSON> {
      const mine = await store.factors.passkeys(user.id);
      const opts = await generateRegistrationOptions({
        rpName: RP_NAME,
        rpID,
        userName: user.username,
        userID: userHandleOf(user.id),
        attestationType: "none",
        excludeCredentials: mine.map((p) => ({ id: p.credentialId, transports: p.transports })),
        authenticatorSelection: { residentKey: "preferred", userVerification: "preferred" },
        timeout: PASSKEY_CHALLENGE_TTL_MS,
      });
      await offer("register", user.id, opts.challenge, now);
      return opts;
    },

    /** Keeps the passkey the browser made for the challenge handed to them, with the name they gave it. */
    async register(user: User, input: { name: string; response: string }, actor: Actor, now = clock.now()) {
      const name = nameRule.safeParse(input.name);
      if (!name.success) throw ValidationError.field("name", "invalid", `name: ${name.error.issues[0]!.message}`);
      const answer = parseAnswer(input.response);
      const taken = await take(answer, "register", now);
      if (taken.userId !== user.id) throw challengeExpired();
      let info;
      try {
        const verified = await verifyRegistrationResponse({
          response: answer as unknown as RegistrationResponseJSON,
          expectedChallenge: taken.challenge,
          expectedOrigin: origin,
          expectedRPID: rpID,
          requireUserVerification: false,
        });
        if (!verified.verified) throw new Error("the attestation was not verified");
        info = verified.registrationInfo;
      } catch (error) {
        throw ValidationError.field(
          "response",
          "refused",
          `response: the passkey was refused: ${(error as Error).message}`,
        );
      }
      const { credential } = info;
      const added = await audited(
        store,
        actor,
        async (tx, note) => {
          const kept = await tx.factors.addPasskey({
            userId: user.id,
            credentialId: credential.id,
            publicKey: isoBase64URL.fromBuffer(credential.publicKey),
            counter: credential.counter,
            transports: (credential.transports ?? []).filter((t) => /^[a-z-]{1,32}$/.test(t)),
            name: name.data,
            createdAt: now,
          });
          if (kept) note("second_factor.enabled", `user ${user.username}`, `passkey "${kept.name}"`);
          return kept;
        },
        now,
      );
      if (!added) throw new Conflict("This passkey is added already.");
      return added;
    },

    /**
     * Removes one of their passkeys, confirmed with their password or a code of their
     * authenticator (or a recovery code), as turning the authenticator off asks for.
     */
    async remove(user: User, id: number, confirm: string, actor: Actor, now = clock.now()): Promise<Passkey> {
      const mine = (await store.factors.passkeys(user.id)).find((p) => p.id === id);
      if (!mine) throw new NotFound("No such passkey of yours: it was removed already.");
      const record = await store.users.findByUsername(user.username);
      const typed = confirm.slice(0, 256);
      const byPassword = !!record && !!typed && (await Bun.password.verify(typed, record.passwordHash));
      const byCode = !byPassword && !!typed && (await checkCode(store, user.id, typed, now));
      if (!byPassword && !byCode)
        throw ValidationError.field(
          "confirm",
          "wrong_password",
          "confirm: this is not your password, nor a code from your authenticator app",
        );
      const removed = await audited(
        store,
        actor,
        async (tx, note) => {
          const gone = await tx.factors.removePasskey(user.id, id);
          if (gone)
            note(
              "second_factor.disabled",
              `user ${user.username}`,
              `passkey "${gone.name}"; removed by themselves, with ${byPassword ? "their password" : "a code"}`,
            );
          return gone;
        },
        now,
      );
      if (!removed) throw new NotFound("No such passkey of yours: it was removed already.");
      return removed;
    },

    /**
     * What the browser needs to sign in: for the second step, the person's passkeys (allowCredentials);
     * for a sign-in with a passkey alone, none (the authenticator offers its discoverable ones).
     */
    async authenticationOptions(
      use: PasskeyUse,
      userId: number | null,
      now = clock.now(),
    ): Promise<PublicKeyCredentialRequestOptionsJSON> {
      const allow = use === "second_step" && userId !== null ? await store.factors.passkeys(userId) : [];
      const opts = await generateAuthenticationOptions({
        rpID,
        allowCredentials: allow.map((p) => ({ id: p.credentialId, transports: p.transports })),
        userVerification: use === "sign_in" ? "required" : "preferred",
        timeout: PASSKEY_CHALLENGE_TTL_MS,
      });
      await offer(use, use === "second_step" ? userId : null, opts.challenge, now);
      return opts;
    },

    /**
     * Checks a sign-in's passkey answer: the challenge handed out for it (taken once), a passkey we
     * keep (for the second step, one of `userId`'s), the signature over our origin and RP ID, a
     * counter that went up. Alone, the passkey must have verified its user (a PIN, a fingerprint).
     * Each refusal is a failed sign-in in the audit trail. The person and the passkey when right.
     */
    async authenticate(
      use: PasskeyUse,
      raw: string,
      ip: string | null,
      userId: number | null = null,
      now = clock.now(),
    ): Promise<{ user: User; passkey: Passkey }> {
      const answer = parseAnswer(raw);
      const refuse = async (who: User | null, why: string, error: AppError): Promise<never> => {
        const actor = { userId: who?.id ?? null, name: who?.username ?? "unknown passkey", ip };
        const subject = who ? `user ${who.username}` : "a passkey not kept here";
        await recordAudit(store, actor, "sign_in.failed", subject, `passkey: ${why}`, now);
        throw error;
      };
      const stepUser = userId === null ? null : await store.users.findById(userId);
      const taken = await store.factors.takePasskeyChallenge(challengeOf(answer), now);
      if (!taken || taken.purpose !== use || (use === "second_step" && taken.userId !== userId))
        return refuse(stepUser, "an expired or used challenge", challengeExpired());
      const passkey = await store.factors.passkeyByCredential(answer.id);
      if (!passkey || (use === "second_step" && passkey.userId !== userId))
        return refuse(
          stepUser,
          "not known here",
          new PasskeyRefused(
            "passkey_unknown",
            "This passkey is not known here: it may have been removed. Sign in another way.",
          ),
        );
      const user = await store.users.findById(passkey.userId);
      if (!user)
        return refuse(null, "not known here", new PasskeyRefused("passkey_unknown", "This passkey is not known here."));
      const handle = (answer.response as { userHandle?: unknown }).userHandle;
      if (typeof handle === "string" && handle && handle !== isoBase64URL.fromBuffer(userHandleOf(user.id)))
        return refuse(
          user,
          "another person's user handle",
          new PasskeyRefused("passkey_refused", "This passkey was refused."),
        );
      let info;
      try {
        const verified = await verifyAuthenticationResponse({
          response: answer as unknown as AuthenticationResponseJSON,
          expectedChallenge: taken.challenge,
          expectedOrigin: origin,
          expectedRPID: rpID,
          credential: {
            id: passkey.credentialId,
            publicKey: isoBase64URL.toBuffer(passkey.publicKey),
            counter: passkey.counter,
            transports: passkey.transports as never,
          },
          requireUserVerification: use === "sign_in",
        });
        if (!verified.verified) throw new Error("the signature is not right");
        info = verified.authenticationInfo;
      } catch (error) {
        const why = (error as Error).message;
        return refuse(user, why, new PasskeyRefused("passkey_refused", `This passkey was refused: ${why}`));
      }
      // Two answers racing with one counter: only one moves it.
      if (!(await store.factors.usePasskey(passkey.id, info.newCounter, now)))
        return refuse(
          user,
          "its counter went backwards (a copied key?)",
          new PasskeyRefused("passkey_refused", "This passkey was refused: its signature counter went backwards."),
        );
      return { user, passkey };
    },

    /** From the command line (reset-2fa): every passkey of theirs goes; how many. */
    removeAll: (userId: number): Promise<number> => store.factors.removePasskeys(userId),
  };
}

export type PasskeyService = ReturnType<typeof passkeyService>;
