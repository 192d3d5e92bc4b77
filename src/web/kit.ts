// What every dashboard route needs: the signed-in session, a page with its navigation, fragments,
// and redirects that also work for htmx requests.
import type { Deps } from "../app.ts";
import { PAGE_HEADERS } from "../http/security.ts";
import type { Assets } from "./assets.ts";
import type { Html } from "./html.ts";
import { type Nav, page } from "./views/layout.ts";
import type { Project } from "../model/project.ts";
import type { Session } from "../model/user.ts";

export type Kit = ReturnType<typeof webKit>;

export const isHtmx = (request: Request) => request.headers.get("hx-request") === "true";

export function webKit(deps: Deps, assets: Assets) {
  function navFor(extra: Partial<Nav>): Nav {
    const projects = deps.projects.list();
    const channels = extra.project ? deps.store.projects.listChannels(extra.project.id) : undefined;
    return { projects, channels, ...extra };
  }

  return {
    assets,

    page(session: Session | null, body: Html, opts: { title: string; nav?: Partial<Nav>; status?: number; headers?: Record<string, string>; charts?: boolean }): Response {
      const nav = session ? navFor(opts.nav ?? {}) : undefined;
      const markup = page({ assets, session, nav }, { title: opts.title, body, charts: opts.charts });
      return new Response(markup.value, { status: opts.status ?? 200, headers: { ...PAGE_HEADERS, ...opts.headers } });
    },

    fragment(body: Html | string, status = 200, headers: Record<string, string> = {}): Response {
      return new Response(String(body), { status, headers: { ...PAGE_HEADERS, ...headers } });
    },

    /** 303 for a browser, HX-Redirect for htmx (which would otherwise swap the target page in). */
    redirect(request: Request, location: string, headers: Record<string, string> = {}): Response {
      if (isHtmx(request)) return new Response(null, { status: 200, headers: { ...PAGE_HEADERS, ...headers, "HX-Redirect": location } });
      return new Response(null, { status: 303, headers: { ...PAGE_HEADERS, ...headers, Location: location } });
    },

    project(name: string): Project {
      return deps.projects.requireProject(name);
    },
  };
}
