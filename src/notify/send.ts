// Sending one delivery: a Web Push message (encrypted and signed by the web-push library, sent
// with fetch) or an integration's HTTP request. Every answer is classified the same way: 2xx
// delivered; 429, 5xx and network errors retried (honouring Retry-After); 404/410 from a push
// service means the device is gone; any other 4xx will not get better by retrying.
import { createHmac } from "node:crypto";
import webpush from "web-push";
import type { Payload } from "../domain/notifications.ts";
import type { Vapid } from "./vapid.ts";
import type { Integration, Subscription } from "../model/notification.ts";

export type SendResult =
  | { ok: true; status: number }
  | { ok: false; status: number | null; error: string; retry: boolean; retryAfterMs?: number; gone?: boolean };

const TIMEOUT_MS = 10_000;
const USER_AGENT = "Signalboard";

export async function sendPush(device: Subscription, payload: Payload, vapid: Vapid, signal: AbortSignal): Promise<SendResult> {
  const message = JSON.stringify({ title: payload.title, body: payload.body, url: payload.url, tag: payload.tag });
  const request = webpush.generateRequestDetails({ endpoint: device.endpoint, keys: { p256dh: device.p256dh, auth: device.auth } }, message, {
    vapidDetails: vapid,
    TTL: 24 * 3600,
    urgency: "high",
  });
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(request.headers)) if (key !== "Content-Length") headers[key] = String(value);
  const result = await post(request.endpoint, { method: "POST", headers, body: request.body as unknown as BodyInit }, signal);
  if (!result.ok && (result.status === 404 || result.status === 410)) return { ...result, retry: false, gone: true, error: `the push service no longer knows this device (${result.status})` };
  return result;
}

export async function sendIntegration(integration: Integration, payload: Payload, deliveryId: number, signal: AbortSignal): Promise<SendResult> {
  const { url, init } = integrationRequest(integration, payload, deliveryId);
  return post(url, init, signal);
}

/** The HTTP request an integration sends for a payload. */
export function integrationRequest(i: Integration, p: Payload, deliveryId: number): { url: string; init: RequestInit } {
  const json = (url: string, body: unknown, headers: Record<string, string> = {}) => {
    const text = JSON.stringify(body);
    return { url, init: { method: "POST", headers: { "Content-Type": "application/json", "User-Agent": USER_AGENT, ...headers }, body: text } };
  };
  const where = p.event ? `#${p.event.channel} · ${p.event.project}` : "Signalboard";
  switch (i.kind) {
    case "webhook": {
      const body = JSON.stringify({ type: p.test ? "test" : "event.notify", delivery_id: deliveryId, sent_at: Math.floor(Date.now() / 1000), title: p.title, body: p.body, url: p.url, event: p.event });
      const signature = createHmac("sha256", i.secret ?? "").update(body).digest("hex");
      return { url: i.url, init: { method: "POST", headers: { "Content-Type": "application/json", "User-Agent": USER_AGENT, "X-Signalboard-Signature": `sha256=${signature}`, "X-Signalboard-Delivery": String(deliveryId) }, body } };
    }
    case "ntfy":
      // JSON publishing: UTF-8 (emoji) is safe in a JSON body, not in ntfy's header form.
      return json(i.url, { topic: i.topic, title: p.title, message: p.body, click: p.url, tags: p.test ? ["bell"] : [] }, i.secret ? { Authorization: `Bearer ${i.secret}` } : {});
    case "discord":
      return json(i.url, {
        username: "Signalboard",
        embeds: [{ title: p.title.slice(0, 256), description: p.body.slice(0, 4000), url: p.url, timestamp: new Date((p.event?.timestamp ?? Date.now() / 1000) * 1000).toISOString(), footer: { text: where } }],
      });
    case "slack":
      return json(i.url, { text: `*${slackEscape(p.title)}*\n${slackEscape(p.body)}\n<${p.url}|Open in Signalboard> · ${slackEscape(where)}` });
  }
}

function slackEscape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** `signal` aborts the request when the notifier stops; the timeout when the receiver does not answer. */
async function post(url: string, init: RequestInit, signal: AbortSignal): Promise<SendResult> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, redirect: "manual", signal: AbortSignal.any([signal, AbortSignal.timeout(TIMEOUT_MS)]) });
  } catch (error) {
    const timedOut = (error as Error).name === "TimeoutError";
    return { ok: false, status: null, retry: true, error: timedOut ? `no answer within ${TIMEOUT_MS / 1000} s` : `could not connect: ${(error as Error).message}` };
  }
  await response.body?.cancel().catch(() => {});
  if (response.ok) return { ok: true, status: response.status };
  const retry = response.status === 429 || response.status >= 500;
  // Only the status is kept and shown: a receiver's body is not ours to show. A URL pointed at an
  // internal service would otherwise let any dashboard user read what that service answers.
  return { ok: false, status: response.status, retry, retryAfterMs: retryAfter(response.headers.get("retry-after")), error: `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}` };
}

/** Retry-After as seconds or an HTTP date, in milliseconds from now. */
export function retryAfter(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(header);
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : undefined;
}
