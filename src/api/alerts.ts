// Alert rules for full-access tokens: listed, made, read, changed (paused, resumed) and deleted, so
// they can be provisioned as code. Durations are seconds and times Unix seconds, as elsewhere.
import { z } from "zod";
import { alertChanges, alertInput } from "../domain/alerts.ts";
import { validate } from "../domain/validation.ts";
import { readJson } from "../http/body.ts";
import { type ProjectOf, projectInBody, projectInQuery, type Route, route } from "../http/routes.ts";
import type { Alert } from "../model/alert.ts";
import { columnsOf } from "../model/alert-row.ts";
import type { Services } from "../services.ts";
import { idParams, ok, projectQuery } from "./views.ts";

export const alertsQuery = projectQuery;
export const alertParams = idParams("an alert rule");

const seconds = (ms: number | null) => (ms === null ? null : ms / 1000);

/** A rule as the API answers it: what it expects (every kind's fields, null where not its kind's), and its state (paused shows as paused). */
export function apiAlert(a: Alert, project: string) {
  const c = columnsOf(a);
  return {
    id: a.id,
    project,
    name: a.name,
    kind: a.kind,
    filter: c.filter,
    period: seconds(c.period),
    cron: c.cron,
    tz: c.tz,
    grace: a.kind === "absence" ? a.grace / 1000 : null,
    window: seconds(c.window),
    metric: c.metric,
    above: c.above,
    below: c.below,
    repeat: seconds(a.repeat),
    notify_after: a.notifyAfter,
    paused: a.paused,
    state: a.paused ? "paused" : a.state,
    since: Math.floor(a.since / 1000),
    notified: a.notified,
    last_checked: a.lastChecked === null ? null : Math.floor(a.lastChecked / 1000),
    created_at: Math.floor(a.createdAt / 1000),
    updated_at: Math.floor(a.updatedAt / 1000),
  };
}

const EXAMPLE = {
  id: 1,
  project: "ops",
  name: "Nightly backup",
  kind: "absence",
  filter: { channel: "cron", event: "Backup done", tags: { host: "db1" } },
  period: 86400,
  cron: null,
  tz: null,
  grace: 600,
  window: null,
  metric: null,
  above: null,
  below: null,
  repeat: null,
  notify_after: 1,
  paused: false,
  state: "ok",
  since: 1767225600,
  notified: "ok",
  last_checked: 1767225610,
  created_at: 1767225600,
  updated_at: 1767225600,
};

export function alertRoutes({ alerts, config }: Services): Route[] {
  const answer = async (a: Alert) => ok({ alert: apiAlert(a, await alerts.projectName(a)) });
  const ruleProject: ProjectOf = async ({ params }) =>
    alerts.projectName(await alerts.get(validate(alertParams, params, "query").id));
  return [
    route({
      method: "GET",
      path: "/v1/alerts",
      access: "full",
      project: projectInQuery(config.defaultProject),
      query: alertsQuery,
      doc: {
        summary: "A project's alert rules",
        description:
          "With their state (ok, firing or paused), since when, and when each was last checked. Full-access tokens only.",
        example: { success: true, statusCode: 200, alerts: [EXAMPLE] },
      },
      async handle({ query }) {
        const project = query.project ?? config.defaultProject;
        return ok({ alerts: (await alerts.list(project)).map((a) => apiAlert(a, project)) });
      },
    }),
    route({
      method: "POST",
      path: "/v1/alerts",
      access: "full",
      project: projectInBody(config.bodyLimit),
      doc: {
        summary: "Make an alert rule",
        description:
          "absence: an event matching filter at least every period seconds (or when cron says, in tz), plus grace; count: the events matching filter in the last window seconds above or below a number; metric: a metric's value above or below one. " +
          "Each change of state is an event in the project's alerts channel, with notify unless held back: inside a maintenance window (/v1/maintenance), or until the rule has fired notify_after rounds in a row (default 1); a recovery notifies only if its firing did. Full-access tokens only.",
        body: alertInput,
        example: { success: true, statusCode: 200, alert: EXAMPLE },
      },
      async handle({ request, actor }) {
        return answer(
          await alerts.create((await readJson(request, config.bodyLimit)) as z.input<typeof alertInput>, actor),
        );
      },
    }),
    route({
      method: "GET",
      path: "/v1/alerts/:id",
      access: "full",
      project: ruleProject,
      params: alertParams,
      doc: {
        summary: "An alert rule",
        description: "Full-access tokens only.",
        example: { success: true, statusCode: 200, alert: EXAMPLE },
      },
      async handle({ params }) {
        return answer(await alerts.get(params.id));
      },
    }),
    route({
      method: "PATCH",
      path: "/v1/alerts/:id",
      access: "full",
      project: ruleProject,
      params: alertParams,
      doc: {
        summary: "Change an alert rule",
        description:
          'Any of its fields; {"paused": true} pauses it, {"paused": false} resumes it; a field sent as null is removed (a repeat). Full-access tokens only.',
        body: alertChanges,
        example: { success: true, statusCode: 200, alert: EXAMPLE },
      },
      async handle({ request, params, actor }) {
        return answer(
          await alerts.update(params.id, (await readJson(request, config.bodyLimit)) as Record<string, unknown>, actor),
        );
      },
    }),
    route({
      method: "DELETE",
      path: "/v1/alerts/:id",
      access: "full",
      project: ruleProject,
      params: alertParams,
      doc: {
        summary: "Delete an alert rule",
        description: "Its past notices stay in the alerts channel. Full-access tokens only.",
        example: { success: true, statusCode: 200 },
      },
      async handle({ params, actor }) {
        await alerts.remove(params.id, actor);
        return ok();
      },
    }),
  ];
}
