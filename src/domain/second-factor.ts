// A second factor: a TOTP authenticator (otpauth does the crypto: RFC 6238, SHA-1, 6 digits, 30 s)
// with 10 recovery codes, each usable once and kept as SHA-256 hashes. A code is taken for its
// 30-second step and never again (takeStep), so one read over a shoulder or sent twice opens
// nothing. Whether everyone who signs in with a password must have one is an admin's setting, kept
// in the meta table. The sign-in's second step itself is in accounts.ts.
import QRCode from "qrcode";
import { Secret, TOTP } from "otpauth";
import { type Clock, systemClock } from "../clock.ts";
import { Conflict, NotFound, ValidationError } from "../errors.ts";
import { type Actor, COMMAND_LINE } from "../model/audit.ts";
import type { Repositories, Store } from "../store/store.ts";
import { audited } from "./audit.ts";

const PERIOD_SECONDS = 30;
export const RECOVERY_CODES = 10;
const ISSUER = "Signalboard";
/** The meta key of the admin's setting: "on" when every password sign-in needs a second factor. */
const REQUIRED_KEY = "auth.second_factor_required";

/** What a code's sign-in is recorded as in the audit trail (the method of each sign-in). */
export type CodeKind = "totp" | "recovery code";

function sha256(text: string): string {
  return new Bun.CryptoHasher("sha256").update(text).digest("hex");
}

/** A new secret, 160 bits as RFC 4226 advises, in base32 (as otpauth and authenticator apps take it). */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

function totpOf(secret: string, username = ""): TOTP {
  return new TOTP({
    issuer: ISSUER,
    label: username,
    algorithm: "SHA1",
    digits: 6,
    period: PERIOD_SECONDS,
    secret: Secret.fromBase32(secret),
  });
}

/** The 30-second step a code is right for (one step either way, for a clock a little off), or null. */
export function stepOfCode(secret: string, code: string, now: number): number | null {
  const token = code.replace(/\s+/g, "");
  if (!/^\d{6}$/.test(token)) return null;
  const delta = totpOf(secret).validate({ token, timestamp: now, window: 1 });
  return delta === null ? null : Math.floor(now / 1000 / PERIOD_SECONDS) + delta;
}

/** What an authenticator app is shown: the otpauth:// URI, as a QR code (inline SVG) and the key written out. */
export async function totpOffer(
  username: string,
  secret: string,
): Promise<{ secret: string; uri: string; qrSvg: string; grouped: string }> {
  const uri = totpOf(secret, username).toString();
  const qrSvg = await QRCode.toString(uri, { type: "svg", errorCorrectionLevel: "M", margin: 2 });
  return { secret, uri, qrSvg, grouped: secret.replace(/(.{4})/g, "$1 ").trim() };
}

const RECOVERY_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789";

/** Ten new recovery codes, 50 bits each, as "xxxxx-xxxxx". */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODES }, () => {
    const bytes = crypto.getRandomValues(new Uint8Array(10));
    const chars = [...bytes].map((b) => RECOVERY_ALPHABET[b % RECOVERY_ALPHABET.length]).join("");
    return `${chars.slice(0, 5)}-${chars.slice(5)}`;
  });
}

/** A recovery code as typed (any case, spaces or dashes) to the hash kept. */
export function recoveryCodeHash(code: string): string {
  return sha256(code.toLowerCase().replace(/[\s-]+/g, ""));
}

/**
 * Checks a code a person typed: six digits against their authenticator (each step taken once), or
 * one of their recovery codes (used up). What it was, or null when it opens nothing.
 */
export async function checkCode(
  repos: Pick<Repositories, "factors">,
  userId: number,
  code: string,
  now: number,
): Promise<CodeKind | null> {
  const typed = code.trim().slice(0, 64);
  if (/^\d[\d\s]{5,7}$/.test(typed)) {
    const factor = await repos.factors.totp(userId);
    if (!factor?.confirmedAt) return null;
    const step = stepOfCode(factor.secret, typed, now);
    if (step === null) return null;
    return (await repos.factors.takeStep(userId, step)) ? "totp" : null;
  }
  if (!typed) return null;
  return (await repos.factors.useRecoveryCode(userId, recoveryCodeHash(typed), now)) ? "recovery code" : null;
}

export async function secondFactorRequired(store: Pick<Repositories, "meta">): Promise<boolean> {
  return (await store.meta.get(REQUIRED_KEY)) === "on";
}

const wrongCode = (message = "this code is not right: type the 6 digits your app shows now") =>
  ValidationError.field("code", "wrong_code", `code: ${message}`);

export function secondFactorService(store: Store, options: { clock?: Clock } = {}) {
  const clock = options.clock ?? systemClock;
  return {
    /** Whether they have an authenticator, and how many recovery codes are left. */
    async status(userId: number): Promise<{ enabled: boolean; recoveryLeft: number }> {
      const factor = await store.factors.totp(userId);
      if (!factor?.confirmedAt) return { enabled: false, recoveryLeft: 0 };
      return { enabled: true, recoveryLeft: await store.factors.recoveryCodesLeft(userId) };
    },

    offer: totpOffer,

    /** Of these people, those with an authenticator on. */
    withFactor: (userIds: number[]) => store.factors.withFactor(userIds),

    /**
     * Turns an authenticator on: `secret` is the one offered, `code` what the app shows for it.
     * Returns the recovery codes, shown once and kept only as hashes.
     */
    async enable(
      user: { id: number; username: string },
      secret: string,
      code: string,
      actor: Actor,
      now = clock.now(),
    ): Promise<string[]> {
      if (!/^[A-Z2-7]{32}$/.test(secret)) throw ValidationError.field("secret", "invalid", "secret: start again");
      const step = stepOfCode(secret, code, now);
      if (step === null) throw wrongCode();
      const codes = newRecoveryCodes();
      const done = await audited(
        store,
        actor,
        async (tx, note) => {
          const enabled = await tx.factors.enableTotp(user.id, secret, step, codes.map(recoveryCodeHash), now);
          if (enabled)
            note(
              "second_factor.enabled",
              `user ${user.username}`,
              `TOTP authenticator; ${RECOVERY_CODES} recovery codes`,
            );
          return enabled;
        },
        now,
      );
      if (!done) throw new Conflict("An authenticator is on already: turn it off first to set up another.");
      return codes;
    },

    /** Turns their authenticator off, with one of its codes (or a recovery code). False for a wrong code. */
    async disable(
      user: { id: number; username: string },
      code: string,
      actor: Actor,
      now = clock.now(),
    ): Promise<void> {
      const removed = await audited(
        store,
        actor,
        async (tx, note) => {
          const kind = await checkCode(tx, user.id, code, now);
          if (!kind) return false;
          await tx.factors.removeTotp(user.id);
          note(
            "second_factor.disabled",
            `user ${user.username}`,
            `turned off by themselves, with a ${kind === "totp" ? "code" : "recovery code"}`,
          );
          return true;
        },
        now,
      );
      if (!removed) throw wrongCode("this code is not right: type the 6 digits your app shows now, or a recovery code");
    },

    /**
     * From the command line, for a lost phone: the authenticator and its recovery codes go, and
     * their passkeys; they set them up again. What was removed.
     */
    async reset(
      username: string,
      by: Actor = COMMAND_LINE,
      now = clock.now(),
    ): Promise<{ totp: boolean; passkeys: number }> {
      const name = username.trim().toLowerCase();
      const user = await store.users.findByUsername(name);
      if (!user) throw new NotFound(`No user named "${username}".`);
      return audited(
        store,
        by,
        async (tx, note) => {
          const totp = await tx.factors.removeTotp(user.id);
          const passkeys = await tx.factors.removePasskeys(user.id);
          const removed = [
            ...(totp ? ["the TOTP authenticator and its recovery codes"] : []),
            ...(passkeys ? [`${passkeys} passkey${passkeys === 1 ? "" : "s"}`] : []),
          ];
          if (removed.length)
            note(
              "second_factor.reset",
              `user ${user.username}`,
              `${removed.join(" and ")} removed from the command line (a lost authenticator)`,
            );
          return { totp, passkeys };
        },
        now,
      );
    },

    required: () => secondFactorRequired(store),

    /** An admin's setting: whether every password sign-in needs a second factor. */
    async setRequired(on: boolean, actor: Actor, now = clock.now()): Promise<void> {
      await audited(
        store,
        actor,
        async (tx, note) => {
          if ((await secondFactorRequired(tx)) === on) return;
          await tx.meta.set(REQUIRED_KEY, on ? "on" : "off");
          note(
            "second_factor.required",
            "every password sign-in",
            on ? "a second factor is required" : "a second factor is each person's choice",
          );
        },
        now,
      );
    },
  };
}

export type SecondFactorService = ReturnType<typeof secondFactorService>;
