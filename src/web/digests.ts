// The digests of a project (Settings → Integrations): add one, send the last one now, delete.
import { z } from "zod";
import { NotFound, ValidationError } from "../errors.ts";
import { href } from "../http/href.ts";
import { type Route, route } from "../http/routes.ts";
import type { Project } from "../model/project.ts";
import type { Services } from "../services.ts";
import { projectQuery, text } from "./form.ts";
import { type Html, html } from "./html.ts";
import type { Kit } from "./kit.ts";
import { idOf } from "./notifications.ts";
import { paths } from "./paths.ts";
import { confirmDialog } from "./views/dialogs.ts";
import { digestsCard } from "./views/digests.ts";

const digestForm = z.object({
  name: text,
  frequency: text,
  hour: text,
  weekday: text,
  time_zone: text,
  integration: z.preprocess((ids) => [ids ?? []].flat(), z.array(z.string())),
  emails: text,
});

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
  return [newDigest(services, kit), sendNow(services, kit), deleteDialog(services, kit), deleteDigest(services, kit)];
}

/** A digest of `project` by the id in the path. */
async function own({ digests }: Services, project: string, id: string) {
  const digest = (await digests.list(project)).find((d) => d.id === idOf(id));
  if (!digest) throw new NotFound("That digest does not exist.");
  return digest;
}

const newDigest = (services: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.digests,
    access: "admin",
    query: projectQuery,
    form: digestForm,
    async handle({ query, body }) {
      const project = await services.projects.requireProject(query.project);
      const input = {
        project: project.name,
        name: body.name,
        frequency: body.frequency,
        hour: Number(body.hour),
        weekday: Number(body.weekday) || null,
        time_zone: body.time_zone.trim() || "UTC",
        integrations: body.integration.map(Number),
        emails: body.emails.split(/[\s,;]+/).filter(Boolean),
      };
      try {
        await services.digests.create(input);
        return kit.fragment(await digestSection(services, project));
      } catch (error) {
        if (!(error instanceof ValidationError)) throw error;
        const message = error.issues.map((i) => i.message).join("; ");
        return kit.fragment(await digestSection(services, project, body, message), 422);
      }
    },
  });

const sendNow = (services: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.digestSend,
    access: "admin",
    query: projectQuery,
    async handle({ query, params }) {
      const digest = await own(services, query.project, params.id);
      const queued = await services.digests.sendNow(digest.id);
      return kit.fragment(
        queued
          ? "Queued; it should arrive within seconds."
          : "Nothing to send it to: its integrations were removed or disabled.",
      );
    },
  });

const deleteDialog = (services: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.digestDelete,
    access: "admin",
    query: projectQuery,
    async handle({ query: { project }, params }) {
      const digest = await own(services, project, params.id);
      return kit.fragment(
        confirmDialog({
          title: `Delete “${digest.name}”?`,
          body: html`<p>No more ${digest.frequency} summaries of ${project}.</p>`,
          action: href(paths.digestDelete, { id: digest.id }, { project }),
          confirm: "Delete digest",
          danger: true,
        }),
      );
    },
  });

const deleteDigest = (services: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.digestDelete,
    access: "admin",
    query: projectQuery,
    async handle({ request, query: { project }, params }) {
      const digest = await own(services, project, params.id);
      await services.digests.remove(digest.id);
      return kit.redirect(request, `${href(paths.integrations, {}, { project })}#digests`);
    },
  });
