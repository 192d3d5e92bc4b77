// An ntfy topic, on ntfy.sh or a server of one's own: JSON publishing (UTF-8, emoji included, is
// safe in a JSON body, not in ntfy's header form). ntfy has the same five priorities as events.
import { z } from "zod";
import { defineKind, httpUrl, jsonRequest, level } from "./kind.ts";

const ntfyPriority = (p: number) => level([1, 2, 3, 4, 5], p);

export const ntfy = defineKind({
  label: "ntfy topic",
  schema: z
    .object({
      url: httpUrl.transform((u) => u.replace(/\/+$/, "")),
      topic: z
        .string()
        .trim()
        .pipe(z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1-64 letters, digits, dashes or underscores")),
      token: z.string().trim().max(200, "must be at most 200 characters").optional(),
    })
    .strict(),
  secrets: ["token"],
  destinationKeys: ["url"],
  urlKeys: ["url"],
  destination: (c) => `${c.url} → ${c.topic}`,
  fields: [
    { key: "url", label: "ntfy server", type: "url", placeholder: "https://ntfy.sh" },
    { key: "topic", label: "Topic", placeholder: "my-alerts" },
    { key: "token", label: "Access token (optional)", type: "password" },
  ],
  hint: "The server only, such as https://ntfy.sh or your own; subscribe to the topic in the ntfy app.",
  formatHint: "plain text",
  format: "text",
  send: {
    request: (c, p) =>
      jsonRequest(
        c.url,
        {
          topic: c.topic,
          title: p.title,
          message: p.body,
          click: p.url,
          priority: ntfyPriority(p.priority ?? 3),
          tags: p.test ? ["bell"] : [],
        },
        c.token ? { Authorization: `Bearer ${c.token}` } : {},
      ),
  },
});
