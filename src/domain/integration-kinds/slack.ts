// A Slack app's incoming webhook, in Slack's mrkdwn. The webhook's URL is its secret.
import { z } from "zod";
import { escapeSlack } from "../templates.ts";
import { defineKind, httpUrl, jsonRequest, LINK_TEXT, origin, secretUrl } from "./kind.ts";

export const slack = defineKind({
  label: "Slack",
  schema: z
    .object({
      webhook_url: httpUrl.refine(
        (u) => /\/services\/[\w/]+$/.test(u),
        "must be a Slack incoming webhook URL (https://hooks.slack.com/services/...)",
      ),
    })
    .strict(),
  ...secretUrl("webhook_url"),
  fields: [
    { key: "webhook_url", label: "Slack webhook URL", type: "url", placeholder: "https://hooks.slack.com/services/…" },
  ],
  hint: "An Incoming Webhook of a Slack app: https://hooks.slack.com/services/…",
  formatHint: "Slack's mrkdwn (values are escaped)",
  format: "slack",
  send: {
    request: (c, p) =>
      jsonRequest(c.webhook_url, {
        text: `*${escapeSlack(p.title)}*\n${p.body}\n<${p.url}|${LINK_TEXT}> · ${escapeSlack(origin(p))}`,
      }),
  },
});
