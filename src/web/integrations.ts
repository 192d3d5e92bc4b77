// Settings → Integrations, per project: add (each kind's settings, routing, templates), preview a
// template, change routing and templates, test, disable, delete; and the project's digests
// (digests.ts). The same services as the API (/v1/integrations).
import { visibleTo } from "../domain/access.ts";
import { type IntegrationKind, isIntegrationKind, KINDS } from "../domain/integration-kinds/registry.ts";
import { AppError, NotFound, ValidationError } from "../errors.ts";
import { type Route, route } from "../http/routes.ts";
import type { Services } from "../services.ts";
import { digestSection } from "./digests.ts";
import { readSearch } from "./filters.ts";
import { field } from "./form.ts";
import { html } from "./html.ts";
import type { Kit } from "./kit.ts";
import { idOf } from "./notifications.ts";
import { confirmDialog } from "./views/dialogs.ts";
import {
  integrationForm,
  integrationList,
  integrationsPage,
  integrationTestDone,
  integrationTestQueued,
  templatePreview,
  templatePreviewError,
} from "./views/integrations.ts";

/** How long the page keeps asking for the result of "Send test". */
const TEST_WAIT_MS = 60_000;

const projectParam = (request: Request) => new URL(request.url).searchParams.get("project") ?? "";

const words = (text: string) => text.split(/[\s,]+/).filter(Boolean);

/**
 * "env:prod plan:pro" as tags, written as the search writes them (a value with a space in double
 * quotes: plan:"pro plus"); a pair without its colon is refused naming the field.
 */
function tagPairs(text: string): Record<string, string> {
  const tags: Record<string, string> = {};
  for (const term of readSearch(text)) {
    if ("word" in term)
      throw ValidationError.field(
        "filter.tags",
        "invalid_format",
        `filter.tags: "${term.word}" is not key:value (such as env:prod, or plan:"pro plus" for a value with a space)`,
      );
    tags[term.tag[0]] = term.tag[1];
  }
  return tags;
}

/** The routing and template fields of a form, as the API's filter and template. */
function routingOf(body: unknown) {
  return {
    filter: {
      channels: words(field(body, "channels")),
      exclude_channels: words(field(body, "exclude_channels")),
      tags: tagPairs(field(body, "tags")),
      min_priority: Number(field(body, "min_priority") || 1),
    },
    template: { title: field(body, "template_title"), body: field(body, "template_body") },
  };
}

const kindOf = (body: unknown): IntegrationKind | null => {
  const kind = field(body, "kind");
  return isIntegrationKind(kind) ? kind : null;
};

/** The chosen kind's settings (fields named KIND.KEY); a list (recipients) split into its values. */
function configOf(body: unknown, kind: IntegrationKind | null): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  for (const f of kind ? KINDS[kind].fields : []) {
    const value = field(body, `${kind}.${f.key}`).trim();
    if (value) config[f.key] = f.list ? words(value) : value;
  }
  return config;
}

/** A form's fields, to show it again after a refusal (secrets left out). */
function valuesOf(body: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries((body ?? {}) as Record<string, unknown>))
    if (typeof value === "string" && key !== "_csrf") out[key] = value;
  return out;
}

export function integrationRoutes(services: Services, kit: Kit): Route[] {
  const { integrations, projects, config } = services;
  const nav = { section: "settings" as const };

  async function existing(project: string, id: string | undefined) {
    const integration = await integrations.get(idOf(id));
    if (integration.project !== project) throw new NotFound("That integration does not exist.");
    return integration;
  }

  return [
    route({
      method: "GET",
      path: "/settings/integrations",
      access: "admin",
      async handle({ request, session }) {
        const wanted = projectParam(request);
        const list = visibleTo(session.user, await projects.list(), (p) => p.name);
        const project =
          (wanted && list.find((p) => p.name === wanted)) ||
          list.find((p) => p.name === config.defaultProject) ||
          list[0];
        if (!project) throw new NotFound("Create a project first.");
        const [own, digests] = await Promise.all([integrations.list(project.name), digestSection(services, project)]);
        return kit.page(session, integrationsPage({ projects: list, project, integrations: own, digests }), {
          title: "Integrations",
          nav,
        });
      },
    }),
    route({
      method: "GET",
      path: "/settings/integrations/list",
      access: "admin",
      async handle({ request }) {
        const project = await kit.project(projectParam(request));
        return kit.fragment(integrationList(project, await integrations.list(project.name)));
      },
    }),
    route({
      method: "POST",
      path: "/settings/integrations",
      access: "admin",
      async handle({ session, body, actor }) {
        const project = await kit.project(field(body, "project"));
        const kind = kindOf(body);
        try {
          const input = {
            project: project.name,
            kind: field(body, "kind"),
            name: field(body, "name"),
            config: configOf(body, kind),
            ...routingOf(body),
          };
          const created = await integrations.create(input, session.user, actor);
          // The list above reloads itself on this trigger; the form shows a generated webhook secret once.
          const secret = created.secret ? { name: created.integration.name, value: created.secret } : undefined;
          return kit.fragment(integrationForm({ project: project.name, secret }), 200, {
            "HX-Trigger-After-Settle": "integration-added",
          });
        } catch (error) {
          if (!(error instanceof ValidationError)) throw error;
          return kit.fragment(
            integrationForm({
              project: project.name,
              values: valuesOf(body),
              error: error.issues.map((i) => i.message).join("; "),
            }),
            422,
          );
        }
      },
    }),
    route({
      method: "POST",
      path: "/settings/integrations/preview",
      access: "admin",
      async handle({ body }) {
        const kind = kindOf(body) ?? "webhook";
        try {
          const { template } = routingOf(body);
          return kit.fragment(
            templatePreview(
              kind,
              integrations.preview(kind, field(body, "project") || config.defaultProject, template, config.baseUrl),
            ),
          );
        } catch (error) {
          if (!(error instanceof ValidationError)) throw error;
          return kit.fragment(templatePreviewError(error.issues.map((i) => i.message).join("; ")));
        }
      },
    }),
    route({
      method: "POST",
      path: "/settings/integrations/:id/edit",
      access: "admin",
      async handle({ request, params, body, actor }) {
        const project = projectParam(request);
        const current = await existing(project, params.id);
        try {
          await integrations.update(
            current.id,
            { name: field(body, "name") || current.name, ...routingOf(body) },
            actor,
          );
        } catch (error) {
          if (!(error instanceof ValidationError)) throw error;
          return kit.fragment(
            html`<span class="error" role="alert" data-testid="edit-error">${error.issues.map((i) => i.message).join("; ")}</span>`,
            422,
          );
        }
        return kit.redirect(request, `/settings/integrations?project=${encodeURIComponent(project)}`);
      },
    }),
    route({
      method: "POST",
      path: "/settings/integrations/:id/test",
      access: "admin",
      async handle({ request, params }) {
        const queuedAt = Date.now();
        const integration = await existing(projectParam(request), params.id);
        try {
          await integrations.sendTest(integration.id, config.baseUrl, queuedAt);
        } catch (error) {
          if (error instanceof AppError && error.kind === "forbidden") return kit.fragment(error.message);
          throw error;
        }
        return kit.fragment(integrationTestQueued(projectParam(request), integration.id, queuedAt));
      },
    }),
    route({
      method: "GET",
      path: "/settings/integrations/:id/outcome",
      access: "admin",
      async handle({ request, params }) {
        // Asked every second after "Send test": nothing to swap (204) until a result newer than the test is in.
        const integration = await existing(projectParam(request), params.id);
        const since = Number(new URL(request.url).searchParams.get("since")) || 0;
        const succeeded = (integration.lastSuccessAt ?? 0) >= since;
        const failed = (integration.lastErrorAt ?? 0) >= since;
        if (succeeded || failed)
          return kit.fragment(
            integrationTestDone(
              integration,
              succeeded && (integration.lastSuccessAt ?? 0) >= (integration.lastErrorAt ?? 0),
            ),
          );
        if (Date.now() - since > TEST_WAIT_MS) return kit.fragment(integrationTestDone(integration, null));
        return new Response(null, { status: 204, headers: { "Cache-Control": "no-store" } });
      },
    }),
    route({
      method: "POST",
      path: "/settings/integrations/:id/toggle",
      access: "admin",
      async handle({ request, params, actor }) {
        const project = projectParam(request);
        const current = await existing(project, params.id);
        await integrations.setEnabled(current.id, !current.enabled, actor);
        return kit.redirect(request, `/settings/integrations?project=${encodeURIComponent(project)}`);
      },
    }),
    route({
      method: "GET",
      path: "/settings/integrations/:id/delete",
      access: "admin",
      async handle({ request, params }) {
        const project = projectParam(request);
        const integration = await existing(project, params.id);
        return kit.fragment(
          confirmDialog({
            title: `Delete “${integration.name}”?`,
            body: html`<p>It stops getting ${project}'s notify events. Its stored secrets are deleted with it.</p>`,
            action: `/settings/integrations/${integration.id}/delete?project=${encodeURIComponent(project)}`,
            confirm: "Delete integration",
            danger: true,
          }),
        );
      },
    }),
    route({
      method: "POST",
      path: "/settings/integrations/:id/delete",
      access: "admin",
      async handle({ request, params, actor }) {
        const project = projectParam(request);
        const integration = await existing(project, params.id);
        await integrations.remove(integration.id, actor);
        return kit.redirect(request, `/settings/integrations?project=${encodeURIComponent(project)}`);
      },
    }),
  ];
}
