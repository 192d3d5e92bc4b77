// A Gotify server's application. Gotify's priorities are 0-10: its Android app shows 1-3 quietly,
// 4-7 with a sound and 8-10 as urgent, and 0 not at all (so no event maps there).
import { z } from "zod";
import { apiToken, defineKind, httpUrl, jsonRequest, level, withoutSlash } from "./kind.ts";

const gotifyPriority = (p: number) => level([1, 3, 5, 8, 10], p);

export const gotify = defineKind({
  label: "Gotify",
  schema: z.object({ url: httpUrl, token: apiToken("the token of a Gotify application") }).strict(),
  secrets: ["token"],
  destinationKeys: ["url"],
  urlKeys: ["url"],
  destination: (c) => String(c.url),
  fields: [
    { key: "url", label: "Gotify server", type: "url", placeholder: "https://gotify.example.com" },
    { key: "token", label: "Application token", type: "password" },
  ],
  hint: "In Gotify: Apps → Create application, copy its token.",
  formatHint: "plain text",
  format: "text",
  send: {
    request: (c, p) =>
      jsonRequest(
        `${withoutSlash(c.url)}/message`,
        {
          title: p.title,
          message: `${p.body}\n\n${p.url}`,
          priority: gotifyPriority(p.priority ?? 3),
          extras: {
            "client::display": { contentType: "text/plain" },
            "client::notification": { click: { url: p.url } },
          },
        },
        { "X-Gotify-Key": c.token },
      ),
  },
});
