// What every dashboard route needs: a page with its navigation, fragments, and redirects that also
// work for htmx requests.
import { visibleTo } from "../domain/access.ts";
import { PAGE_HEADERS } from "../http/security.ts";
import type { Session } from "../model/user.ts";
import type { Services } from "../services.ts";
import type { Assets } from "./assets.ts";
import type { Html } from "./html.ts";
import { type Nav, page } from "./views/layout.ts";

export type Kit = ReturnType<typeof webKit>;

export const isHtmx = (request: Request) => request.headers.get("hx-request") === "true";

export function webKit({ projects }: Services, assets: Assets) {
  /** The sidebar: the projects the user may see (someone limited to some sees only those). */
  async function navFor(session: Session, extra: Partial<Nav>): Promise<Nav> {
    const [list, channels] = await Promise.all([
      projects.list(),
      extra.project ? projects.channels(extra.project.name) : undefined,
    ]);
    return { projects: visibleTo(session.user, list, (p) => p.name), channels, ...extra };
  }

  return {
    assets,

    async page(
      session: Session | null,
      body: Html,
      opts: { title: string; nav?: Partial<Nav>; status?: number; headers?: Record<string, string>; charts?: boolean },
    ): Promise<Response> {
      const nav = session ? await navFor(session, opts.nav ?? {}) : undefined;
      const markup = page({ assets, session, nav }, { title: opts.title, body, charts: opts.charts });
      return new Response(markup.value, { status: opts.status ?? 200, headers: { ...PAGE_HEADERS, ...opts.headers } });
    },

    fragment(body: Html | string, status = 200, headers: Record<string, string> = {}): Response {
      return new Response(String(body), { status, headers: { ...PAGE_HEADERS, ...headers } });
    },

    /** 303 for a browser, HX-Redirect for htmx (which would otherwise swap the target page in). */
    redirect(request: Request, location: string, headers: Record<string, string> = {}): Response {
      if (isHtmx(request))
        return new Response(null, { status: 200, headers: { ...PAGE_HEADERS, ...headers, "HX-Redirect": location } });
      return new Response(null, { status: 303, headers: { ...PAGE_HEADERS, ...headers, Location: location } });
    },
  };
}
