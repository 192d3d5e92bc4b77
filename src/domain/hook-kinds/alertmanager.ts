// Prometheus Alertmanager's webhook (version "4"): a group of alerts, each an event named by its
// alertname label; firing ones notify, resolved ones do not; labels become tags. Alertmanager signs
// nothing, but its http_config can send credentials: with a secret, a delivery must carry it as
// "Authorization: Bearer <secret>" (authorization.credentials) or as basic auth's password
// (basic_auth); without one, the URL is the secret.
// Each alert is stored once per group key, fingerprint, start and status, so a repeated
// notification of the same group adds nothing, and its resolution is a new event.
import { z } from "zod";
import { ValidationError } from "../../errors.ts";
import { LIMITS } from "../input-fields.ts";
import { at, defineHookKind, eventName, fit, type HookEvent, sameSecret, tagsOf } from "./kind.ts";

type Alert = {
  status?: unknown;
  labels?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  startsAt?: unknown;
  endsAt?: unknown;
  generatorURL?: unknown;
  fingerprint?: unknown;
};

const record = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

const REFUSED =
  "this hook takes only deliveries with its secret: in Alertmanager's webhook_config, set http_config's authorization credentials (or basic_auth's password) to it.";

/** Null when the Authorization header carries the secret, as a bearer token or basic auth's password; else why not. */
function checkCredentials(header: string | null, secret: string): string | null {
  if (!header) return `The Authorization header is missing: ${REFUSED}`;
  const [, scheme = "", value = ""] = /^(\S+)\s+(.*)$/.exec(header.trim()) ?? [];
  if (scheme.toLowerCase() === "bearer")
    return sameSecret(secret, value) ? null : `The bearer token is wrong: ${REFUSED}`;
  if (scheme.toLowerCase() === "basic") {
    const decoded = Buffer.from(value, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    const password = colon < 0 ? "" : decoded.slice(colon + 1);
    return colon >= 0 && sameSecret(secret, password) ? null : `The basic auth password is wrong: ${REFUSED}`;
  }
  return `The Authorization header must be Bearer or Basic: ${REFUSED}`;
}

/**
 * The body's alerts, when it is Alertmanager's webhook of version 4; else a 400 naming the field,
 * so a sender that is not Alertmanager (or a version whose shape may differ) learns it at once
 * rather than getting a 200 for a delivery that recorded nothing.
 */
function checkedAlerts(body: unknown): unknown[] {
  const wrong = (path: string, message: string) => ValidationError.field(path, "invalid_alertmanager", message);
  if (body === null || typeof body !== "object" || Array.isArray(body))
    throw wrong("", "The body must be Alertmanager's webhook JSON object (version 4), with its alerts.");
  const version = at(body, "version");
  if (version !== "4")
    throw wrong(
      "version",
      `version: must be "4", the version of Alertmanager's webhook this hook reads; got ${version === undefined ? "none" : JSON.stringify(version)}`,
    );
  const alerts = at(body, "alerts");
  if (!Array.isArray(alerts)) throw wrong("alerts", "alerts: must be the list of alerts Alertmanager sends");
  const bad = alerts.findIndex((a) => a === null || typeof a !== "object" || Array.isArray(a));
  if (bad >= 0) throw wrong(`alerts.${bad}`, `alerts.${bad}: each alert must be an object with its labels`);
  return alerts;
}

export const alertmanager = defineHookKind({
  label: "Alertmanager",
  defaultChannel: "alertmanager",
  secret: "optional",
  config: z.object({}).strict(),
  verify: (d, secret) => (secret ? checkCredentials(d.headers.get("authorization"), secret) : null),
  events(body): HookEvent[] {
    const alerts = checkedAlerts(body);
    const groupKey = String(at(body, "groupKey") ?? "");
    return alerts.slice(0, 1000).map((raw) => {
      const alert = record(raw) as Alert;
      const labels = record(alert.labels);
      const annotations = record(alert.annotations);
      const firing = alert.status !== "resolved";
      const name = eventName(labels.alertname, "alert");
      const summary = annotations.summary ?? annotations.description ?? annotations.message;
      const source = typeof alert.generatorURL === "string" ? alert.generatorURL : null;
      const description = [
        typeof summary === "string" ? summary : null,
        typeof annotations.description === "string" && annotations.description !== summary
          ? annotations.description
          : null,
        source ? `[Source](${source})` : null,
      ]
        .filter(Boolean)
        .join("\n\n");
      const start = String(alert.startsAt ?? "");
      const fingerprint = String(alert.fingerprint ?? JSON.stringify(labels));
      return {
        key: `alertmanager:${groupKey}:${fingerprint}:${start}:${firing ? "firing" : "resolved"}`,
        input: {
          channel: "",
          event: name,
          description: description ? fit(description, LIMITS.description) : undefined,
          parser: "markdown" as const,
          icon: firing ? "🔥" : "✅",
          notify: firing,
          tags: tagsOf([["status", firing ? "firing" : "resolved"], ...Object.entries(labels)]),
        },
      };
    });
  },
});
