// A Matrix room, posted to by an account of its homeserver: HTML (org.matrix.custom.html) and its
// words as the plain body; a transaction id per delivery, so the homeserver keeps one event per id.
import { z } from "zod";
import { escapeHtml, htmlText, matrixHtml } from "../safe-html.ts";
import { apiToken, defineKind, httpUrl, jsonRequest, LINK_TEXT, withoutSlash } from "./kind.ts";

export const matrix = defineKind({
  label: "Matrix",
  schema: z
    .object({
      homeserver: httpUrl,
      room_id: z
        .string({ error: "is required: a room id such as !abc123:example.org" })
        .regex(
          /^![^:\s]{1,255}:\S{1,255}$/,
          "must be a room id such as !abc123:example.org (Room settings → Advanced), not its #alias",
        ),
      access_token: apiToken("an access token of the account that posts"),
    })
    .strict(),
  secrets: ["access_token"],
  destinationKeys: ["homeserver"],
  urlKeys: ["homeserver"],
  destination: (c) => `${c.room_id} on ${c.homeserver}`,
  fields: [
    { key: "homeserver", label: "Homeserver", type: "url", placeholder: "https://matrix.example.org" },
    { key: "room_id", label: "Room id", placeholder: "!abc123:example.org" },
    { key: "access_token", label: "Access token", type: "password" },
  ],
  hint: "An account for Signalboard, invited to the room: its access token (Settings → Help & About in Element) and the room id (Room settings → Advanced).",
  formatHint: "Markdown (values are escaped)",
  format: "markdown",
  finish: (body) => ({ body, html: matrixHtml(body) }),
  send: {
    request(c, p, d) {
      const html = `<strong>${escapeHtml(p.title)}</strong><br>${p.html ?? escapeHtml(p.body)}<p><a href="${escapeHtml(p.url)}">${LINK_TEXT}</a></p>`;
      const txn = `sb-${d.id}-${d.createdAt.toString(36)}`;
      const path = `/_matrix/client/v3/rooms/${encodeURIComponent(c.room_id)}/send/m.room.message/${encodeURIComponent(txn)}`;
      const plain = `${p.title}\n${p.html ? htmlText(p.html) : p.body}\n${p.url}`;
      return jsonRequest(
        `${withoutSlash(c.homeserver)}${path}`,
        { msgtype: "m.text", body: plain, format: "org.matrix.custom.html", formatted_body: html },
        { Authorization: `Bearer ${c.access_token}` },
        "PUT",
      );
    },
  },
});
