// Inbound webhooks: the API that makes them (full-access tokens, limited to their projects as the
// other /v1 routes are) and the URL services post to (/hooks/<id>: no token, the id is the secret;
// each kind checks the signature the service sends). Secrets are write-only: no answer shows one.
import { z } from "zod";
import { RateLimiter } from "../domain/limits.ts";
import { type HookChangesInput, hookChanges, type HookInput, hookInput } from "../domain/hooks.ts";
import { validate } from "../domain/validation.ts";
import { readBytes, readJson } from "../http/body.ts";
import { type ProjectOf, projectInBody, projectInQuery, type Route, route, withProject } from "../http/routes.ts";
import type { Hook } from "../model/hook.ts";
import type { Services } from "../services.ts";
import { ok, projectQuery } from "./views.ts";

export const hooksQuery = projectQuery;
export const hookParams = z.object({
  id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be a hook's id (as its URL ends)"),
});

export function apiHook(h: Hook, project: string, url: string) {
  return {
    id: h.id,
    project,
    kind: h.kind,
    name: h.name,
    channel: h.channel,
    url,
    has_secret: h.secret !== null,
    config: h.config,
    created_at: h.createdAt / 1000,
  };
}

const EXAMPLE = {
  id: "q3V9xZb0Lm2Kc8Tn1Rw7Yp4E",
  project: "my-saas",
  kind: "stripe",
  name: "Payments",
  channel: "stripe",
  url: "https://signalboard.example.com/hooks/q3V9xZb0Lm2Kc8Tn1Rw7Yp4E",
  has_secret: true,
  config: {},
  created_at: 1767225600,
};

const RECEIVED_EXAMPLE = { success: true, statusCode: 200, stored: 1, duplicates: 0, ids: [4211] };

export function hookRoutes({ hooks, config }: Services): Route[] {
  const answer = async (h: Hook) => apiHook(h, (await hooks.projectOf(h)).name, hooks.url(h));
  const hookProject: ProjectOf = async ({ params }) =>
    (await hooks.projectOf(await hooks.get(validate(hookParams, params, "query").id))).name;
  const limiter = config.rateLimitHook ? new RateLimiter(config.rateLimitHook) : null;
  return [
    route({
      method: "GET",
      path: "/v1/hooks",
      access: "full",
      project: projectInQuery(config.defaultProject),
      query: hooksQuery,
      doc: {
        summary: "A project's inbound webhooks",
        description:
          "Each with its kind, channel and url (the whole /hooks/<id> address to paste into the service); has_secret says whether one is set, never what it is. Full-access tokens only.",
        example: { success: true, statusCode: 200, hooks: [EXAMPLE] },
      },
      async handle({ query }) {
        const project = query.project ?? config.defaultProject;
        const list = await hooks.list(project);
        return ok({ hooks: list.map((h) => apiHook(h, project, hooks.url(h))) });
      },
    }),
    route({
      method: "POST",
      path: "/v1/hooks",
      access: "full",
      project: projectInBody(config.bodyLimit, config.defaultProject),
      doc: {
        summary: "Make an inbound webhook",
        description:
          '{"project": "my-saas", "kind": "stripe", "name": "Payments", "secret": "whsec_..."}: kind stripe, github, alertmanager or generic; secret required for stripe (the endpoint\'s signing secret) and github (the webhook\'s secret), optional for generic (then its signature header is checked) and alertmanager (then each delivery must carry it as Authorization: Bearer <secret> or as basic auth\'s password); channel defaults to stripe, github, alertmanager or hooks. Answers its url. Full-access tokens only.',
        body: hookInput,
        example: { success: true, statusCode: 200, hook: EXAMPLE },
      },
      async handle({ request, actor }) {
        const body = await readJson(request, config.bodyLimit);
        const input = withProject(body, undefined, config.defaultProject) as HookInput;
        return ok({ hook: await answer(await hooks.create(input, actor)) });
      },
    }),
    route({
      method: "PATCH",
      path: "/v1/hooks/:id",
      access: "full",
      project: hookProject,
      params: hookParams,
      doc: {
        summary: "Change an inbound webhook",
        description:
          "Its name, channel, secret (null removes it, where the kind allows) or config; its kind, project and URL stay. Full-access tokens only.",
        body: hookChanges,
        example: { success: true, statusCode: 200, hook: EXAMPLE },
      },
      async handle({ request, params, actor }) {
        const body = (await readJson(request, config.bodyLimit)) as HookChangesInput;
        return ok({ hook: await answer(await hooks.update(params.id, body, actor)) });
      },
    }),
    route({
      method: "DELETE",
      path: "/v1/hooks/:id",
      access: "full",
      project: hookProject,
      params: hookParams,
      doc: {
        summary: "Delete an inbound webhook",
        description: "Its URL answers 404 from now on; the events it made stay. Full-access tokens only.",
        example: { success: true, statusCode: 200 },
      },
      async handle({ params, actor }) {
        await hooks.remove(params.id, actor);
        return ok();
      },
    }),
    route({
      method: "POST",
      path: "/hooks/:id",
      access: "none",
      params: hookParams,
      doc: {
        summary: "A delivery from a service (Stripe, GitHub, Alertmanager, any JSON)",
        description:
          "No token: the hook's id is the secret, and each kind checks its service's signature on the raw body (Stripe-Signature, X-Hub-Signature-256, the generic hook's HMAC header, an Alertmanager hook's bearer token or basic auth password when it has a secret); a missing or bad one is a 401 and stores nothing. A body that is not the service's (Alertmanager's without alerts or of a version other than \"4\", Stripe's without id or type, GitHub's without X-GitHub-Event or X-GitHub-Delivery) is a 400 naming the field; GitHub's ping is a 200 that stores nothing. Each event is stored once per delivery key (Stripe's event id, X-GitHub-Delivery, Alertmanager's group key with each alert's fingerprint, start and status; a generic hook's id path or Idempotency-Key). 404 for an unknown hook, 413 beyond SIGNALBOARD_HOOK_BODY_LIMIT, 429 with Retry-After past SIGNALBOARD_RATE_LIMIT_HOOK.",
        example: RECEIVED_EXAMPLE,
      },
      async handle({ request, params }) {
        const hook = await hooks.get(params.id);
        const project = await hooks.projectOf(hook);
        limiter?.take(hook.id);
        const body = await readBytes(request, config.hookBodyLimit, "SIGNALBOARD_HOOK_BODY_LIMIT");
        const received = await hooks.receive(hook, project, body, request.headers, request.signal);
        return ok({ ...received });
      },
    }),
  ];
}
