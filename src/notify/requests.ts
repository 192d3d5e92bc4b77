// The HTTP request each kind of integration sends for a payload (its title and body already in the
// kind's format: domain/templates.ts), the way each service documents it. Every kind that can tell
// a repeat from a new message is given what it needs: a webhook the delivery id (a header and the
// body), Matrix a transaction id per delivery (the homeserver keeps one event per id).
import { createHmac } from "node:crypto";
import type { Payload } from "../domain/notifications.ts";
import { DEFAULT_API } from "../domain/integration-kinds.ts";
import { escapeHtml, htmlText } from "../domain/safe-html.ts";
import { escapeSlack } from "../domain/templates.ts";
import type { Delivery, Integration } from "../model/notification.ts";
import { gotifyPriority, ntfyPriority, PUSHOVER_EMERGENCY, pushoverPriority, silentOnTelegram } from "./priority.ts";

export const USER_AGENT = "Signalboard";

export type HttpRequest = { url: string; init: RequestInit };

const LINK_TEXT = "Open in Signalboard";

const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
const base = (url: string) => url.replace(/\/+$/, "");

function json(url: string, body: unknown, headers: Record<string, string> = {}, method = "POST"): HttpRequest {
  return {
    url,
    init: {
      method,
      headers: { "Content-Type": "application/json", "User-Agent": USER_AGENT, ...headers },
      body: JSON.stringify(body),
    },
  };
}

/** The request an integration (any kind but e-mail) sends for a payload, as delivery `d`. */
export function integrationRequest(i: Integration, p: Payload, d: Pick<Delivery, "id" | "createdAt">): HttpRequest {
  const c = i.config as Record<string, string | undefined>;
  const s = i.secrets;
  const priority = p.priority ?? 3;
  const where = p.event ? `#${p.event.channel} · ${p.event.project}` : "Signalboard";
  switch (i.kind) {
    case "webhook": {
      const body =
        p.json ??
        JSON.stringify({
          type: p.test ? "test" : p.digest ? "digest" : "event.notify",
          delivery_id: d.id,
          sent_at: Math.floor(Date.now() / 1000),
          title: p.title,
          body: p.body,
          url: p.url,
          priority,
          event: p.event,
        });
      const signature = createHmac("sha256", s.secret ?? "")
        .update(body)
        .digest("hex");
      return {
        url: c.url!,
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
    }
    case "ntfy":
      // JSON publishing: UTF-8 (emoji) is safe in a JSON body, not in ntfy's header form.
      return json(
        c.url!,
        {
          topic: c.topic,
          title: p.title,
          message: p.body,
          click: p.url,
          priority: ntfyPriority(priority),
          tags: p.test ? ["bell"] : [],
        },
        s.token ? { Authorization: `Bearer ${s.token}` } : {},
      );
    case "discord":
      return json(s.webhook_url!, {
        username: "Signalboard",
        // Event text never pings anyone: mentions in it stay text.
        allowed_mentions: { parse: [] },
        embeds: [
          {
            title: cut(p.title, 256),
            description: cut(p.body, 4000),
            url: p.url,
            timestamp: new Date((p.event?.timestamp ?? Date.now() / 1000) * 1000).toISOString(),
            footer: { text: where },
          },
        ],
      });
    case "slack":
      return json(s.webhook_url!, {
        text: `*${escapeSlack(p.title)}*\n${p.body}\n<${p.url}|${LINK_TEXT}> · ${escapeSlack(where)}`,
      });
    case "telegram": {
      const text = `<b>${escapeHtml(p.title)}</b>\n${p.html ?? escapeHtml(p.body)}\n\n<a href="${escapeHtml(p.url)}">${LINK_TEXT}</a>`;
      return json(`${base(c.api_url ?? DEFAULT_API.telegram)}/bot${s.bot_token}/sendMessage`, {
        chat_id: c.chat_id,
        text,
        parse_mode: "HTML",
        link_preview_options: { is_disabled: true },
        disable_notification: silentOnTelegram(priority),
      });
    }
    case "gotify":
      return json(
        `${base(c.url!)}/message`,
        {
          title: p.title,
          message: `${p.body}\n\n${p.url}`,
          priority: gotifyPriority(priority),
          extras: {
            "client::display": { contentType: "text/plain" },
            "client::notification": { click: { url: p.url } },
          },
        },
        { "X-Gotify-Key": s.token! },
      );
    case "pushover": {
      const level = pushoverPriority(priority);
      const form = new URLSearchParams({
        token: s.app_token!,
        user: s.user_key!,
        title: cut(p.title, 250),
        message: cut(p.body || p.title, 1024),
        url: cut(p.url, 512),
        url_title: LINK_TEXT,
        priority: String(level),
      });
      if (level === 2) for (const [k, v] of Object.entries(PUSHOVER_EMERGENCY)) form.set(k, String(v));
      return {
        url: `${base(c.api_url ?? DEFAULT_API.pushover)}/1/messages.json`,
        init: {
          method: "POST",
          headers: { "Content-Type": "application/x-www-form-urlencoded", "User-Agent": USER_AGENT },
          body: form.toString(),
        },
      };
    }
    case "matrix": {
      const html = `<strong>${escapeHtml(p.title)}</strong><br>${p.html ?? escapeHtml(p.body)}<p><a href="${escapeHtml(p.url)}">${LINK_TEXT}</a></p>`;
      const txn = `sb-${d.id}-${d.createdAt.toString(36)}`;
      const path = `/_matrix/client/v3/rooms/${encodeURIComponent(c.room_id!)}/send/m.room.message/${encodeURIComponent(txn)}`;
      const plain = `${p.title}\n${p.html ? htmlText(p.html) : p.body}\n${p.url}`;
      return json(
        `${base(c.homeserver!)}${path}`,
        { msgtype: "m.text", body: plain, format: "org.matrix.custom.html", formatted_body: html },
        { Authorization: `Bearer ${s.access_token}` },
        "PUT",
      );
    }
    case "email":
      throw new Error("e-mail is sent over SMTP, not HTTP");
  }
}
