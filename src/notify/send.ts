// Sending one delivery: a Web Push message (encrypted and signed by the web-push library), an
// integration's HTTP request (its kind's module: domain/integration-kinds/) or an e-mail (email.ts),
// each through the outbound guard (outbound.ts). Every answer is classified the same way: 2xx delivered; 429, 5xx and
// network errors retried (honouring Retry-After); 404/410 from a push service means the device is
// gone; any other 4xx, and a destination the outbound rules refuse, will not get better by retrying.
import webpush from "web-push";
import { kindNamed } from "../domain/integration-kinds/registry.ts";
import type { Payload } from "../domain/payload.ts";
import type { Destination, OutboundRules } from "../domain/outbound.ts";
import type { Mailer } from "./email.ts";
import { DestinationRefused, outboundFetch, Unresolved } from "./outbound.ts";
import { pushUrgency } from "./priority.ts";
import type { SendResult } from "./result.ts";
import type { Vapid } from "./vapid.ts";
import type { Delivery, Integration, Subscription } from "../model/notification.ts";

export type { SendResult } from "./result.ts";

const TIMEOUT_MS = 10_000;

export async function sendPush(
  device: Subscription,
  payload: Payload,
  vapid: Vapid,
  signal: AbortSignal,
  rules: OutboundRules,
): Promise<SendResult> {
  const message = JSON.stringify({ title: payload.title, body: payload.body, url: payload.url, tag: payload.tag });
  const request = webpush.generateRequestDetails(
    { endpoint: device.endpoint, keys: { p256dh: device.p256dh, auth: device.auth } },
    message,
    {
      vapidDetails: vapid,
      TTL: 24 * 3600,
      urgency: pushUrgency(payload.priority ?? 3),
    },
  );
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(request.headers))
    if (key !== "Content-Length") headers[key] = String(value);
  const result = await post(
    rules,
    "push",
    request.endpoint,
    { method: "POST", headers, body: request.body as unknown as BodyInit },
    signal,
  );
  if (!result.ok && (result.status === 404 || result.status === 410))
    return {
      ...result,
      retry: false,
      gone: true,
      error: `the push service no longer knows this device (${result.status})`,
    };
  return result;
}

/** An integration's message: over SMTP for e-mail (null `mailer`: none configured), else its kind's HTTP request. */
export async function sendIntegration(
  integration: Integration,
  payload: Payload,
  delivery: Pick<Delivery, "id" | "createdAt">,
  signal: AbortSignal,
  mailer: Mailer | null,
  rules: OutboundRules,
): Promise<SendResult> {
  const { send } = kindNamed(integration.kind);
  // Checked by the kind's schema when it was saved.
  const config = { ...integration.config, ...integration.secrets };
  if ("mail" in send) return sendMail(mailer, send.mail(config), payload, delivery);
  const { url, init } = send.request(config, payload, delivery);
  return post(rules, "integration", url, init, signal);
}

export function sendMail(
  mailer: Mailer | null,
  to: string[],
  payload: Payload,
  delivery: Pick<Delivery, "id" | "createdAt">,
): Promise<SendResult> {
  if (!mailer)
    return Promise.resolve({
      ok: false,
      status: null,
      retry: false,
      error: "e-mail is not set up on this server: set SIGNALBOARD_SMTP_URL (see docs/configuration.md)",
    });
  return mailer.send({ to, payload, delivery });
}

/** `signal` aborts the request when the notifier stops; the timeout when the receiver does not answer (its name's lookup included). */
async function post(
  rules: OutboundRules,
  destination: Destination,
  url: string,
  init: RequestInit,
  signal: AbortSignal,
): Promise<SendResult> {
  let response: Response;
  try {
    response = await outboundFetch(rules, destination, url, {
      ...init,
      signal: AbortSignal.any([signal, AbortSignal.timeout(TIMEOUT_MS)]),
    });
  } catch (error) {
    if (error instanceof DestinationRefused) return { ok: false, status: null, retry: false, error: error.message };
    if (error instanceof Unresolved) return { ok: false, status: null, retry: true, error: error.message };
    const timedOut = (error as Error).name === "TimeoutError";
    return {
      ok: false,
      status: null,
      retry: true,
      error: timedOut ? `no answer within ${TIMEOUT_MS / 1000} s` : `could not connect: ${(error as Error).message}`,
    };
  }
  await response.body?.cancel().catch(() => {});
  if (response.ok) return { ok: true, status: response.status };
  const retry = response.status === 429 || response.status >= 500;
  // Only the status is kept and shown: a receiver's body is not ours to show. A URL pointed at an
  // internal service would otherwise let any dashboard user read what that service answers.
  return {
    ok: false,
    status: response.status,
    retry,
    retryAfterMs: retryAfter(response.headers.get("retry-after")),
    error: `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}`,
  };
}

/** Retry-After as seconds or an HTTP date, in milliseconds from now. */
export function retryAfter(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(header);
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : undefined;
}
