// Public status badges: /badge/<badge key>/<slug>.svg or .json for a check, /badge/<badge key>.svg
// or .json for all of a project's checks. No session: the badge key is the secret. Cached briefly,
// so a README's badge follows a check within a minute without asking the server on every view.
import { badgeJson, badgeSvg } from "../domain/check-badges.ts";
import { type Route, route } from "../http/routes.ts";
import type { Services } from "../services.ts";
import { paths } from "./paths.ts";

const CACHE = "public, max-age=60";
/**
 * An SVG opened on its own is a document of the dashboard's origin: it may run no script and load
 * nothing, whatever a check's name says (names are escaped besides), and it is never read as
 * another type. It may be shown in any page (a README, a wiki).
 */
const SANDBOX = {
  "Content-Security-Policy": "default-src 'none'; frame-ancestors *",
  "X-Content-Type-Options": "nosniff",
};

const FILE = /^(.+)\.(svg|json)$/;

/** The badge `file` names (<slug or key>.svg or .json) under `key`, or 404 `not found`. */
async function answer({ checks }: Services, key: string, slug: string | null, format: string): Promise<Response> {
  const badge = await checks.badges.badge(key, slug);
  if (!badge)
    return new Response("not found", {
      status: 404,
      headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": CACHE },
    });
  if (format === "json")
    return new Response(JSON.stringify(badgeJson(badge.label, badge.status)), {
      headers: {
        "Content-Type": "application/json",
        "Cache-Control": CACHE,
        "Access-Control-Allow-Origin": "*",
        ...SANDBOX,
      },
    });
  return new Response(badgeSvg(badge.label, badge.status), {
    headers: { "Content-Type": "image/svg+xml; charset=utf-8", "Cache-Control": CACHE, ...SANDBOX },
  });
}

/** A check's badge (/badge/<key>/<slug>.svg) or the project's (/badge/<key>.svg): its key, slug and format. */
function asked(params: { key: string; file?: string }): [string, string | null, string] | null {
  const m = FILE.exec(params.file ?? params.key);
  if (!m) return null;
  return params.file === undefined ? [m[1]!, null, m[2]!] : [params.key, m[1]!, m[2]!];
}

export function badgeRoutes(services: Services): Route[] {
  return [paths.badge, paths.projectBadge].map((path) =>
    route({
      method: "GET",
      path,
      access: "none",
      async handle({ params }) {
        const badge = asked(params);
        // A name that is no badge is answered as an unknown key is: 404.
        return answer(services, ...(badge ?? (["", null, "svg"] as const)));
      },
    }),
  );
}
