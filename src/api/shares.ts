// Shared pages through the API: GET /v1/shares?project=P, POST /v1/shares (a dashboard's chosen
// charts, or a status page's checks, alert rules and metrics), DELETE /v1/shares/:id (the link
// answers 404 at once). Full-access tokens, limited ones within their projects.
import { type ShareInput, shareInput } from "../domain/shares.ts";
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
import type { Share } from "../model/share.ts";
import type { Services } from "../services.ts";
import { idParams, ok, projectQuery } from "./views.ts";

export const shareParams = idParams("a share");

/** A share as the API answers it: its link, what it shows, and who made it when. */
export function apiShare(s: Share, project: string, url: string) {
  return {
    id: s.id,
    project,
    kind: s.kind,
    url,
    charts: s.charts,
    checks: s.checks,
    alerts: s.alerts,
    metrics: s.metrics,
    title: s.title,
    text: s.text,
    time_zone: s.timeZone,
    created_by: s.createdBy,
    created_at: s.createdAt / 1000,
  };
}

const EXAMPLE = {
  id: 3,
  project: "shop",
  kind: "status",
  url: "https://signalboard.example.com/s/q2v7Xo0cJ3b8kq8o3W1nQy2nqz9KpZsVv0m4s1QeC7Y",
  charts: [],
  checks: [4, 5],
  alerts: [2],
  metrics: ["Queue length"],
  title: "Shop status",
  text: "Orders, payments and the nightly export.",
  time_zone: "Europe/Paris",
  created_by: "token “ci”",
  created_at: 1767225600,
};

export function shareRoutes({ shares, config }: Services): Route[] {
  const shareProject: ProjectOf = async ({ params }) =>
    shares.projectName(await shares.get(validate(shareParams, params, "query").id));
  return [
    route({
      method: "GET",
      path: "/v1/shares",
      access: "full",
      project: projectInQuery(config.defaultProject),
      query: projectQuery,
      doc: {
        summary: "A project's shared pages",
        description:
          "Each link (url) that shows the project's chosen cards (kind dashboard) or its status page (kind status) without sign-in; revoked ones are not listed. Full-access tokens only.",
        example: { success: true, statusCode: 200, shares: [EXAMPLE] },
      },
      async handle({ query }) {
        const project = query.project ?? config.defaultProject;
        return ok({ shares: (await shares.list(project)).map((s) => apiShare(s, project, shares.url(s))) });
      },
    }),
    route({
      method: "POST",
      path: "/v1/shares",
      access: "full",
      project: projectInBodyOrQuery(config.bodyLimit, config.defaultProject),
      query: projectQuery,
      doc: {
        summary: "Share a dashboard or a status page",
        description:
          'A dashboard: {"project": "p", "kind": "dashboard", "charts": [chart ids]}; a status page: {"project": "p", "kind": "status", "checks": [ids], "alerts": [ids], "metrics": ["title"], "title": "...", "text": "...", "time_zone": "Europe/Paris"} (its 90 days are that zone\'s days; UTC unless given). ' +
          "Answers its id and url (anyone with the url sees what was chosen, and nothing else). An id that is not the project's is a 422 naming it. Full-access tokens only.",
        body: shareInput,
        example: { success: true, statusCode: 200, id: 3, url: EXAMPLE.url, share: EXAMPLE },
      },
      async handle({ request, query, actor }) {
        const body = await readJson(request, config.bodyLimit);
        const input = withProject(body, query.project, config.defaultProject) as ShareInput;
        const made = await shares.create(input, actor);
        const url = shares.url(made);
        return ok({ id: made.id, url, share: apiShare(made, await shares.projectName(made), url) });
      },
    }),
    route({
      method: "DELETE",
      path: "/v1/shares/:id",
      access: "full",
      project: shareProject,
      params: shareParams,
      doc: {
        summary: "Revoke a shared page",
        description: "Its link answers 404 from now on, and open pages of it stop updating. Full-access tokens only.",
        example: { success: true, statusCode: 200 },
      },
      async handle({ params, actor }) {
        await shares.revoke(params.id, actor);
        return ok();
      },
    }),
  ];
}
