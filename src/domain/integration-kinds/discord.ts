// A Discord channel's webhook: one embed per message. The webhook's URL is its secret.
import { z } from "zod";
import { cut, defineKind, httpUrl, jsonRequest, origin, secretUrl } from "./kind.ts";

export const discord = defineKind({
  label: "Discord",
  schema: z
    .object({
      // Checked by path, not host, so a self-hosted relay or a proxy in between also works.
      webhook_url: httpUrl.refine(
        (u) => /\/api\/webhooks\/\d+\/[\w-]+$/.test(u),
        "must be a Discord webhook URL (https://discord.com/api/webhooks/ID/TOKEN)",
      ),
    })
    .strict(),
  ...secretUrl("webhook_url"),
  fields: [
    {
      key: "webhook_url",
      label: "Discord webhook URL",
      type: "url",
      placeholder: "https://discord.com/api/webhooks/…",
    },
  ],
  hint: "Server settings → Integrations → Webhooks → New webhook → Copy webhook URL.",
  formatHint: "Markdown (values are escaped)",
  format: "markdown",
  send: {
    request: (c, p) =>
      jsonRequest(c.webhook_url, {
        username: "Signalboard",
        // Event text never pings anyone: mentions in it stay text.
        allowed_mentions: { parse: [] },
        embeds: [
          {
            title: cut(p.title, 256),
            description: cut(p.body, 4000),
            url: p.url,
            timestamp: new Date((p.event?.timestamp ?? Date.now() / 1000) * 1000).toISOString(),
            footer: { text: origin(p) },
          },
        ],
      }),
  },
});
