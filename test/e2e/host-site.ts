// A site on another origin that embeds Signalboard's scripts, as a customer's site would: a second
// tiny server (another port, and reached as "localhost" while Signalboard is "127.0.0.1", so it is
// another site too) whose pages carry a strict Content-Security-Policy that allows Signalboard's
// origin in script-src and connect-src and nothing inline.
import type { Server } from "bun";

export type HostSite = {
  /** The site's origin, http://localhost:PORT. */
  origin: string;
  /** Serves `body` at `path` (HTML pages get the strict CSP, unless `csp` says otherwise). */
  set: (path: string, body: string, options?: { type?: string; csp?: string }) => void;
  /** The paths the site was asked for, in order. */
  requests: string[];
  close: () => Promise<void>;
};

/** The policy a strict site sends: its own scripts and Signalboard's, requests to Signalboard only, no inline anything. */
export function strictCsp(signalboard: string): string {
  return [
    "default-src 'none'",
    `script-src 'self' ${signalboard}`,
    `connect-src ${signalboard}`,
    "style-src 'self'",
    "img-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

export function startHostSite(signalboard: string): HostSite {
  const files = new Map<string, { body: string; type: string; csp: string | null }>();
  const requests: string[] = [];
  const server: Server<unknown> = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(request) {
      const url = new URL(request.url);
      requests.push(url.pathname + url.search);
      // A single-page app answers every path under /app/ with its one page.
      const file = files.get(url.pathname) ?? (url.pathname.startsWith("/app/") ? files.get("/app/") : undefined);
      if (!file) return new Response("Not found", { status: 404 });
      const headers: Record<string, string> = { "Content-Type": file.type, "Cache-Control": "no-store" };
      if (file.csp) headers["Content-Security-Policy"] = file.csp;
      return new Response(file.body, { headers });
    },
  });
  return {
    origin: `http://localhost:${server.port}`,
    set(path, body, options = {}) {
      const type =
        options.type ??
        (path.endsWith(".js")
          ? "text/javascript; charset=utf-8"
          : path.endsWith(".css")
            ? "text/css"
            : "text/html; charset=utf-8");
      files.set(path, {
        body,
        type,
        csp: type.startsWith("text/html") ? (options.csp ?? strictCsp(signalboard)) : null,
      });
    },
    requests,
    close: () => server.stop(true),
  };
}

/** A page of the host site: `head` and `body` markup around the site's own stylesheet. */
export function html(head: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Host site</title><link rel="stylesheet" href="/site.css">${head}</head><body>${body}</body></html>`;
}

/**
 * Signalboard behind a slow network: a proxy on another port that holds each POST for `delayMs`
 * before passing it on, and drops it if the browser gave up on it meanwhile (as a request cut off
 * mid-way never arrives). A page that leaves while its request waits here loses it, unless the
 * request was made to outlive the page (keepalive).
 */
export function startSlowProxy(
  target: string,
  delayMs: number,
): { origin: string; dropped: string[]; close: () => Promise<void> } {
  const dropped: string[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const url = new URL(request.url);
      const body =
        request.method === "GET" || request.method === "HEAD" || request.method === "OPTIONS"
          ? undefined
          : await request.arrayBuffer();
      if (body !== undefined) await Bun.sleep(delayMs);
      if (request.signal.aborted) {
        dropped.push(`${request.method} ${url.pathname}`);
        return new Response(null, { status: 499 });
      }
      const headers = new Headers(request.headers);
      headers.delete("host");
      const answer = await fetch(target + url.pathname + url.search, {
        method: request.method,
        headers,
        body,
        decompress: false,
      });
      return new Response(answer.body, { status: answer.status, headers: answer.headers });
    },
  });
  return { origin: `http://127.0.0.1:${server.port}`, dropped, close: () => server.stop(true) };
}
