import { type MaintenanceInput, maintenanceInput, standing } from "../domain/maintenance.ts";
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
import type { Maintenance } from "../model/maintenance.ts";
import type { Services } from "../services.ts";
import { idParams, ok, projectQuery } from "./views.ts";

export const maintenanceQuery = projectQuery;
export const maintenanceParams = idParams("a maintenance window");

const unix = (ms: number) => Math.floor(ms / 1000);

/** A window as the API answers it: either schedule's fields (null where not its own), and whether it holds now. */
export function apiMaintenance(w: Maintenance, project: string, now: number) {
  const s = w.schedule;
  const { active, next } = standing(w, now);
  return {
    id: w.id,
    project,
    name: w.name,
    starts_at: s.kind === "once" ? unix(s.startsAt) : null,
    ends_at: s.kind === "once" ? unix(s.endsAt) : null,
    cron: s.kind === "cron" ? s.cron : null,
    tz: s.kind === "cron" ? s.tz : null,
    length: s.kind === "cron" ? s.length / 1000 : null,
    active,
    next_start: next ? unix(next.start) : null,
    next_end: next ? unix(next.end) : null,
    created_at: unix(w.createdAt),
  };
}

const EXAMPLE = {
  id: 1,
  project: "ops",
  name: "Nightly backup",
  starts_at: null,
  ends_at: null,
  cron: "0 3 * * *",
  tz: "Europe/Berlin",
  length: 3600,
  active: false,
  next_start: 1767232800,
  next_end: 1767236400,
  created_at: 1767225600,
};

export function maintenanceRoutes({ maintenance, config }: Services): Route[] {
  const windowProject: ProjectOf = async ({ params }) =>
    maintenance.projectName(await maintenance.get(validate(maintenanceParams, params, "query").id));
  return [
    route({
      method: "GET",
      path: "/v1/maintenance",
      access: "full",
      project: projectInQuery(config.defaultProject),
      query: maintenanceQuery,
      doc: {
        summary: "A project's maintenance windows",
        description:
          "Each one-off (starts_at, ends_at) or recurring (cron in tz, for length seconds), whether it holds now, and its current or next occurrence. Full-access tokens only.",
        example: { success: true, statusCode: 200, maintenance: [EXAMPLE] },
      },
      async handle({ query }) {
        const project = query.project ?? config.defaultProject;
        const now = maintenance.now();
        return ok({ maintenance: (await maintenance.list(project)).map((w) => apiMaintenance(w, project, now)) });
      },
    }),
    route({
      method: "POST",
      path: "/v1/maintenance",
      access: "full",
      project: projectInBodyOrQuery(config.bodyLimit, config.defaultProject),
      query: maintenanceQuery,
      doc: {
        summary: "Add a maintenance window",
        description:
          "Inside it, alert rules and checks that change state record it (an event in the alerts channel without notify) but notify nobody; a rule still firing, or a check still down, when it ends notifies then. " +
          'One-off: {"starts_at": ..., "ends_at": ...} (Unix seconds); recurring: {"cron": "0 3 * * *", "tz": "Europe/Berlin", "length": 3600}. ' +
          "The project is the body's, else ?project=. Full-access tokens only.",
        body: maintenanceInput,
        example: { success: true, statusCode: 200, maintenance: EXAMPLE },
      },
      async handle({ request, query, actor }) {
        const body = await readJson(request, config.bodyLimit);
        const input = withProject(body, query.project, config.defaultProject) as MaintenanceInput;
        const made = await maintenance.create(input, actor);
        return ok({ maintenance: apiMaintenance(made, await maintenance.projectName(made), maintenance.now()) });
      },
    }),
    route({
      method: "DELETE",
      path: "/v1/maintenance/:id",
      access: "full",
      project: windowProject,
      params: maintenanceParams,
      doc: {
        summary: "Delete a maintenance window",
        description:
          "A rule that changed inside it and still differs from what it last told notifies on its next round. Full-access tokens only.",
        example: { success: true, statusCode: 200 },
      },
      async handle({ params, actor }) {
        await maintenance.remove(params.id, actor);
        return ok();
      },
    }),
  ];
}
