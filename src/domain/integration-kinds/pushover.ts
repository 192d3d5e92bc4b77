// Pushover (api.pushover.net unless api_url names another). Its priorities are -2..2: -2 lowest
// (no alert), -1 quiet, 0 normal, 1 high (past quiet hours), 2 emergency, repeated every `retry`
// seconds until acknowledged or `expire` seconds passed.
import { z } from "zod";
import { cut, defineKind, httpUrl, level, LINK_TEXT, USER_AGENT, withoutSlash } from "./kind.ts";

const API = "https://api.pushover.net";
const EMERGENCY = { retry: 60, expire: 3600 } as const;

const pushoverPriority = (p: number) => level([-2, -1, 0, 1, 2], p);

/** Pushover's keys and tokens: 30 letters and digits. */
const key = (required: string, wanted: string) =>
  z
    .string({ error: `is required: ${required}` })
    .regex(/^[A-Za-z0-9]{30}$/, `must be ${wanted}: 30 letters and digits`);

export const pushover = defineKind({
  label: "Pushover",
  schema: z
    .object({
      user_key: key("your user (or group) key", "your Pushover user (or group) key"),
      app_token: key("the API token of a Pushover application", "the API token of a Pushover application"),
      api_url: httpUrl.optional(),
    })
    .strict(),
  secrets: ["user_key", "app_token"],
  destinationKeys: ["api_url"],
  urlKeys: ["api_url"],
  destination: (c) => `user ${c.user_key ?? "…"}${c.api_url ? ` via ${c.api_url}` : ""}`,
  fields: [
    { key: "user_key", label: "User key", type: "password" },
    { key: "app_token", label: "Application API token", type: "password" },
    { key: "api_url", label: "API server (optional)", type: "url", placeholder: API },
  ],
  hint: "Your user key is on pushover.net's front page once signed in; create an application there for its API token.",
  formatHint: "plain text",
  format: "text",
  send: {
    request(c, p) {
      const priority = pushoverPriority(p.priority ?? 3);
      const form = new URLSearchParams({
        token: c.app_token,
        user: c.user_key,
        title: cut(p.title, 250),
        message: cut(p.body || p.title, 1024),
        url: cut(p.url, 512),
        url_title: LINK_TEXT,
        priority: String(priority),
      });
      if (priority === 2) for (const [k, v] of Object.entries(EMERGENCY)) form.set(k, String(v));
      return {
        url: `${withoutSlash(c.api_url ?? API)}/1/messages.json`,
        init: {
          method: "POST",
          headers: { "Content-Type": "application/x-www-form-urlencoded", "User-Agent": USER_AGENT },
          body: form.toString(),
        },
      };
    },
  },
});
