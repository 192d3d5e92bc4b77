// The scripts other sites load, at the paths of LogSnag's CDN so a site changes only the host: the
// tracker (/web/ls.js) and the feedback widget (/feedback/ls.js), embedded in the binary like the
// dashboard's assets. Their URLs cannot carry a hash, so they are cached briefly with a validator:
// a browser asks again after five minutes and gets a 304 while nothing changed (docs/web.md).
import { type Route, route } from "../http/routes.ts";
import widgetJs from "../../public/feedback/ls.js" with { type: "file" };
import trackerJs from "../../public/web/ls.js" with { type: "file" };

const SOURCES = { "/web/ls.js": trackerJs, "/feedback/ls.js": widgetJs } as const;

export const SITE_SCRIPT_MAX_AGE = 300;

type SiteScript = { path: string; etag: string; body: Uint8Array; gzip: Uint8Array };

export async function loadSiteScripts(): Promise<SiteScript[]> {
  return Promise.all(
    Object.entries(SOURCES).map(async ([path, file]) => {
      const body = await Bun.file(file).bytes();
      // Weak: the gzipped and the plain answer are the same script, not the same bytes.
      const etag = `W/"${new Bun.CryptoHasher("sha256").update(body).digest("hex").slice(0, 16)}"`;
      return { path, etag, body, gzip: Bun.gzipSync(body, { level: 9 }) };
    }),
  );
}

const HEADERS = {
  "Content-Type": "text/javascript; charset=utf-8",
  "Cache-Control": `public, max-age=${SITE_SCRIPT_MAX_AGE}`,
  Vary: "Accept-Encoding",
  // Readable from any origin: a module script (the widget) is fetched in CORS mode.
  "Access-Control-Allow-Origin": "*",
  "Cross-Origin-Resource-Policy": "cross-origin",
  "X-Content-Type-Options": "nosniff",
};

/** If-None-Match names this version (weak comparison, as RFC 9110 asks for it). */
function unchanged(ifNoneMatch: string | null, etag: string): boolean {
  if (ifNoneMatch === null) return false;
  const tag = etag.replace(/^W\//, "");
  return ifNoneMatch.split(",").some((t) => t.trim() === "*" || t.trim().replace(/^W\//, "") === tag);
}

function answer(script: SiteScript, request: Request): Response {
  const headers = { ...HEADERS, ETag: script.etag };
  if (unchanged(request.headers.get("if-none-match"), script.etag)) return new Response(null, { status: 304, headers });
  const gzip = /\bgzip\b/.test(request.headers.get("accept-encoding") ?? "");
  return new Response((gzip ? script.gzip : script.body) as Uint8Array<ArrayBuffer>, {
    headers: gzip ? { ...headers, "Content-Encoding": "gzip" } : headers,
  });
}

export function siteScriptRoutes(scripts: SiteScript[]): Route[] {
  return scripts.map((script) =>
    route({ method: "GET", path: script.path, access: "none", handle: ({ request }) => answer(script, request) }),
  );
}
