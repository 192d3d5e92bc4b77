// The users page of a project: the list, its search, and its next pages (a fragment for htmx).
import { z } from "zod";
import { href } from "../http/href.ts";
import { type Route, route } from "../http/routes.ts";
import type { Services } from "../services.ts";
import { param } from "./form.ts";
import { isHtmx, type Kit } from "./kit.ts";
import { paths } from "./paths.ts";
import { userRows, usersPage } from "./views/users.ts";

export function userListRoutes({ feed, config }: Services, kit: Kit): Route[] {
  return [
    route({
      method: "GET",
      path: paths.users,
      access: "viewer",
      needs: "project",
      query: z.object({ q: param.transform((q) => (q ?? "").trim()), cursor: param }),
      async handle({ request, project, query: { q, cursor }, session }) {
        const page = await feed.users(project, { q, cursor });
        const vary = { Vary: "HX-Request" };
        if (isHtmx(request) && cursor) {
          const next = page.nextCursor
            ? href(paths.users, { project: project.name }, { q, cursor: page.nextCursor })
            : null;
          return kit.fragment(userRows(project.name, page.users, next), 200, vary);
        }
        const body = usersPage(project, { q, users: page.users, nextCursor: page.nextCursor, baseUrl: config.baseUrl });
        return kit.page(session, body, { title: `Users · ${project.name}`, nav: { project }, headers: vary });
      },
    }),
  ];
}
