// A browser's push subscription keys (RFC 8291), checked when the device registers. web-push finds
// a key it cannot use only when it encrypts a message, long after the browser that sent it is gone,
// so a bad key is refused here, where the sender can still be told.
import { createPublicKey } from "node:crypto";
import { z } from "zod";
import { onlyStrings } from "./input-fields.ts";

const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;
const AUTH_BYTES = 16;
const POINT_BYTES = 65; // 0x04, then x and y: an uncompressed P-256 point

/** Why a subscription's auth secret cannot be used, or null. */
export function authProblem(key: Buffer): string | null {
  return key.length === AUTH_BYTES ? null : `must be ${AUTH_BYTES} bytes (base64url), got ${key.length}`;
}

/** Why a subscription's p256dh key cannot be used, or null. */
export function p256dhProblem(key: Buffer): string | null {
  if (key.length !== POINT_BYTES)
    return `must be an uncompressed P-256 public key of ${POINT_BYTES} bytes (base64url), got ${key.length}`;
  if (key[0] !== 0x04)
    return `must be an uncompressed P-256 public key (its first byte 0x04), got one starting 0x${key[0]!.toString(16).padStart(2, "0")}`;
  try {
    // node:crypto refuses a point that is not on the curve; web-push would fail on it later.
    createPublicKey({
      key: {
        kty: "EC",
        crv: "P-256",
        x: key.subarray(1, 33).toString("base64url"),
        y: key.subarray(33).toString("base64url"),
      },
      format: "jwk",
    });
    return null;
  } catch {
    return "is not a point on the P-256 curve (not a browser's push key)";
  }
}

/** A base64url key whose bytes `problem` accepts; one message per field, whatever is wrong. */
export function pushKey(problem: (key: Buffer) => string | null) {
  return onlyStrings(
    z.string().superRefine((value, ctx) => {
      const why = BASE64URL.test(value) ? problem(Buffer.from(value, "base64url")) : "must be base64url";
      if (why) ctx.addIssue({ code: "custom", message: why, input: value });
    }),
  );
}
