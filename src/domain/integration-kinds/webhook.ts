// A signed JSON POST to any endpoint: the event (or the template's body) signed with
// X-Signalboard-Signature: sha256=HMAC-SHA256(secret, body); the delivery id (a header and the
// body) tells a repeat from a new message. The secret never leaves: it signs the body.
import { createHmac } from "node:crypto";
import { z } from "zod";
import { defineKind, httpUrl, USER_AGENT } from "./kind.ts";

export const webhook = defineKind({
  label: "Webhook (signed JSON)",
  schema: z
    .object({
      url: httpUrl,
      secret: z
        .string()
        .min(16, "must be at least 16 characters")
        .max(200, "must be at most 200 characters")
        .optional(),
    })
    .strict(),
  secrets: ["secret"],
  destinationKeys: [],
  urlKeys: ["url"],
  destination: (c) => String(c.url),
  fields: [
    { key: "url", label: "URL", type: "url", placeholder: "https://" },
    { key: "secret", label: "Signing secret (optional: one is made for you)", type: "password" },
  ],
  hint: "Any https endpoint of yours. Each request is a JSON POST signed with X-Signalboard-Signature: sha256=HMAC-SHA256(secret, body).",
  formatHint: "the whole JSON body (values are escaped for JSON strings)",
  format: "json",
  generatedSecret: { key: "secret", prefix: "whsec_" },
  send: {
    request(c, p, d) {
      const body =
        p.json ??
        JSON.stringify({
          type: p.test ? "test" : p.digest ? "digest" : "event.notify",
          delivery_id: d.id,
          sent_at: Math.floor(Date.now() / 1000),
          title: p.title,
          body: p.body,
          url: p.url,
          priority: p.priority ?? 3,
          event: p.event,
        });
      const signature = createHmac("sha256", c.secret ?? "")
        .update(body)
        .digest("hex");
      return {
        url: c.url,
        init: {
          method: "POST",
          headers: {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            "X-Signalboard-Signature": `sha256=${signature}`,
            "X-Signalboard-Delivery": String(d.id),
          },
          body,
        },
      };
    },
  },
});
