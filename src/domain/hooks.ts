// Inbound webhooks: a project's URLs (/hooks/<id>) for Stripe, GitHub, Alertmanager or any JSON.
// A delivery is checked by its kind on the raw bytes of its body (a bad signature stores nothing),
// then each of its events goes through ingest's own logEvent, as POST /v1/log's do, with the
// delivery's key as an idempotency key kept four days: a delivery seen twice is stored once.
import { createHash, randomBytes } from "node:crypto";
import { z } from "zod";
import { type Clock, systemClock } from "../clock.ts";
import { BadRequest, NotFound, Unauthorized, ValidationError } from "../errors.ts";
import { type Actor, COMMAND_LINE } from "../model/audit.ts";
import { HOOK_KINDS, type Hook, type HookConfig, type HookKind } from "../model/hook.ts";
import type { Project } from "../model/project.ts";
import type { Scope } from "../model/access.ts";
import type { Store } from "../store/store.ts";
import { audited } from "./audit.ts";
import { HOOK_KIND_MODULES, hookKind } from "./hook-kinds/index.ts";
import type { ingestService } from "./ingest.ts";
import * as rule from "./input-fields.ts";
import { projectOfField, requireProject } from "./projects.ts";
import { validate } from "./validation.ts";

/** The idempotency keys' owner for hooks: no token has id 0, so a hook's keys meet no token's. */
export const HOOK_KEY_OWNER = 0;

/**
 * How long a delivery's key is kept, for every kind: services send a delivery again for days (Stripe
 * retries for up to three, GitHub redelivers those of the past three), so four days, with a margin.
 */
export const HOOK_DELIVERY_KEPT_MS = 4 * 86_400_000;

// Spaces or a line break around a secret are a paste's, not the service's: a signature made with
// the secret without them would never match (and a bearer token, trimmed, could never carry them).
const secret = rule
  .text(500, { nonEmpty: true })
  .refine((value) => value.trim() === value, "must not begin or end with spaces or line breaks")
  .meta({
    description: "What deliveries are signed with (Stripe's whsec_..., GitHub's webhook secret); never shown again.",
  });
const name = rule.text(100, { nonEmpty: true });
const config = z.record(z.string(), z.unknown()).meta({
  description:
    'generic only: {"mapping": {"event": "$.title", "description": "$.body", "tags": {"env": "$.env"}, "id": "$.id", ...}, "signature_header": "X-Signature-256"}.',
});

export const hookInput = z.object({
  project: rule.projectName,
  kind: z.enum(HOOK_KINDS, { error: `must be ${HOOK_KINDS.join(", ")}` }),
  name,
  channel: rule.channelName.optional().meta({
    description: "Where its events go (default: stripe, github, alertmanager or hooks, by kind).",
  }),
  secret: secret.optional(),
  config: config.optional(),
});

export const hookChanges = z.object({
  name: name.optional(),
  channel: rule.channelName.optional(),
  secret: secret.nullable().optional(),
  config: config.optional(),
});

export type HookInput = z.input<typeof hookInput>;
export type HookChangesInput = z.input<typeof hookChanges>;

/** What a delivery did: events stored, and those already stored by an earlier delivery of it. */
export type Received = { stored: number; duplicates: number; ids: number[] };

const newHookId = (): string => randomBytes(18).toString("base64url");
const HOOK_ID = /^[A-Za-z0-9_-]{24}$/;

function checkedConfig(kind: HookKind, raw: unknown): HookConfig {
  try {
    return validate(hookKind(kind).config, raw ?? {});
  } catch (error) {
    if (error instanceof ValidationError) throw ValidationError.field("config", "custom", `config: ${error.message}`);
    throw error;
  }
}

function checkSecret(kind: HookKind, value: string | null | undefined): void {
  // A secret nothing checks would read as "signed" while anyone with the URL may post.
  if (hookKind(kind).secret === "none" && value)
    throw ValidationError.field(
      "secret",
      "custom",
      `secret: a ${hookKind(kind).label} hook takes no secret: its service signs nothing, so the URL is the secret`,
    );
  if (hookKind(kind).secret === "required" && !value)
    throw ValidationError.field(
      "secret",
      "custom",
      `secret: a ${hookKind(kind).label} hook needs the secret its deliveries are signed with`,
    );
}

export function hookService(
  store: Store,
  ingest: ReturnType<typeof ingestService>,
  { clock = systemClock, baseUrl = "" }: { clock?: Clock; baseUrl?: string } = {},
) {
  async function requireHook(id: string): Promise<Hook> {
    const hook = HOOK_ID.test(id) ? await store.hooks.find(id) : null;
    if (!hook) throw new NotFound("There is no hook with this id: it was deleted, or the URL is not whole.");
    return hook;
  }

  async function projectOf(hook: Hook): Promise<Project> {
    const project = await store.projects.findById(hook.projectId);
    if (!project) throw new NotFound("There is no hook with this id: its project was deleted.");
    return project;
  }

  const subject = (hook: Hook, project: string) => `hook “${hook.name}” (${hook.kind}) of ${project}`;

  return {
    get: requireHook,
    projectOf,
    url: (hook: Hook) => `${baseUrl}/hooks/${hook.id}`,
    kinds: HOOK_KIND_MODULES,

    async list(projectName: string): Promise<Hook[]> {
      return store.hooks.list((await requireProject(store, projectName)).id);
    },

    async create(input: HookInput, actor: Actor = COMMAND_LINE, now = clock.now()): Promise<Hook> {
      const f = validate(hookInput, input);
      checkSecret(f.kind, f.secret);
      const hookConfig = checkedConfig(f.kind, f.config);
      const project = await projectOfField(store, f.project);
      return audited(
        store,
        actor,
        async (tx, note) => {
          const hook = await tx.hooks.create({
            id: newHookId(),
            projectId: project.id,
            kind: f.kind,
            name: f.name,
            channel: f.channel ?? hookKind(f.kind).defaultChannel,
            secret: f.secret ?? null,
            config: hookConfig,
            createdAt: now,
          });
          note("hook.created", subject(hook, project.name));
          return hook;
        },
        now,
      );
    },

    async update(id: string, input: HookChangesInput, actor: Actor = COMMAND_LINE): Promise<Hook> {
      const f = validate(hookChanges, input);
      const hook = await requireHook(id);
      const project = await projectOf(hook);
      if (f.secret !== undefined) checkSecret(hook.kind, f.secret);
      const changes = {
        ...(f.name !== undefined && { name: f.name }),
        ...(f.channel !== undefined && { channel: f.channel }),
        ...(f.secret !== undefined && { secret: f.secret }),
        ...(f.config !== undefined && { config: checkedConfig(hook.kind, f.config) }),
      };
      const saved = await audited(store, actor, async (tx, note) => {
        const changed = await tx.hooks.update(id, changes);
        if (changed)
          note("hook.changed", subject(changed, project.name), f.secret !== undefined ? "secret changed" : null);
        return changed;
      });
      if (!saved) throw new NotFound("There is no hook with this id.");
      return saved;
    },

    async remove(id: string, actor: Actor = COMMAND_LINE): Promise<void> {
      const hook = await requireHook(id);
      const project = await projectOf(hook);
      const removed = await audited(store, actor, async (tx, note) => {
        if (!(await tx.hooks.delete(id))) return false;
        note("hook.deleted", subject(hook, project.name));
        return true;
      });
      if (!removed) throw new NotFound("There is no hook with this id.");
    },

    /**
     * One delivery: checked (401 when its signature is not the service's), read as JSON, and each
     * of its events written once per key. `signal`: the request, so a client that left writes nothing new.
     */
    async receive(
      hook: Hook,
      project: Project,
      body: Uint8Array,
      headers: Headers,
      signal?: AbortSignal,
    ): Promise<Received> {
      const kind = hookKind(hook.kind);
      const now = clock.now();
      const delivery = { headers, body, now };
      const refused = kind.verify(delivery, hook.secret, hook.config);
      if (refused !== null) throw new Unauthorized(refused);
      const json = jsonOf(body, headers.get("content-type"));
      const scope: Scope = {
        kind: "full",
        tokenId: HOOK_KEY_OWNER,
        name: `hook ${hook.name}`,
        projects: [project.name],
      };
      const received: Received = { stored: 0, duplicates: 0, ids: [] };
      for (const { input, key } of kind.events(json, delivery, hook)) {
        const idempotency =
          key === null
            ? undefined
            : {
                tokenId: HOOK_KEY_OWNER,
                key: keyOf(hook.id, key),
                // The key alone says what the delivery is: a retry matches it whatever else changed.
                fingerprint: createHash("sha256").update(key).digest("hex"),
                answer: "event" as const,
                keepMs: HOOK_DELIVERY_KEPT_MS,
              };
        const written = await ingest.logEvent(
          scope,
          { ...input, project: project.name, channel: input.channel || hook.channel },
          { idempotency, signal, now },
        );
        if (written.replayed !== undefined) received.duplicates++;
        else {
          received.stored++;
          received.ids.push(written.result.id);
        }
      }
      return received;
    },
  };
}

/**
 * The delivery's JSON: the body, or its `payload` field when it is a form (GitHub's other content
 * type, application/x-www-form-urlencoded). Text that is not UTF-8 is refused, not guessed at.
 */
function jsonOf(body: Uint8Array, type: string | null): unknown {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(body);
  } catch {
    throw new BadRequest("The body is not UTF-8 text: send JSON.", "invalid_json");
  }
  if (type?.toLowerCase().startsWith("application/x-www-form-urlencoded"))
    text = new URLSearchParams(text).get("payload") ?? "";
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new BadRequest(`The body is not JSON: ${(error as Error).message}`, "invalid_json");
  }
}

/** The idempotency key of one event of a delivery: the hook's id and the delivery's key (hashed when long). */
export function keyOf(hookId: string, key: string): string {
  const full = `hook:${hookId}:${key}`;
  return full.length <= 255 ? full : `hook:${hookId}:sha256:${createHash("sha256").update(key).digest("hex")}`;
}

export type HookService = ReturnType<typeof hookService>;
