// The digests of a project (Settings → Integrations): add one, send the last one now, delete.
import { NotFound, ValidationError } from "../errors.ts";
import { type Route, route } from "../http/routes.ts";
import type { Project } from "../model/project.ts";
import type { Services } from "../services.ts";
import { field } from "./form.ts";
import { type Html, html } from "./html.ts";
import type { Kit } from "./kit.ts";
import { idOf } from "./notifications.ts";
import { confirmDialog } from "./views/dialogs.ts";
import { digestsCard } from "./views/digests.ts";

const projectParam = (request: Request) => new URL(request.url).searchParams.get("project") ?? "";

/** The digests card of a project, with the form showing `values` and `error` after a refusal. */
export async function digestSection(
  { digests, integrations }: Services,
  project: Project,
  values?: Record<string, string | string[]>,
  error?: string,
): Promise<Html> {
  const [list, own] = await Promise.all([digests.list(project.name), integrations.list(project.name)]);
  return digestsCard({
    project,
    digests: list.map((d) => ({ ...d, schedule: digests.describe(d) })),
    integrations: own,
    values,
    error,
  });
}

export function digestRoutes(services: Services, kit: Kit): Route[] {
  const { digests } = services;

  async function own(project: string, id: string | undefined) {
    const digest = (await digests.list(project)).find((d) => d.id === idOf(id));
    if (!digest) throw new NotFound("That digest does not exist.");
    return digest;
  }

  return [
    route({
      method: "POST",
      path: "/settings/digests",
      access: "admin",
      async handle({ request, body }) {
        const project = await kit.project(projectParam(request));
        const form = body as Record<string, string | string[]>;
        const input = {
          project: project.name,
          name: field(body, "name"),
          frequency: field(body, "frequency"),
          hour: Number(field(body, "hour")),
          weekday: Number(field(body, "weekday")) || null,
          time_zone: field(body, "time_zone").trim() || "UTC",
          integrations: [form.integration ?? []].flat().map(Number),
          emails: field(body, "emails")
            .split(/[\s,;]+/)
            .filter(Boolean),
        };
        try {
          await digests.create(input);
          return kit.fragment(await digestSection(services, project));
        } catch (error) {
          if (!(error instanceof ValidationError)) throw error;
          return kit.fragment(
            await digestSection(services, project, form, error.issues.map((i) => i.message).join("; ")),
            422,
          );
        }
      },
    }),
    route({
      method: "POST",
      path: "/settings/digests/:id/send",
      access: "admin",
      async handle({ request, params }) {
        const digest = await own(projectParam(request), params.id);
        const queued = await digests.sendNow(digest.id);
        return kit.fragment(
          queued
            ? "Queued; it should arrive within seconds."
            : "Nothing to send it to: its integrations were removed or disabled.",
        );
      },
    }),
    route({
      method: "GET",
      path: "/settings/digests/:id/delete",
      access: "admin",
      async handle({ request, params }) {
        const project = projectParam(request);
        const digest = await own(project, params.id);
        return kit.fragment(
          confirmDialog({
            title: `Delete “${digest.name}”?`,
            body: html`<p>No more ${digest.frequency} summaries of ${project}.</p>`,
            action: `/settings/digests/${digest.id}/delete?project=${encodeURIComponent(project)}`,
            confirm: "Delete digest",
            danger: true,
          }),
        );
      },
    }),
    route({
      method: "POST",
      path: "/settings/digests/:id/delete",
      access: "admin",
      async handle({ request, params }) {
        const project = projectParam(request);
        const digest = await own(project, params.id);
        await digests.remove(digest.id);
        return kit.redirect(request, `/settings/integrations?project=${encodeURIComponent(project)}#digests`);
      },
    }),
  ];
}
