// A Telegram chat, through a bot (api.telegram.org unless api_url names a proxy or a self-hosted
// Bot API server): HTML as Telegram's parse_mode reads it; priorities 1 and 2 arrive without a sound.
import { z } from "zod";
import { escapeHtml, telegramHtml } from "../safe-html.ts";
import { defineKind, httpUrl, jsonRequest, level, LINK_TEXT, withoutSlash } from "./kind.ts";

const API = "https://api.telegram.org";

const silentOnTelegram = (p: number) => level([true, true, false, false, false], p);

export const telegram = defineKind({
  label: "Telegram",
  schema: z
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
  secrets: ["bot_token"],
  destinationKeys: ["api_url"],
  urlKeys: ["api_url"],
  destination: (c) => `chat ${c.chat_id}${c.api_url ? ` via ${c.api_url}` : ""}`,
  fields: [
    { key: "bot_token", label: "Bot token", type: "password", placeholder: "123456789:AAH…" },
    { key: "chat_id", label: "Chat id", placeholder: "-1001234567890 or @channelname" },
    { key: "api_url", label: "Bot API server (optional)", type: "url", placeholder: API },
  ],
  hint: "Talk to @BotFather, /newbot, copy its token; add the bot to the chat; the chat id is a number (groups start with -100) or a public channel's @name.",
  formatHint: "Markdown (values are escaped)",
  format: "markdown",
  finish: (body) => ({ body, html: telegramHtml(body.slice(0, 3500)) }),
  send: {
    request(c, p) {
      const text = `<b>${escapeHtml(p.title)}</b>\n${p.html ?? escapeHtml(p.body)}\n\n<a href="${escapeHtml(p.url)}">${LINK_TEXT}</a>`;
      return jsonRequest(`${withoutSlash(c.api_url ?? API)}/bot${c.bot_token}/sendMessage`, {
        chat_id: c.chat_id,
        text,
        parse_mode: "HTML",
        link_preview_options: { is_disabled: true },
        disable_notification: silentOnTelegram(p.priority ?? 3),
      });
    },
  },
});
