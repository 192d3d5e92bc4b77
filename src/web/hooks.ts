// Dashboard routes for a project's inbound webhooks, a section of its settings: add one and delete
// one, each answering the section afresh for htmx to swap. Admins only, as tokens are.
import { z } from "zod";
import { hasRole } from "../domain/access.ts";
import type { HookInput } from "../domain/hooks.ts";
import { NotFound, ValidationError } from "../errors.ts";
import { type Route, route } from "../http/routes.ts";
import type { Project } from "../model/project.ts";
import type { Session } from "../model/user.ts";
import type { Services } from "../services.ts";
import { text } from "./form.ts";
import type { Kit } from "./kit.ts";
import { paths } from "./paths.ts";
import { type HookFormFields, hooksSection } from "./views/hooks.ts";

const FIELDS = ["kind", "name", "secret", "channel", "config"];

const hookForm = z
  .object(Object.fromEntries(FIELDS.map((name) => [name, text])))
  .transform((f): HookFormFields => Object.fromEntries(FIELDS.map((name) => [name, (f[name] ?? "").trim()])));

/** The section as it is now, with what the form held and its problems when a save could not be made. */
export async function hooksSectionOf(
  { hooks }: Services,
  project: Project,
  session: Session,
  form?: { fields: HookFormFields; errors: Record<string, string> },
) {
  const list = await hooks.list(project.name);
  return hooksSection(project, {
    hooks: list.map((hook) => ({ hook, url: hooks.url(hook) })),
    csrf: session.csrfToken,
    // A hook's URL is a way to write into the project (the only one when nothing signs its
    // deliveries), handed to an outside service as a public token is: for admins, as tokens are.
    mayEdit: hasRole(session.user, "admin"),
    ...form,
  });
}

function formErrors(error: ValidationError): Record<string, string> {
  const out: Record<string, string> = {};
  for (const i of error.issues) out[i.path.split(".")[0] || "name"] ??= i.message.replace(/^[^:]*: /, "");
  return out;
}

export function hookRoutes(services: Services, kit: Kit): Route[] {
  return [addHook(services, kit), deleteHook(services, kit)];
}

const addHook = (services: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.hooks,
    access: "admin",
    needs: "project",
    form: hookForm,
    async handle({ project, session, body: fields, actor }) {
      const again = (errors: Record<string, string>) =>
        hooksSectionOf(services, project, session, { fields: { ...fields, secret: "" }, errors }).then((body) =>
          kit.fragment(body, 422),
        );
      let config: unknown;
      try {
        config = fields.config ? JSON.parse(fields.config) : undefined;
      } catch {
        return again({ config: 'must be JSON, such as {"mapping": {"event": "$.title"}}' });
      }
      const input = {
        project: project.name,
        kind: fields.kind,
        name: fields.name,
        secret: fields.secret || undefined,
        channel: fields.channel || undefined,
        config,
      } as HookInput;
      try {
        await services.hooks.create(input, actor);
      } catch (error) {
        if (!(error instanceof ValidationError)) throw error;
        return again(formErrors(error));
      }
      return kit.fragment(await hooksSectionOf(services, project, session));
    },
  });

const deleteHook = (services: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.hookDelete,
    access: "admin",
    needs: "project",
    async handle({ project, params, session, actor }) {
      const hook = await services.hooks.get(params.id).catch(() => null);
      if (!hook || hook.projectId !== project.id)
        throw new NotFound(`That webhook does not exist in project "${project.name}".`);
      await services.hooks.remove(hook.id, actor);
      return kit.fragment(await hooksSectionOf(services, project, session));
    },
  });
