// A kind's config as it is stored and shown: split into what may be shown and its secrets, the
// secrets masked in every answer, and where it sends, for a list.
import { z } from "zod";
import { kindNamed } from "./registry.ts";

/** A config split into what may be shown and what may not. */
export function splitConfig(
  kind: string,
  config: Record<string, unknown>,
): { shown: Record<string, unknown>; secrets: Record<string, string> } {
  const secretKeys: readonly string[] = kindNamed(kind).secrets;
  const shown: Record<string, unknown> = {};
  const secrets: Record<string, string> = {};
  for (const [key, value] of Object.entries(config)) {
    if (value === undefined) continue;
    if (secretKeys.includes(key)) secrets[key] = String(value);
    else shown[key] = value;
  }
  return { shown, secrets };
}

/** A secret as answers show it: a URL's origin and last characters, or a token's last characters. */
export function maskSecret(value: string): string {
  if (/^https?:\/\//.test(value)) return maskUrl(value);
  return value.length >= 16 ? `…${value.slice(-4)}` : "…";
}

function maskUrl(url: string): string {
  try {
    return `${new URL(url).origin}/…${url.slice(-4)}`;
  } catch {
    return "…";
  }
}

/** The config with its secrets masked: what answers, the dashboard and the CLI show. */
export function maskedConfig(
  kind: string,
  config: Record<string, unknown>,
  secrets: Record<string, string>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...config };
  for (const key of kindNamed(kind).secrets) if (secrets[key] !== undefined) out[key] = maskSecret(secrets[key]);
  return out;
}

/** Where an integration sends, for a list: a URL, a chat, a room, recipients; from its masked config (maskedConfig), so never a secret. */
export const destination = (kind: string, masked: Record<string, unknown>): string =>
  kindNamed(kind).destination(masked);

/** A kind's config keys as the API's description lists them: {url, token?}. */
export function configKeys(kind: string): string {
  const { schema } = kindNamed(kind);
  const shape: Record<string, z.ZodType> = schema instanceof z.ZodObject ? schema.shape : {};
  const keys = Object.entries(shape).map(([key, value]) => (value.safeParse(undefined).success ? `${key}?` : key));
  return `{${keys.join(", ")}}`;
}
