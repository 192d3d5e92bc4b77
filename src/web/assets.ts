// Static assets, embedded in the binary (imported as files, or the dashboard's script as its text)
// and served under content-hashed URLs, cached forever. htmx, Alpine (its CSP build) and uPlot come
// from node_modules; nothing from a CDN.
import { type Route, route } from "../http/routes.ts";
import alpineJs from "@alpinejs/csp/dist/cdn.min.js" with { type: "file" };
import htmxJs from "htmx.org/dist/htmx.min.js" with { type: "file" };
import uplotCss from "uplot/dist/uPlot.min.css" with { type: "file" };
import uplotJs from "uplot/dist/uPlot.iife.min.js" with { type: "file" };
import appCss from "../../public/app.css" with { type: "file" };
import appleTouchIcon from "../../public/apple-touch-icon.png" with { type: "file" };
import icon192 from "../../public/icon-192.png" with { type: "file" };
import icon512 from "../../public/icon-512.png" with { type: "file" };
import iconMaskable from "../../public/icon-maskable-512.png" with { type: "file" };
import iconSvg from "../../public/icon.svg" with { type: "file" };
import serviceWorker from "../../public/sw.js" with { type: "file" };
import { appBundle } from "./app-bundle.ts" with { type: "macro" };
import { loadSiteScripts, siteScriptRoutes } from "./site-scripts.ts";

/** The dashboard's script, bundled from src/browser/ when this module is transpiled (app-bundle.ts). */
const appJs = new Blob([appBundle()], { type: "text/javascript;charset=utf-8" });

const SOURCES = {
  "htmx.js": htmxJs,
  "alpine.js": alpineJs,
  "uplot.js": uplotJs,
  "uplot.css": uplotCss,
  "app.css": appCss,
  "app.js": appJs,
  "icon.svg": iconSvg,
} as const;

export type AssetName = keyof typeof SOURCES;

// Files that must keep their name: the service worker (its URL is its identity and scope) and the
// icons the manifest and iOS ask for. Cached briefly, not forever.
const FIXED: Record<string, string> = {
  "/sw.js": serviceWorker,
  "/icon-192.png": icon192,
  "/icon-512.png": icon512,
  "/icon-maskable-512.png": iconMaskable,
  "/apple-touch-icon.png": appleTouchIcon,
};

type Asset = { url: string; type: string; body: Uint8Array; gzip: Uint8Array };

export class Assets {
  private constructor(
    private readonly byName: Map<string, Asset>,
    private readonly byUrl: Map<string, Asset>,
    /** The scripts other sites load (site-scripts.ts). */
    readonly siteScripts: Awaited<ReturnType<typeof loadSiteScripts>>,
  ) {}

  static async load(): Promise<Assets> {
    const byName = new Map<string, Asset>();
    const byUrl = new Map<string, Asset>();
    for (const [name, source] of Object.entries(SOURCES)) {
      const file = typeof source === "string" ? Bun.file(source) : source;
      const body = await file.bytes();
      const hash = new Bun.CryptoHasher("sha256").update(body).digest("hex").slice(0, 12);
      const dot = name.lastIndexOf(".");
      const url = `/assets/${name.slice(0, dot)}.${hash}${name.slice(dot)}`;
      const asset = { url, type: file.type, body, gzip: Bun.gzipSync(body) };
      byName.set(name, asset);
      byUrl.set(url, asset);
    }
    return new Assets(byName, byUrl, await loadSiteScripts());
  }

  url(name: AssetName): string {
    return this.byName.get(name)!.url;
  }

  response(url: string, acceptEncoding: string | null): Response | null {
    const asset = this.byUrl.get(url);
    if (!asset) return null;
    const gzip = /\bgzip\b/.test(acceptEncoding ?? "");
    return new Response((gzip ? asset.gzip : asset.body) as Uint8Array<ArrayBuffer>, {
      headers: {
        "Content-Type": asset.type,
        "Cache-Control": "public, max-age=31536000, immutable",
        Vary: "Accept-Encoding",
        ...(gzip ? { "Content-Encoding": "gzip" } : {}),
      },
    });
  }
}

function manifest(assets: Assets): string {
  return JSON.stringify({
    name: "Signalboard",
    short_name: "Signalboard",
    description: "Events and metrics, live.",
    start_url: "/",
    scope: "/",
    display: "standalone",
    background_color: "#f6f7f9",
    theme_color: "#4f46e5",
    icons: [
      { src: "/icon-192.png", sizes: "192x192", type: "image/png" },
      { src: "/icon-512.png", sizes: "512x512", type: "image/png" },
      { src: "/icon-maskable-512.png", sizes: "512x512", type: "image/png", purpose: "maskable" },
      { src: assets.url("icon.svg"), sizes: "any", type: "image/svg+xml" },
    ],
  });
}

export function assetRoutes(assets: Assets): Route[] {
  const routes = [
    ...siteScriptRoutes(assets.siteScripts),
    route({
      method: "GET",
      path: "/assets/:file",
      access: "none",
      handle({ request }) {
        const response = assets.response(new URL(request.url).pathname, request.headers.get("accept-encoding"));
        return response ?? new Response("Not found", { status: 404, headers: { "Content-Type": "text/plain" } });
      },
    }),
    route({
      method: "GET",
      path: "/manifest.webmanifest",
      access: "none",
      handle: () =>
        new Response(manifest(assets), {
          headers: { "Content-Type": "application/manifest+json", "Cache-Control": "public, max-age=3600" },
        }),
    }),
  ];
  for (const [path, file] of Object.entries(FIXED)) {
    const isWorker = path === "/sw.js";
    const headers = {
      "Content-Type": Bun.file(file).type,
      "Cache-Control": isWorker ? "no-cache" : "public, max-age=86400",
      ...(isWorker ? { "Service-Worker-Allowed": "/" } : {}),
    };
    routes.push(
      route({ method: "GET", path, access: "none", handle: () => new Response(Bun.file(file), { headers }) }),
    );
  }
  return routes;
}
