// The ping URLs of cron jobs and uptime monitors, as Healthchecks and Uptime Kuma take them, with no
// Authorization header (the URL is the secret): /ping/<uuid>[/start|/fail|/log|/<0-255>],
// /ping/<ping key>/<slug>[...] (?create=1 makes the check), ?rid= to pair a start with its finish,
// the same without /ping (so a URL written for the hosted service works by changing its host), and
// /api/push/<token>?status=up|down&msg=&ping=. Answers are those services' own: "OK", "not found",
// {"ok":true}; each check URL has a rate limit of its own (SIGNALBOARD_RATE_LIMIT_PING).
import { Elysia } from "elysia";
import { z } from "zod";
import type { Ping, PingKind, PingOutcome, PingTarget } from "../domain/check-pings.ts";
import { PING_KEY, PUSH_TOKEN, SLUG, UUID } from "../domain/checks.ts";
import { RateLimiter } from "../domain/limits.ts";
import { PayloadTooLarge, RateLimited } from "../errors.ts";
import { readBytes } from "../http/body.ts";
import { type ApiDoc, type Method, type Route, route } from "../http/routes.ts";
import type { Services } from "../services.ts";

/** A body larger than this is refused (413), as Healthchecks refuses one. */
export const PING_REQUEST_LIMIT = 100 * 1024;

const KUMA_NOT_FOUND = { ok: false, msg: "Monitor not found or not active." };

type Answer = { status: number; body: string; headers?: Record<string, string> };

/** What a ping path names after its check: the kind and exit status, or why it names nothing. */
function actionOf(segment: string | undefined): { kind: PingKind; exitStatus: number | null } | Answer {
  if (segment === undefined || segment === "") return { kind: "success", exitStatus: null };
  if (segment === "start" || segment === "fail" || segment === "log") return { kind: segment, exitStatus: null };
  if (!/^\d+$/.test(segment)) return { status: 404, body: "not found" };
  const status = Number(segment);
  if (status > 255) return { status: 400, body: "invalid exit status: it must be 0-255" };
  return { kind: status === 0 ? "success" : "fail", exitStatus: status };
}

/** The check and action a ping path names (its segments after /ping), or null when it names none. */
export function pingPath(
  segments: string[],
  query: URLSearchParams,
): { target: { uuid: string } | Extract<PingTarget, { pingKey: string }>; segment: string | undefined } | null {
  const [first = "", second, third] = segments;
  if (UUID.test(first) && segments.length <= 2) return { target: { uuid: first.toLowerCase() }, segment: second };
  if (PING_KEY.test(first) && second !== undefined && segments.length <= 3)
    return { target: { pingKey: first, slug: second, create: query.get("create") === "1" }, segment: third };
  return null;
}

/** The first `limit` bytes of the body as text, cut at a character's edge; NUL characters (which no store keeps) left out. */
function bodyText(bytes: Uint8Array, limit: number): string {
  return new TextDecoder().decode(bytes.subarray(0, cutAt(bytes, limit))).replaceAll("\u0000", "");
}

/**
 * Where to cut `bytes` to keep at most `limit`: before a character that the limit would split. Only
 * the last three bytes are looked at (a character is four at most), so bytes that are not UTF-8
 * (each kept as U+FFFD) are cut at the limit, not walked back over.
 */
function cutAt(bytes: Uint8Array, limit: number): number {
  if (bytes.length <= limit) return bytes.length;
  for (let at = limit - 1; at >= Math.max(0, limit - 3); at--) {
    const b = bytes[at]!;
    if ((b & 0xc0) === 0x80) continue; // inside a character: its first byte is further back
    const length = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return at + length > limit ? at : limit;
  }
  return limit;
}

/** One set of handlers per server: the /ping URLs and those without /ping share their rate limits. */
const handlersOf = new WeakMap<Services, PingHandlers>();

function handlers(services: Services): PingHandlers {
  let made = handlersOf.get(services);
  if (!made) handlersOf.set(services, (made = pingHandlers(services)));
  return made;
}

export function pingHandlers({ checks, config, metrics }: Pick<Services, "checks" | "config" | "metrics">) {
  const limiter = config.rateLimitPing ? new RateLimiter(config.rateLimitPing) : null;
  const headers = {
    "Content-Type": "text/plain; charset=utf-8",
    "Cache-Control": "no-store",
    "Access-Control-Allow-Origin": "*",
    "Ping-Body-Limit": String(config.pingBodyLimit),
  };
  const text = ({ status, body, headers: more }: Answer) =>
    new Response(body, { status, headers: { ...headers, ...more } });
  const json = (status: number, body: unknown, more: Record<string, string> = {}) =>
    new Response(JSON.stringify(body), {
      status,
      headers: { ...headers, "Content-Type": "application/json; charset=utf-8", ...more },
    });

  /** Charges a ping to its URL; the answer when it is over the limit. */
  function limited(key: string): { retryAfter: number } | null {
    try {
      limiter?.take(key);
      return null;
    } catch (error) {
      if (error instanceof RateLimited) return { retryAfter: error.details.retryAfter ?? 1 };
      throw error;
    }
  }

  const OUTCOMES: Record<PingOutcome, Answer> = {
    ok: { status: 200, body: "OK" },
    "not found": { status: 404, body: "not found" },
    "not unique": { status: 409, body: "ambiguous slug: more than one check has it" },
  };

  const answers = {
    /** A Healthchecks ping: `segments` are the path's after /ping (or after the host). */
    async healthchecks(request: Request, segments: string[]): Promise<Response> {
      const url = new URL(request.url);
      const named = pingPath(segments, url.searchParams);
      if (!named) return text(OUTCOMES["not found"]);
      const action = actionOf(named.segment);
      if ("status" in action) return text(action);
      const rid = url.searchParams.get("rid");
      if (rid !== null && !UUID.test(rid)) return text({ status: 400, body: "invalid rid: it must be a UUID" });
      if ("slug" in named.target && !SLUG.test(named.target.slug)) return text(OUTCOMES["not found"]);
      const t = named.target;
      const over = limited("uuid" in t ? t.uuid : `${t.pingKey}/${t.slug}`);
      if (over) return text({ status: 429, body: "rate limited", headers: { "Retry-After": String(over.retryAfter) } });
      let bytes: Uint8Array;
      try {
        bytes = await readBytes(request, PING_REQUEST_LIMIT);
      } catch (error) {
        if (error instanceof PayloadTooLarge) return text({ status: 413, body: "request body too large" });
        throw error;
      }
      const ping: Ping = { ...action, rid: rid?.toLowerCase() ?? null, body: bodyText(bytes, config.pingBodyLimit) };
      return text(OUTCOMES[await checks.pings.ping(named.target, ping)]);
    },

    /** An Uptime Kuma push: up, or down with its message. */
    async kuma(request: Request, token: string): Promise<Response> {
      if (!PUSH_TOKEN.test(token)) return json(404, KUMA_NOT_FOUND);
      const over = limited(`push:${token}`);
      if (over) return json(429, { ok: false, msg: "Too many requests." }, { "Retry-After": String(over.retryAfter) });
      const query = new URL(request.url).searchParams;
      const up = (query.get("status") ?? "up") === "up";
      const ms = Number(query.get("ping") ?? "");
      const ping: Ping = {
        kind: up ? "success" : "fail",
        exitStatus: null,
        rid: null,
        body: bodyText(new TextEncoder().encode(query.get("msg") || "OK"), config.pingBodyLimit),
        ...(query.get("ping") && Number.isFinite(ms) && { tags: { ping: ms } }),
      };
      const outcome = await checks.pings.ping({ pushToken: token }, ping);
      return outcome === "ok" ? json(200, { ok: true }) : json(404, KUMA_NOT_FOUND);
    },
  };

  /** Each answer counted by API and status (signalboard_pings_total): 404s are jobs pinging what is not there, 429s the limit. */
  const counted =
    <A extends unknown[]>(api: string, answer: (...args: A) => Promise<Response>) =>
    async (...args: A): Promise<Response> => {
      const response = await answer(...args);
      metrics.pings.inc({ api, status: String(response.status) });
      return response;
    };
  return { healthchecks: counted("healthchecks", answers.healthchecks), kuma: counted("uptime-kuma", answers.kuma) };
}

export type PingHandlers = ReturnType<typeof pingHandlers>;

const METHODS: Method[] = ["GET", "POST"];

const pingQuery = z.object({
  rid: z.string().regex(UUID).optional().meta({ description: "Pairs a start with its finish when runs overlap." }),
  create: z.literal("1").optional().meta({
    description:
      "On a slug URL: makes the check (a ping a day, an hour's grace) when there is none, while the project has fewer than 1,000.",
  }),
});

/** The path's parts, for the reference: what each may be. */
const PART = {
  a: z.string().meta({ description: "The check's UUID, or the project's ping key." }),
  b: z
    .string()
    .meta({ description: "start, fail, log or an exit status (after a UUID), or a slug (after a ping key)." }),
  c: z.string().meta({ description: "start, fail, log or an exit status." }),
};
const partsOf = (path: string) =>
  z.object(Object.fromEntries(Object.entries(PART).filter(([name]) => path.includes(`:${name}`))));

const PING_DOCS: Record<string, Pick<ApiDoc, "summary" | "description">> = {
  "/ping/:a": {
    summary: "Ping a check by its UUID (Healthchecks)",
    description:
      "A success. No token: the UUID is the secret. HEAD, GET or POST; the body (POST) is the event's description, its first SIGNALBOARD_PING_BODY_LIMIT bytes. Also without /ping: /<uuid>. Answers OK, or 404 not found.",
  },
  "/ping/:a/:b": {
    summary: "Ping a check: /<uuid>/start|fail|log|<0-255>, or /<ping key>/<slug>",
    description:
      "A start, a failure, a log line (state unchanged) or an exit status (0 a success, others failures) of the check with this UUID; or a success of the project's check with this slug. 400 for an exit status over 255 or a rid that is not a UUID; 409 for a slug two checks share; 413 beyond 100 KiB; 429 with Retry-After past SIGNALBOARD_RATE_LIMIT_PING.",
  },
  "/ping/:a/:b/:c": {
    summary: "Ping a check by ping key and slug: /<ping key>/<slug>/start|fail|log|<0-255>",
    description: "The same actions as by UUID, naming the check by its project's ping key and its slug.",
  },
};

export function pingRoutes(services: Services): Route[] {
  const pings = handlers(services);
  const segmentsOf = (params: Record<string, string>) =>
    ["a", "b", "c"].map((k) => params[k]).filter((s) => s !== undefined) as string[];
  return METHODS.flatMap((method) => [
    ...["/ping/:a", "/ping/:a/:b", "/ping/:a/:b/:c"].map((path) =>
      route({
        method,
        path,
        access: "none",
        ...(method === "GET" && {
          doc: {
            ...PING_DOCS[path]!,
            params: partsOf(path),
            query: pingQuery,
            example: "OK",
            contentType: "text/plain",
          },
        }),
        handle: ({ request, params }) => pings.healthchecks(request, segmentsOf(params)),
      }),
    ),
    route({
      method,
      path: "/api/push/:token",
      access: "none",
      ...(method === "GET" && {
        doc: {
          summary: "Push to a check (Uptime Kuma)",
          description:
            'No token: the push token is the secret. GET or POST. status=up (or none) is a success, any other a failure; msg (default OK) is the event\'s description; ping (ms) a number tag. Unknown token: 404 {"ok":false,"msg":"Monitor not found or not active."}.',
          params: z.object({ token: z.string().meta({ description: "The check's push token (32 characters)." }) }),
          query: z.object({
            status: z.string().optional().meta({ description: "up, or anything else for down." }),
            msg: z.string().optional().meta({ description: "The event's description (default OK)." }),
            ping: z.string().optional().meta({ description: "A response time in ms, kept as the tag ping." }),
          }),
          example: { ok: true },
        },
      }),
      handle: ({ request, params }) => pings.kuma(request, params.token),
    }),
  ]);
}

/**
 * The ping URLs without /ping: taken before routing, and only a path whose first segment is a UUID
 * or has a ping key's exact shape (and is none of the dashboard's own first segments), so they
 * shadow no other route.
 */
export function prefixlessPings(services: Services, routes: Route[]) {
  const pings = handlers(services);
  const taken = new Set(routes.map((r) => r.path.split("/")[1]).filter((s) => s && !s.startsWith(":")));
  return new Elysia({ name: "prefixless-pings" }).onRequest(({ request }) => {
    if (request.method !== "GET" && request.method !== "POST" && request.method !== "HEAD") return;
    const path = new URL(request.url).pathname;
    const segments = path.split("/").slice(1);
    const first = segments[0] ?? "";
    if (taken.has(first) || !(UUID.test(first) || PING_KEY.test(first))) return;
    if (!pingPath(segments, new URLSearchParams())) return;
    return pings.healthchecks(request, segments);
  });
}
