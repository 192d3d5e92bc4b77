// Refuses a body that says it is too large before anything reads it, with our JSON 413. A body
// sent without its size (chunked) is cut off by bytes read where it is read: every route reads
// its body with http/body.ts (parse: "none"), never with Elysia's parsers, which read it whole.
// Bun's own limit, far above ours, answers with an empty 413 and is a last resort only.
import { Elysia } from "elysia";
import { PayloadTooLarge } from "./errors.ts";
import { isApiPath } from "./on-error.ts";

/** Forms of the dashboard are small; only the API takes SIGNALBOARD_BODY_LIMIT. */
export const WEB_BODY_LIMIT = 256 * 1024;
export const SERVER_BODY_LIMIT = 16 * 1024 * 1024;

export function bodyLimit(apiLimit: number) {
  const smallest = Math.min(apiLimit, WEB_BODY_LIMIT);
  const limitOf = (request: Request) => (isApiPath(new URL(request.url).pathname) ? apiLimit : WEB_BODY_LIMIT);
  return new Elysia({ name: "body-limit" })
    .onRequest(({ request }) => {
      const declared = request.headers.get("content-length");
      if (declared === null || Number(declared) <= smallest) return;
      const limit = limitOf(request);
      if (Number(declared) > limit) throw new PayloadTooLarge(limit); // answered (with its request id) by on-error.ts
    });
}

/** Route options of a dashboard form: the handler reads it with readForm (capped), Elysia does not. */
export const FORM = { parse: "none" } as const;
