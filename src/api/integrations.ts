// Integrations for full-access tokens, so they can be provisioned as code: listed per project,
// made, changed, tested and removed. The dashboard (Settings → Integrations) and the CLI use the
// same service. Secrets are write-only: every answer shows them masked.
import { z } from "zod";
import { configKeys } from "../domain/integration-kinds/configs.ts";
import { INTEGRATION_KINDS } from "../domain/integration-kinds/registry.ts";
import { integrationChangesInput, integrationInput, type IntegrationView } from "../domain/integrations.ts";
import * as rule from "../domain/input-fields.ts";
import { validate } from "../domain/validation.ts";
import { readJson } from "../http/body.ts";
import { type ProjectOf, projectInBody, projectInQuery, type Route, route } from "../http/routes.ts";
import type { Services } from "../services.ts";
import { ok } from "./views.ts";

export const integrationsQuery = z.object({
  project: rule.projectName.optional().meta({ description: "The project (default: the default project)." }),
});
export const integrationParams = z.object({
  id: z
    .string()
    .regex(/^\d{1,9}$/, "must be an integration id (a positive integer)")
    .transform(Number),
});

const seconds = (ms: number | null) => (ms === null ? null : ms / 1000);

export function apiIntegration(i: IntegrationView) {
  return {
    id: i.id,
    project: i.project,
    kind: i.kind,
    name: i.name,
    config: i.config,
    filter: i.filter,
    template: i.template,
    enabled: i.enabled,
    created_at: i.createdAt / 1000,
    last_success_at: seconds(i.lastSuccessAt),
    last_error: i.lastError,
    last_error_at: seconds(i.lastErrorAt),
  };
}

/** "a, b or c" */
const oneOf = (names: string[]) => `${names.slice(0, -1).join(", ")} or ${names.at(-1)}`;
const KIND_SETTINGS = INTEGRATION_KINDS.map((kind) => `${kind} ${configKeys(kind)}`).join(", ");

const EXAMPLE = {
  id: 3,
  project: "my-saas",
  kind: "telegram",
  name: "Ops chat",
  config: { bot_token: "…x9Qk", chat_id: "-1001234567890" },
  filter: { channels: ["alerts", "payments"], min_priority: 3 },
  template: { title: "{{icon}} {{event}}", body: "*{{event}}* in #{{channel}}\n{{description}}" },
  enabled: true,
  created_at: 1767225600,
  last_success_at: null,
  last_error: null,
  last_error_at: null,
};

export function integrationRoutes({ integrations, config }: Services): Route[] {
  // A token limited to some projects reaches the integrations of those.
  const integrationProject: ProjectOf = async ({ params }) =>
    (await integrations.get(validate(integrationParams, params, "query").id)).project;
  return [
    route({
      method: "GET",
      path: "/v1/integrations",
      access: "full",
      project: projectInQuery(config.defaultProject),
      query: integrationsQuery,
      doc: {
        summary: "A project's integrations",
        description: "In the order they were added; secrets masked. Full-access tokens only.",
        example: { success: true, statusCode: 200, integrations: [EXAMPLE] },
      },
      async handle({ query }) {
        const project = query.project ?? config.defaultProject;
        return ok({ integrations: (await integrations.list(project)).map(apiIntegration) });
      },
    }),
    route({
      method: "POST",
      path: "/v1/integrations",
      access: "full",
      project: projectInBody(config.bodyLimit),
      doc: {
        summary: "Add an integration",
        description:
          `kind is ${oneOf(INTEGRATION_KINDS)}; config holds that kind's settings (${KIND_SETTINGS}). ` +
          "filter limits it to channels, tags and a least priority; template gives its own title and body. " +
          "A webhook without a secret gets one, answered here once as secret. A bad setting is a 400 naming it (config.chat_id). Full-access tokens only.",
        body: integrationInput,
        example: { success: true, statusCode: 200, integration: EXAMPLE, secret: null },
      },
      async handle({ request, actor }) {
        const created = await integrations.create(await readJson(request, config.bodyLimit), null, actor);
        return ok({ integration: apiIntegration(created.integration), secret: created.secret });
      },
    }),
    route({
      method: "PATCH",
      path: "/v1/integrations/:id",
      access: "full",
      project: integrationProject,
      params: integrationParams,
      doc: {
        summary: "Change an integration",
        description:
          "Its name, config (merged: keys left out stay, a secret too; null removes an optional key), filter or template (null removes either) and enabled. Its kind cannot change. Full-access tokens only.",
        body: integrationChangesInput,
        example: { success: true, statusCode: 200, integration: EXAMPLE },
      },
      async handle({ request, params, actor }) {
        return ok({
          integration: apiIntegration(
            await integrations.update(params.id, await readJson(request, config.bodyLimit), actor),
          ),
        });
      },
    }),
    route({
      method: "DELETE",
      path: "/v1/integrations/:id",
      access: "full",
      project: integrationProject,
      params: integrationParams,
      doc: {
        summary: "Delete an integration",
        description: "With its stored secrets. Full-access tokens only.",
        example: { success: true, statusCode: 200 },
      },
      async handle({ params, actor }) {
        await integrations.remove(params.id, actor);
        return ok();
      },
    }),
    route({
      method: "POST",
      path: "/v1/integrations/:id/test",
      access: "full",
      project: integrationProject,
      params: integrationParams,
      doc: {
        summary: "Send a test message",
        description:
          "Queued like any notification (with its retries); its outcome shows in the integration's last_success_at or last_error. A disabled integration is refused (403). Full-access tokens only.",
        example: { success: true, statusCode: 200, queued: true },
      },
      async handle({ params }) {
        await integrations.sendTest(params.id, config.baseUrl);
        return ok({ queued: true });
      },
    }),
  ];
}
