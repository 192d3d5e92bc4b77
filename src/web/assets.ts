// Static assets, embedded in the binary (imported as files) and served under content-hashed URLs,
// cached forever. htmx, Alpine (its CSP build) and uPlot come from node_modules; nothing from a CDN.
import { Elysia } from "elysia";
import alpineJs from "@alpinejs/csp/dist/cdn.min.js" with { type: "file" };
import htmxJs from "htmx.org/dist/htmx.min.js" with { type: "file" };
import uplotCss from "uplot/dist/uPlot.min.css" with { type: "file" };
import uplotJs from "uplot/dist/uPlot.iife.min.js" with { type: "file" };
import appCss from "../../public/app.css" with { type: "file" };
import appJs from "../../public/app.js" with { type: "file" };
import iconSvg from "../../public/icon.svg" with { type: "file" };

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

type Asset = { url: string; type: string; body: Uint8Array; gzip: Uint8Array };

export class Assets {
  private constructor(private readonly byName: Map<string, Asset>, private readonly byUrl: Map<string, Asset>) {}

  static async load(): Promise<Assets> {
    const byName = new Map<string, Asset>();
    const byUrl = new Map<string, Asset>();
    for (const [name, path] of Object.entries(SOURCES)) {
      const file = Bun.file(path);
      const body = await file.bytes();
      const hash = new Bun.CryptoHasher("sha256").update(body).digest("hex").slice(0, 12);
      const dot = name.lastIndexOf(".");
      const url = `/assets/${name.slice(0, dot)}.${hash}${name.slice(dot)}`;
      const asset = { url, type: file.type, body, gzip: Bun.gzipSync(body) };
      byName.set(name, asset);
      byUrl.set(url, asset);
    }
    return new Assets(byName, byUrl);
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

export function assetRoutes(assets: Assets) {
  return new Elysia({ name: "web.assets" }).get("/assets/:file", ({ request }) => {
    const response = assets.response(new URL(request.url).pathname, request.headers.get("accept-encoding"));
    return response ?? new Response("Not found", { status: 404, headers: { "Content-Type": "text/plain" } });
  });
}
