// E-mail through the server's SMTP settings (notify/email.ts sends it): HTML, sanitised, and its
// words as the plain part. X-Priority and Importance as nodemailer's priority.
import { z } from "zod";
import { emailHtml, htmlText } from "../safe-html.ts";
import { defineKind, level } from "./kind.ts";

export const emailPriority = (p: number) => level(["low", "low", "normal", "high", "high"] as const, p);

export const email = defineKind({
  label: "E-mail",
  schema: z
    .object({
      to: z
        .array(z.email({ error: "must be e-mail addresses, such as ops@example.com" }).max(254), {
          error: 'must be a list of e-mail addresses, such as ["ops@example.com"]',
        })
        .min(1, "needs at least one address")
        .max(20, "at most 20 addresses"),
    })
    .strict(),
  secrets: [],
  destinationKeys: [],
  urlKeys: [],
  destination: (c) => c.to?.join(", ") ?? "",
  fields: [
    {
      key: "to",
      label: "Recipients (commas between addresses)",
      placeholder: "ops@example.com, me@example.com",
      list: true,
    },
  ],
  hint: "Sent through the server's SMTP settings (SIGNALBOARD_SMTP_URL).",
  formatHint: "HTML (values are escaped; the result is sanitised)",
  format: "html",
  finish: (body) => ({ body: htmlText(body), html: emailHtml(body) }),
  send: { mail: (c) => c.to },
});
