// A project's integrations: made, changed, tested and removed from the dashboard, the API
// (/v1/integrations) and the CLI alike. Input is the API's body: {project, kind, name, config,
// filter, template}. A config is checked by its kind (integration-kinds/), a filter by the
// routing rules (routing.ts), templates by rendering them (templates.ts): each problem is a 400
// naming its field, as is a URL the outbound rules refuse (outbound.ts: this machine, link-local
// addresses, ...). Secrets are write-only: every answer carries them masked, and a change that
// leaves a secret out (or sends it back masked) keeps the stored one.
import { z } from "zod";
import { Forbidden, NotFound, ValidationError } from "../errors.ts";
import { type Actor, COMMAND_LINE } from "../model/audit.ts";
import type { Integration, RouteFilter, Template } from "../model/notification.ts";
import type { User } from "../model/user.ts";
import type { Store } from "../store/store.ts";
import { maskedConfig, maskSecret, splitConfig } from "./integration-kinds/configs.ts";
import { kindMessage } from "./integration-kinds/messages.ts";
import { INTEGRATION_KINDS, type IntegrationKind, kindNamed } from "./integration-kinds/registry.ts";
import { destinationProblem, type OutboundRules } from "./outbound.ts";
import { testPayload } from "./notifications.ts";
import { requireProject } from "./projects.ts";
import { routeFilter } from "./routing.ts";
import * as rule from "./input-fields.ts";
import { LIMITS, type Message, sampleEvent, templateProblems, templateView } from "./templates.ts";
import { audited } from "./audit.ts";
import { randomToken } from "./tokens.ts";
import { validate } from "./validation.ts";

const KIND_LIST = INTEGRATION_KINDS.join(", ");

export const templateInput = z
  .object(
    {
      title: z
        .string()
        .max(LIMITS.title, `must be at most ${LIMITS.title} characters`)
        .optional()
        .meta({
          description: "A mustache template of the title (plain text).",
          examples: ["{{icon}} {{event}} ({{project}})"],
        }),
      body: z
        .string()
        .max(LIMITS.body, `must be at most ${LIMITS.body} characters`)
        .optional()
        .meta({
          description: "A mustache template of the body, in the kind's format.",
          examples: ["*{{event}}*\n{{description}}\nplan: {{tags.plan}}"],
        }),
    },
    { error: 'must be an object like {"title": "{{event}}", "body": "{{description}}"}' },
  )
  .strict()
  .nullish()
  .transform((t): Template | null => {
    if (!t) return null;
    const out: Template = {};
    if (t.title?.trim()) out.title = t.title;
    if (t.body?.trim()) out.body = t.body;
    return Object.keys(out).length ? out : null;
  });

const integrationName = z
  .string({ error: "is required: a name to tell it by" })
  .trim()
  .min(1, "is required: a name to tell it by")
  .max(100, "must be at most 100 characters");
const configObject = z.record(z.string(), z.unknown(), {
  error: "must be an object: the kind's settings (see docs/notifications.md)",
});

export const integrationInput = z
  .object({
    project: rule.projectName.meta({ description: "The project whose notify events it gets.", examples: ["my-saas"] }),
    kind: z
      .enum(INTEGRATION_KINDS, { error: `must be one of ${KIND_LIST}` })
      .meta({ description: "What it sends to." }),
    name: integrationName.meta({ examples: ["Ops chat"] }),
    config: configObject.meta({
      description: "The kind's settings (secrets are write-only).",
      examples: [{ bot_token: "123456789:AAH…", chat_id: "-1001234567890" }],
    }),
    filter: routeFilter.meta({ description: "Which notify events it gets (absent: all of the project's)." }),
    template: templateInput.meta({ description: "Its own title and body (absent: the default wording)." }),
    enabled: z.boolean().optional(),
  })
  .strict();

export const integrationChangesInput = z
  .object({
    kind: z.enum(INTEGRATION_KINDS, { error: `must be one of ${KIND_LIST}` }).optional(),
    name: integrationName.optional(),
    config: configObject.optional().meta({
      description:
        "Keys to change (merged into the stored config; null removes an optional one; a secret left out is kept).",
    }),
    filter: routeFilter.optional(),
    template: templateInput.optional(),
    enabled: z.boolean().optional(),
  })
  .strict();

/** An integration as every answer shows it: its secrets masked, with its project's name. */
export type IntegrationView = Omit<Integration, "secrets" | "kind"> & {
  kind: IntegrationKind;
  project: string;
  hasSecret: boolean;
};

export function viewOf(i: Integration, project: string): IntegrationView {
  const { secrets, ...rest } = i;
  return {
    ...rest,
    kind: i.kind as IntegrationKind,
    project,
    config: maskedConfig(i.kind, i.config, secrets),
    hasSecret: Object.keys(secrets).length > 0,
  };
}

/**
 * The kind's config checked (paths as config.KEY), its URLs by the outbound rules too, split into
 * what is shown and the secrets. A refusal names the host, never the whole URL (a Discord or
 * Slack URL is a secret).
 */
async function checkedConfig(kind: string, config: Record<string, unknown>, outbound: OutboundRules) {
  const { schema, urlKeys } = kindNamed(kind);
  const checked = validate(z.object({ config: schema }), { config }).config;
  const issues = [];
  for (const key of urlKeys) {
    const url = checked[key];
    const problem = typeof url === "string" ? await destinationProblem(outbound, "integration", url) : null;
    if (problem)
      issues.push({ path: `config.${key}`, type: "destination_refused", message: `config.${key}: ${problem}` });
  }
  if (issues.length) throw new ValidationError(issues);
  return splitConfig(kind, checked);
}

function checkTemplate(kind: string, template: Template | null): void {
  if (!template) return;
  const issues = templateProblems(kindNamed(kind).format, template);
  if (issues.length) throw new ValidationError(issues);
}

/**
 * A change of where an integration sends (its kind's destinationKeys) must carry its stored secrets anew: a
 * secret is written once and never shown, and sending it to a server of the caller's choosing
 * would show it there (a full-access token could read a bot's token that way).
 */
function assertSecretsFollow(
  current: Integration,
  given: Record<string, unknown>,
  shown: Record<string, unknown>,
  secrets: Record<string, string>,
): void {
  // Back to the kind's own service (api_url removed) is where its secrets belong.
  const moved = kindNamed(current.kind).destinationKeys.find(
    (key) => shown[key] !== undefined && shown[key] !== current.config[key],
  );
  if (!moved) return;
  // Sent back masked (as answers show it) is not sent again.
  const resent = (key: string) => typeof given[key] === "string" && given[key] !== maskSecret(current.secrets[key]!);
  const kept = Object.keys(current.secrets).filter((key) => secrets[key] !== undefined && !resent(key));
  if (!kept.length) return;
  throw new ValidationError(
    kept.map((key) => ({
      path: `config.${key}`,
      type: "secret_required",
      message: `config.${key}: send it again to change config.${moved}: a stored secret is only sent where it was first set to go`,
    })),
  );
}

const integrationSubject = (i: Pick<Integration, "id" | "name">, project: string) =>
  `integration “${i.name}” (${i.id}) of ${project}`;

export function integrationService(store: Store, outbound: OutboundRules) {
  async function find(id: number): Promise<{ integration: Integration; project: string }> {
    const integration = await store.notifications.integration(id);
    const project = integration && (await store.projects.findById(integration.projectId));
    if (!integration || !project)
      throw new NotFound(
        `There is no integration ${id}; signalboard integration list shows their ids (GET /v1/integrations?project=NAME in the API).`,
      );
    return { integration, project: project.name };
  }

  return {
    async list(projectName: string): Promise<IntegrationView[]> {
      const project = await requireProject(store, projectName);
      return (await store.notifications.integrationsOf(project.id)).map((i) => viewOf(i, project.name));
    },

    async get(id: number): Promise<IntegrationView> {
      const { integration, project } = await find(id);
      return viewOf(integration, project);
    },

    /** A kind that makes a secret (a webhook's signing secret) gets one when none is given, returned here once. `by`: the member adding it. */
    async create(
      input: unknown,
      by: User | null = null,
      actor: Actor = by ? { userId: by.id, name: by.username, ip: null } : COMMAND_LINE,
      now = Date.now(),
    ): Promise<{ integration: IntegrationView; secret: string | null }> {
      const i = validate(integrationInput, input);
      const project = await requireProject(store, i.project);
      const { shown, secrets } = await checkedConfig(i.kind, i.config, outbound);
      checkTemplate(i.kind, i.template);
      const generate = kindNamed(i.kind).generatedSecret;
      const generated = generate && !secrets[generate.key] ? `${generate.prefix}${randomToken().slice(3)}` : null;
      if (generate && generated) secrets[generate.key] = generated;
      const row = await audited(
        store,
        actor,
        async (tx, note) => {
          const made = await tx.notifications.createIntegration(
            {
              projectId: project.id,
              kind: i.kind,
              name: i.name,
              config: shown,
              secrets,
              filter: i.filter,
              template: i.template,
              createdByUserId: by?.id ?? null,
            },
            now,
          );
          note("integration.created", integrationSubject(made, project.name), made.kind);
          return i.enabled === false
            ? ((await tx.notifications.updateIntegration(made.id, { enabled: false })) ?? made)
            : made;
        },
        now,
      );
      return { integration: viewOf(row, project.name), secret: generated };
    },

    /** Changes what `input` names; the kind stays (a different one is refused). */
    async update(id: number, input: unknown, actor: Actor = COMMAND_LINE): Promise<IntegrationView> {
      const { integration: current, project } = await find(id);
      const c = validate(integrationChangesInput, input);
      if (c.kind !== undefined && c.kind !== current.kind)
        throw ValidationError.field(
          "kind",
          "immutable",
          `kind: an integration's kind cannot change (it is ${current.kind}); add a new ${c.kind} integration instead`,
        );
      const changes: Parameters<Store["notifications"]["updateIntegration"]>[1] = {};
      if (c.name !== undefined) changes.name = c.name;
      if (c.enabled !== undefined) changes.enabled = c.enabled;
      if (c.filter !== undefined) changes.filter = c.filter as RouteFilter | null;
      if (c.template !== undefined) {
        checkTemplate(current.kind, c.template);
        changes.template = c.template;
      }
      if (c.config !== undefined) {
        const merged: Record<string, unknown> = { ...current.config, ...current.secrets };
        for (const [key, value] of Object.entries(c.config)) {
          const secret = (kindNamed(current.kind).secrets as readonly string[]).includes(key);
          // A secret sent back as an answer showed it is the stored one, not a new value.
          if (
            secret &&
            typeof value === "string" &&
            current.secrets[key] !== undefined &&
            value === maskSecret(current.secrets[key]!)
          )
            continue;
          if (value === null) delete merged[key];
          else merged[key] = value;
        }
        const { shown, secrets } = await checkedConfig(current.kind, merged, outbound);
        assertSecretsFollow(current, c.config, shown, secrets);
        changes.config = shown;
        changes.secrets = secrets;
      }
      const row = await audited(store, actor, async (tx, note) => {
        const saved = await tx.notifications.updateIntegration(id, changes);
        if (saved)
          note("integration.changed", integrationSubject(saved, project), Object.keys(changes).join(", ") || null);
        return saved;
      });
      if (!row) throw new NotFound(`There is no integration ${id}.`);
      return viewOf(row, project);
    },

    async setEnabled(id: number, enabled: boolean, actor: Actor = COMMAND_LINE): Promise<void> {
      const { integration, project } = await find(id);
      await audited(store, actor, async (tx, note) => {
        await tx.notifications.setIntegrationEnabled(id, enabled);
        if (integration.enabled !== enabled)
          note("integration.changed", integrationSubject(integration, project), enabled ? "turned on" : "turned off");
      });
    },

    async remove(id: number, actor: Actor = COMMAND_LINE): Promise<void> {
      const { integration, project } = await find(id);
      await audited(store, actor, async (tx, note) => {
        await tx.notifications.deleteIntegration(id);
        note("integration.deleted", integrationSubject(integration, project), integration.kind);
      });
    },

    /** Queues a test message; the integration's last outcome shows how it went. */
    async sendTest(id: number, baseUrl: string, now = Date.now()): Promise<void> {
      const { integration } = await find(id);
      if (!integration.enabled) throw new Forbidden("Enable the integration first.");
      const payload = JSON.stringify(testPayload(integration.name, baseUrl, integration.kind));
      await store.notifications.enqueue([{ target: "integration", targetId: id, eventId: null, payload }], now);
    },

    /**
     * What a kind's templates make of a sample event (hostile text included), as it would be sent;
     * a template problem is thrown as it would be on save.
     */
    preview(kind: IntegrationKind, project: string, template: unknown, baseUrl: string): Message {
      const t = validate(z.object({ template: templateInput }), { template }).template;
      checkTemplate(kind, t);
      const sample = sampleEvent(project);
      const url = `${baseUrl}/p/${encodeURIComponent(project)}/events/1`;
      return kindMessage(kind, t, templateView(sample, url), {
        title: `${sample.icon} ${sample.name}`,
        body: sample.description ?? "",
      });
    },

    /** How many enabled integrations a member added (across projects). */
    createdBy(userId: number): Promise<number> {
      return store.notifications.integrationsCreatedBy(userId);
    },
  };
}
