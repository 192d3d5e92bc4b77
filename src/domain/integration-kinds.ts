// The kinds of integration: what each one's config holds (the API's keys, checked with zod so a bad
// one is a 400 naming config.KEY), which of those are secrets (stored apart, written but never
// shown again: answers carry them masked), and how each one's config reads in a list.
import { z } from "zod";
import type { IntegrationKind } from "../model/notification.ts";

const httpUrl = z
  .url({ protocol: /^https?$/, error: "must be an http(s) URL" })
  .max(2048, "must be at most 2048 characters");
const token = (what: string) =>
  z
    .string({ error: `is required: ${what}` })
    .trim()
    .min(1, `is required: ${what}`)
    .max(512, "must be at most 512 characters")
    .regex(/^\S+$/, `must be ${what}, without spaces`);
const name = z.string().trim();

export const KIND_CONFIG = {
  email: z
    .object({
      to: z
        .array(z.email({ error: "must be e-mail addresses, such as ops@example.com" }).max(254), {
          error: 'must be a list of e-mail addresses, such as ["ops@example.com"]',
        })
        .min(1, "needs at least one address")
        .max(20, "at most 20 addresses"),
    })
    .strict(),
  telegram: z
    .object({
      bot_token: z
        .string({ error: "is required: the bot's token from @BotFather" })
        .regex(/^\d{1,20}:[\w-]{20,100}$/, "must be a bot token from @BotFather, like 123456789:AAH…"),
      chat_id: z
        .union([z.string(), z.number().int()], {
          error: "is required: a chat id such as -1001234567890, or a channel's @username",
        })
        .transform(String)
        .pipe(
          z
            .string()
            .regex(
              /^(-?\d{1,20}|@[A-Za-z]\w{3,31})$/,
              "must be a chat id (a number such as -1001234567890) or a public channel's @username",
            ),
        ),
      api_url: httpUrl.optional(),
    })
    .strict(),
  gotify: z.object({ url: httpUrl, token: token("the token of a Gotify application") }).strict(),
  pushover: z
    .object({
      user_key: z
        .string({ error: "is required: your user (or group) key" })
        .regex(/^[A-Za-z0-9]{30}$/, "must be your Pushover user (or group) key: 30 letters and digits"),
      app_token: z
        .string({ error: "is required: the API token of a Pushover application" })
        .regex(/^[A-Za-z0-9]{30}$/, "must be the API token of a Pushover application: 30 letters and digits"),
      api_url: httpUrl.optional(),
    })
    .strict(),
  matrix: z
    .object({
      homeserver: httpUrl,
      room_id: z
        .string({ error: "is required: a room id such as !abc123:example.org" })
        .regex(
          /^![^:\s]{1,255}:\S{1,255}$/,
          "must be a room id such as !abc123:example.org (Room settings → Advanced), not its #alias",
        ),
      access_token: token("an access token of the account that posts"),
    })
    .strict(),
  webhook: z
    .object({
      url: httpUrl,
      secret: z
        .string()
        .min(16, "must be at least 16 characters")
        .max(200, "must be at most 200 characters")
        .optional(),
    })
    .strict(),
  ntfy: z
    .object({
      url: httpUrl.transform((u) => u.replace(/\/+$/, "")),
      topic: name.pipe(
        z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1-64 letters, digits, dashes or underscores"),
      ),
      token: z.string().trim().max(200, "must be at most 200 characters").optional(),
    })
    .strict(),
  // Checked by path, not host, so a self-hosted relay or a proxy in between also works.
  discord: z
    .object({
      webhook_url: httpUrl.refine(
        (u) => /\/api\/webhooks\/\d+\/[\w-]+$/.test(u),
        "must be a Discord webhook URL (https://discord.com/api/webhooks/ID/TOKEN)",
      ),
    })
    .strict(),
  slack: z
    .object({
      webhook_url: httpUrl.refine(
        (u) => /\/services\/[\w/]+$/.test(u),
        "must be a Slack incoming webhook URL (https://hooks.slack.com/services/...)",
      ),
    })
    .strict(),
} satisfies Record<IntegrationKind, z.ZodType>;

export type KindConfig<K extends IntegrationKind> = z.output<(typeof KIND_CONFIG)[K]>;

/** The config keys that are secrets, per kind. */
export const SECRET_KEYS: Record<IntegrationKind, string[]> = {
  email: [],
  telegram: ["bot_token"],
  gotify: ["token"],
  pushover: ["user_key", "app_token"],
  matrix: ["access_token"],
  webhook: ["secret"],
  ntfy: ["token"],
  discord: ["webhook_url"],
  slack: ["webhook_url"],
};

/**
 * The config keys that say where a kind's secrets are sent (its server, a proxy). A secret goes only
 * where it was sent with: a change of one of these must send the secrets again, or anyone allowed
 * to change an integration could point it at their own server and read the stored token there.
 * (A webhook's secret never leaves: it signs the body.)
 */
export const DESTINATION_KEYS: Record<IntegrationKind, string[]> = {
  email: [],
  telegram: ["api_url"],
  gotify: ["url"],
  pushover: ["api_url"],
  matrix: ["homeserver"],
  webhook: [],
  ntfy: ["url"],
  discord: [],
  slack: [],
};

/** The config keys that hold a URL the kind sends to: each is checked by the outbound rules (outbound.ts) when saved. */
export const URL_KEYS: Record<IntegrationKind, string[]> = {
  email: [],
  telegram: ["api_url"],
  gotify: ["url"],
  pushover: ["api_url"],
  matrix: ["homeserver"],
  webhook: ["url"],
  ntfy: ["url"],
  discord: ["webhook_url"],
  slack: ["webhook_url"],
};

export const KIND_LABEL: Record<IntegrationKind, string> = {
  email: "E-mail",
  telegram: "Telegram",
  gotify: "Gotify",
  pushover: "Pushover",
  matrix: "Matrix",
  webhook: "Webhook (signed JSON)",
  ntfy: "ntfy topic",
  discord: "Discord",
  slack: "Slack",
};

/** The public services the hosted kinds talk to unless api_url names another (a proxy, a self-hosted Bot API server). */
export const DEFAULT_API = { telegram: "https://api.telegram.org", pushover: "https://api.pushover.net" } as const;

/** A config split into what may be shown and what may not. */
export function splitConfig(
  kind: IntegrationKind,
  config: Record<string, unknown>,
): { shown: Record<string, unknown>; secrets: Record<string, string> } {
  const shown: Record<string, unknown> = {};
  const secrets: Record<string, string> = {};
  for (const [key, value] of Object.entries(config)) {
    if (value === undefined) continue;
    if (SECRET_KEYS[kind].includes(key)) secrets[key] = String(value);
    else shown[key] = value;
  }
  return { shown, secrets };
}

/** A secret as answers show it: a URL's origin and last characters, or a token's last characters. */
export function maskSecret(value: string): string {
  if (/^https?:\/\//.test(value)) return maskUrl(value);
  return value.length >= 16 ? `…${value.slice(-4)}` : "…";
}

export function maskUrl(url: string): string {
  try {
    return `${new URL(url).origin}/…${url.slice(-4)}`;
  } catch {
    return "…";
  }
}

/** The config with its secrets masked: what answers, the dashboard and the CLI show. */
export function maskedConfig(
  kind: IntegrationKind,
  config: Record<string, unknown>,
  secrets: Record<string, string>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...config };
  for (const key of SECRET_KEYS[kind]) if (secrets[key] !== undefined) out[key] = maskSecret(secrets[key]);
  return out;
}

/** Where an integration sends, for a list: a URL, a chat, a room, recipients; from its masked config (maskedConfig), so never a secret. */
export function destination(kind: IntegrationKind, masked: Record<string, unknown>): string {
  const c = masked as Record<string, string | string[] | undefined>;
  switch (kind) {
    case "email":
      return (c.to as string[] | undefined)?.join(", ") ?? "";
    case "telegram":
      return `chat ${c.chat_id}${c.api_url ? ` via ${c.api_url}` : ""}`;
    case "gotify":
      return String(c.url);
    case "pushover":
      return `user ${c.user_key ?? "…"}${c.api_url ? ` via ${c.api_url}` : ""}`;
    case "matrix":
      return `${c.room_id} on ${c.homeserver}`;
    case "webhook":
      return String(c.url);
    case "ntfy":
      return `${c.url} → ${c.topic}`;
    case "discord":
    case "slack":
      return String(c.webhook_url ?? "…");
  }
}
