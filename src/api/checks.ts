import { dueAt } from "../domain/check-notices.ts";
import { type CheckInput, checkChanges, checkInput } from "../domain/checks.ts";
import { validate } from "../domain/validation.ts";
import { readJson } from "../http/body.ts";
import {
  type ProjectOf,
  projectInBodyOrQuery,
  projectInQuery,
  type Route,
  route,
  withProject,
} from "../http/routes.ts";
import type { Check } from "../model/check.ts";
import type { Services } from "../services.ts";
import { idParams, ok, projectQuery } from "./views.ts";

export const checksQuery = projectQuery;
export const checkParams = idParams("a check");

const unix = (ms: number | null) => (ms === null ? null : Math.floor(ms / 1000));

/** A check as the API answers it: what it expects, its ping URLs, and where its pings left it. */
export function apiCheck(c: Check, project: string, urls: { ping: string; slug: string; push: string }) {
  const s = c.schedule;
  return {
    id: c.id,
    project,
    name: c.name,
    slug: c.slug,
    uuid: c.uuid,
    push_token: c.pushToken,
    period: s.kind === "period" ? s.seconds : null,
    cron: s.kind === "cron" ? s.expr : null,
    tz: s.kind === "cron" ? s.tz : null,
    grace: c.grace,
    channel: c.channel,
    paused: c.paused,
    notify_after: c.notifyAfter,
    ping_url: urls.ping,
    slug_url: urls.slug,
    push_url: urls.push,
    state: c.state,
    since: unix(c.since),
    last_ping: unix(c.lastPing),
    next_due: unix(dueAt(c)),
    last_duration: c.lastDurationMs === null ? null : c.lastDurationMs / 1000,
    notified: c.notified,
    created_at: unix(c.createdAt),
    updated_at: unix(c.updatedAt),
  };
}

const EXAMPLE = {
  id: 1,
  project: "ops",
  name: "Nightly backup",
  slug: "nightly-backup",
  uuid: "5b0b7c32-8f4e-4a43-9d8e-2f0c3c1e9a61",
  push_token: "Qm9zdG9uVGVhUGFydHkxNzczQm9zdG9u",
  period: null,
  cron: "0 3 * * *",
  tz: "Europe/Berlin",
  grace: 3600,
  channel: "checks",
  paused: false,
  notify_after: 1,
  ping_url: "https://signalboard.example.com/ping/5b0b7c32-8f4e-4a43-9d8e-2f0c3c1e9a61",
  slug_url: "https://signalboard.example.com/ping/hL3uE0rKq2mW9xYzA1bC4d/nightly-backup",
  push_url: "https://signalboard.example.com/api/push/Qm9zdG9uVGVhUGFydHkxNzczQm9zdG9u?status=up&msg=OK&ping=",
  state: "up",
  since: 1767229200,
  last_ping: 1767229384,
  next_due: 1767319200,
  last_duration: 184.2,
  notified: "up",
  created_at: 1767225600,
  updated_at: 1767229384,
};

const KEY_EXAMPLE = {
  project: "ops",
  ping_key: "hL3uE0rKq2mW9xYzA1bC4d",
  ping_url: "https://signalboard.example.com/ping/hL3uE0rKq2mW9xYzA1bC4d/",
};

export function checkRoutes({ checks, config }: Services): Route[] {
  const answer = async (c: Check) => apiCheck(c, (await checks.projectOf(c)).name, await checks.urls(c));
  const checkProject: ProjectOf = async ({ params }) =>
    (await checks.projectOf(await checks.get(validate(checkParams, params, "query").id))).name;
  const keyAnswer = (project: string, key: string) =>
    ok({ project, ping_key: key, ping_url: `${config.baseUrl}/ping/${key}/` });
  return [
    route({
      method: "GET",
      path: "/v1/checks",
      access: "full",
      project: projectInQuery(config.defaultProject),
      query: checksQuery,
      doc: {
        summary: "A project's checks",
        description:
          "Each with its ping URLs and where its pings left it: state (new, up, started, down or paused), last_ping and next_due (Unix seconds), last_duration (seconds). Full-access tokens only.",
        example: { success: true, statusCode: 200, checks: [EXAMPLE] },
      },
      async handle({ query }) {
        const project = await checks.project(query.project ?? config.defaultProject);
        const list = await checks.list(project.name);
        const urls = await checks.urlsIn(project.name, list);
        return ok({ checks: list.map((c, i) => apiCheck(c, project.name, urls[i]!)) });
      },
    }),
    route({
      method: "POST",
      path: "/v1/checks",
      access: "full",
      project: projectInBodyOrQuery(config.bodyLimit, config.defaultProject),
      query: checksQuery,
      doc: {
        summary: "Make a check",
        description:
          'A cron job or service that pings: {"name": "Nightly backup", "period": 86400, "grace": 3600} or {"name": ..., "cron": "0 3 * * *", "tz": "Europe/Berlin"}; the slug is made from the name unless given, the uuid and push_token are made unless given (to keep URLs that already exist). ' +
          "Each change to down and back up is an event in the project's alerts channel, with notify unless held back: inside a maintenance window (/v1/maintenance), or until notify_after failures in a row. The project is the body's, else ?project=. Full-access tokens only.",
        body: checkInput,
        example: { success: true, statusCode: 200, check: EXAMPLE },
      },
      async handle({ request, query, actor }) {
        const body = await readJson(request, config.bodyLimit);
        const input = withProject(body, query.project, config.defaultProject) as CheckInput;
        return ok({ check: await answer(await checks.create(input, actor)) });
      },
    }),
    route({
      method: "GET",
      path: "/v1/checks/ping-key",
      access: "full",
      project: projectInQuery(config.defaultProject),
      query: checksQuery,
      doc: {
        summary: "The project's ping key",
        description:
          "Its checks are pinged at ping_url followed by a check's slug (/ping/<ping key>/<slug>); made at the first ask. Full-access tokens only.",
        example: { success: true, statusCode: 200, ...KEY_EXAMPLE },
      },
      async handle({ query }) {
        const project = query.project ?? config.defaultProject;
        return keyAnswer(project, await checks.pingKey(project));
      },
    }),
    route({
      method: "POST",
      path: "/v1/checks/ping-key/regenerate",
      access: "full",
      project: projectInQuery(config.defaultProject),
      query: checksQuery,
      doc: {
        summary: "Make the project's ping key anew",
        description:
          "URLs with the old key answer 404 from now on; those by UUID and the push URLs are unchanged. Full-access tokens only.",
        example: { success: true, statusCode: 200, ...KEY_EXAMPLE },
      },
      async handle({ query, actor }) {
        const project = query.project ?? config.defaultProject;
        return keyAnswer(project, await checks.regeneratePingKey(project, actor));
      },
    }),
    route({
      method: "GET",
      path: "/v1/checks/:id",
      access: "full",
      project: checkProject,
      params: checkParams,
      doc: {
        summary: "A check",
        description: "Full-access tokens only.",
        example: { success: true, statusCode: 200, check: EXAMPLE },
      },
      async handle({ params }) {
        return ok({ check: await answer(await checks.get(params.id)) });
      },
    }),
    route({
      method: "PATCH",
      path: "/v1/checks/:id",
      access: "full",
      project: checkProject,
      params: checkParams,
      doc: {
        summary: "Change a check",
        description:
          'Any of its fields; {"paused": true} pauses it (pings are logged and change nothing), {"paused": false} resumes it (new until its next ping); a period replaces a cron schedule and the other way round. Full-access tokens only.',
        body: checkChanges,
        example: { success: true, statusCode: 200, check: EXAMPLE },
      },
      async handle({ request, params, actor }) {
        const body = (await readJson(request, config.bodyLimit)) as Record<string, unknown>;
        return ok({ check: await answer(await checks.update(params.id, body, actor)) });
      },
    }),
    route({
      method: "DELETE",
      path: "/v1/checks/:id",
      access: "full",
      project: checkProject,
      params: checkParams,
      doc: {
        summary: "Delete a check",
        description:
          "Its URLs answer 404 from now on; its pings' events and past notices stay. Full-access tokens only.",
        example: { success: true, statusCode: 200 },
      },
      async handle({ params, actor }) {
        await checks.remove(params.id, actor);
        return ok();
      },
    }),
  ];
}
