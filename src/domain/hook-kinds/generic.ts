// Any service that posts JSON: the hook's mapping says where in the body each field of the event is
// (JSON paths such as "$.data.title"); without one, a body in POST /v1/log's own shape works as it
// is. With a secret, the signature header (X-Signature-256 unless named) must carry the HMAC-SHA256
// of the raw body, in hex, with or without "sha256=" before it. A body whose id path (or
// Idempotency-Key header) names a delivery seen before is stored once.
import { z } from "zod";
import type { GenericConfig } from "../../model/hook.ts";
import { LIMITS, normalizeIcon } from "../input-fields.ts";
import { at, channelOf, defineHookKind, eventName, fit, hmacHex, sameDigest, tagsOf } from "./kind.ts";

export const DEFAULT_SIGNATURE_HEADER = "X-Signature-256";

const path = z.string().min(1).max(200, "must be at most 200 characters");
const HEADER = /^[A-Za-z0-9-]{1,100}$/;

const config: z.ZodType<GenericConfig> = z
  .object({
    mapping: z
      .object({
        event: path.optional(),
        description: path.optional(),
        icon: path.optional(),
        notify: path.optional(),
        user_id: path.optional(),
        channel: path.optional(),
        id: path.optional(),
        tags: z
          .record(z.string().regex(/^[a-z0-9-]{1,64}$/, "tag keys use lowercase letters, digits or dashes"), path)
          .optional(),
      })
      .strict()
      .optional(),
    signature_header: z.string().regex(HEADER, "must be a header's name, such as X-Signature-256").optional(),
  })
  .strict();

const DEFAULTS = {
  event: "event",
  description: "description",
  icon: "icon",
  notify: "notify",
  user_id: "user_id",
  channel: "channel",
} as const;

export const generic = defineHookKind({
  label: "Generic JSON",
  defaultChannel: "hooks",
  secret: "optional",
  config,
  verify(d, secret, c) {
    if (!secret) return null;
    const name = c.signature_header ?? DEFAULT_SIGNATURE_HEADER;
    const given = d.headers.get(name);
    if (!given) return `The ${name} header is missing: this hook takes only deliveries signed with its secret.`;
    const hex = given.startsWith("sha256=") ? given.slice("sha256=".length) : given;
    if (sameDigest(hmacHex(secret, d.body), hex)) return null;
    return `The ${name} signature does not match: it must be the HMAC-SHA256 of the body with this hook's secret, in hex.`;
  },
  events(body, d, hook) {
    const m = { ...DEFAULTS, ...hook.config.mapping };
    const value = (p: string | undefined) => (p === undefined ? undefined : at(body, p));
    const id = value(m.id) ?? d.headers.get("idempotency-key") ?? undefined;
    const icon = value(m.icon);
    const userId = value(m.user_id);
    const tagPaths = hook.config.mapping?.tags;
    const tagValues = tagPaths
      ? Object.entries(tagPaths).map(([k, p]): [string, unknown] => [k, at(body, p)])
      : Object.entries((value("tags") ?? {}) as Record<string, unknown>);
    return [
      {
        key: id === undefined || id === null ? null : `generic:${fit(id, 200)}`,
        input: {
          channel: channelOf(value(m.channel)) ?? "",
          event: eventName(value(m.event), hook.name),
          description: fit(value(m.description), LIMITS.description),
          icon: typeof icon === "string" ? (normalizeIcon(icon) ?? undefined) : undefined,
          notify: value(m.notify) === true,
          userId: userId === undefined || userId === null ? undefined : fit(userId, LIMITS.userId) || undefined,
          tags: tagsOf(typeof tagValues === "object" ? tagValues : []),
        },
      },
    ];
  },
});
