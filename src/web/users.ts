// The users page of a project: the list, its search, and its next pages (a fragment for htmx).
import type { Route } from "../http/routes.ts";
import { route } from "../http/routes.ts";
import type { Services } from "../services.ts";
import { isHtmx, type Kit } from "./kit.ts";
import { seg, query } from "./html.ts";
import { userRows, usersPage } from "./views/users.ts";

export function userListRoutes({ feed, config }: Services, kit: Kit): Route[] {
  return [
    route({
      method: "GET",
      path: "/p/:project/users",
      access: "viewer",
      async handle({ request, params, session }) {
        const project = await kit.project(params.project!);
        const url = new URL(request.url);
        const q = (url.searchParams.get("q") ?? "").trim();
        const cursor = url.searchParams.get("cursor") ?? undefined;
        const page = await feed.users(project, { q, cursor });
        const vary = { Vary: "HX-Request" };
        if (isHtmx(request) && cursor) {
          const next = page.nextCursor ? `/p/${seg(project.name)}/users${query({ q, cursor: page.nextCursor })}` : null;
          return kit.fragment(userRows(project.name, page.users, next), 200, vary);
        }
        const body = usersPage(project, { q, users: page.users, nextCursor: page.nextCursor, baseUrl: config.baseUrl });
        return kit.page(session, body, { title: `Users · ${project.name}`, nav: { project }, headers: vary });
      },
    }),
  ];
}
