// Ingest routes. Each is a straight line: authenticate, read and validate the body, call the
// service, answer. Browsers may call them with a public token, so preflights are answered.
import { Elysia } from "elysia";
import type { z } from "zod";
import type { Deps } from "../app.ts";
import { validate } from "../domain/validation.ts";
import { readJson } from "../http/body.ts";
import { groupBody, identifyBody, insightBody, insightIncrementBody, logBody, logEventBody, sendMetricBody } from "./models.ts";
import { apiEvent, apiMetric, ok } from "./views.ts";

const PREFLIGHT = {
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Allow-Methods": "POST, PATCH, OPTIONS",
  "Access-Control-Allow-Headers": "Authorization, Content-Type, Idempotency-Key",
  "Access-Control-Max-Age": "86400",
};

export const INGEST_PATHS = ["/v1/log", "/log-event", "/send-metric", "/v1/insight", "/v1/identify", "/v1/group"];

export function ingestApi({ guard, ingest, config }: Deps) {
  const read = async <S extends z.ZodType>(request: Request, schema: S): Promise<z.output<S>> => validate(schema, await readJson(request, config.bodyLimit));
  const noParse = { parse: "none" } as const;

  const app = new Elysia({ name: "api.ingest" });
  for (const path of INGEST_PATHS) app.options(path, () => new Response(null, { status: 204, headers: PREFLIGHT }));

  return app
    .post(
      "/v1/log",
      async ({ request, server }) => {
        const scope = guard.authenticate(request, server);
        const event = await ingest.logEvent(scope, await read(request, logBody));
        return ok(apiEvent(event));
      },
      noParse,
    )
    .post(
      "/log-event",
      async ({ request, server }) => {
        const scope = guard.authenticate(request, server);
        const event = await ingest.logEvent(scope, await read(request, logEventBody));
        return ok(apiEvent(event));
      },
      noParse,
    )
    .post(
      "/send-metric",
      async ({ request, server }) => {
        const scope = guard.authenticate(request, server);
        await ingest.recordMetric(scope, await read(request, sendMetricBody));
        return ok();
      },
      noParse,
    )
    .post(
      "/v1/insight",
      async ({ request, server }) => {
        const scope = guard.authenticate(request, server);
        const metric = await ingest.recordMetric(scope, await read(request, insightBody));
        return ok(apiMetric(metric));
      },
      noParse,
    )
    .patch(
      "/v1/insight",
      async ({ request, server }) => {
        const scope = guard.authenticate(request, server);
        const metric = await ingest.recordMetric(scope, await read(request, insightIncrementBody));
        return ok(apiMetric(metric));
      },
      noParse,
    )
    .post(
      "/v1/identify",
      async ({ request, server }) => {
        const scope = guard.authenticate(request, server);
        await ingest.identify(scope, await read(request, identifyBody));
        return ok();
      },
      noParse,
    )
    .post(
      "/v1/group",
      async ({ request, server }) => {
        const scope = guard.authenticate(request, server);
        await ingest.group(scope, await read(request, groupBody));
        return ok();
      },
      noParse,
    );
}
