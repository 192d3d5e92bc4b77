// Prometheus Alertmanager's webhook (version "4"): a group of alerts, each an event named by its
// alertname label; firing ones notify, resolved ones do not; labels become tags. Alertmanager signs
// nothing (it can send a bearer token or basic auth, not checked here: the URL is the secret).
// Each alert is stored once per group key, fingerprint, start and status, so a repeated
// notification of the same group adds nothing, and its resolution is a new event.
import { z } from "zod";
import { ValidationError } from "../../errors.ts";
import { LIMITS } from "../input-fields.ts";
import { at, defineHookKind, eventName, fit, type HookEvent, tagsOf } from "./kind.ts";

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
  secret: "none",
  config: z.object({}).strict(),
  verify: () => null,
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
