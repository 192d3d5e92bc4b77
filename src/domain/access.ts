// Who may do what. A scope is what a request proved: a full-access token (every project, or those
// it is limited to), or a public token limited to one project (and optionally one channel). A
// person's reach is their role and, unless they see every project, their projects.
import { Forbidden } from "../errors.ts";
import type { Scope } from "../model/access.ts";
import type { Role, User } from "../model/user.ts";

const RANK: Record<Role, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };

/** Whether the user's role is `least` or above it (owner > admin > member > viewer). */
export function hasRole(user: Pick<User, "role">, least: Role): boolean {
  return RANK[user.role] >= RANK[least];
}

/** Whether a person (or a token) limited to `projects` (null: to none) may see `project`. */
export function reaches(projects: string[] | null | undefined, project: string): boolean {
  return projects === null || projects === undefined || projects.includes(project);
}

/** The items of projects a user may see: all of them, unless they are limited to some. */
export function visibleTo<T>(user: Pick<User, "projects">, items: T[], nameOf: (item: T) => string): T[] {
  const mine = user.projects;
  return mine === null ? items : items.filter((item) => mine.includes(nameOf(item)));
}

/** Whether every project `inner` reaches, `outer` reaches too (null: every project). */
export function within(inner: string[] | null, outer: string[] | null): boolean {
  return outer === null || (inner !== null && inner.every((p) => outer.includes(p)));
}

/**
 * A full-access token limited to some projects reaches only those. The answer is the same whether
 * the project exists or not, so a token learns nothing of the projects beyond it.
 */
export function assertTokenReaches(scope: Scope, project: string | null): void {
  if (scope.kind !== "full" || !scope.projects) return;
  const list = reachList(scope.projects);
  if (project === null) throw new Forbidden(`This token is limited to ${list}: name one of them (project=NAME).`);
  if (!scope.projects.includes(project))
    throw new Forbidden(`This token is limited to ${list}; it cannot reach "${project}".`);
}

const reachList = (projects: string[]) =>
  projects.length
    ? `project${projects.length === 1 ? "" : "s"} ${projects.map((p) => `"${p}"`).join(", ")}`
    : "no project (its projects were deleted)";

/**
 * A metric sent without a project goes to the default project: a token limited to others is told to
 * name one of its own, rather than refused a project the caller never named.
 */
export function assertTokenReachesDefault(scope: Scope, defaultProject: string): void {
  if (scope.kind !== "full" || !scope.projects || scope.projects.includes(defaultProject)) return;
  const first = scope.projects[0];
  throw new Forbidden(
    `This token is limited to ${reachList(scope.projects)}, and a metric sent without a project goes to the default project, "${defaultProject}": name one of them${first ? ` ("project": "${first}")` : ""}.`,
  );
}

/** Events: a public token may send only into its project, and its channel when it has one. */
export function assertCanSendEvent(scope: Scope, project: string, channel: string): void {
  if (scope.kind === "full") {
    assertTokenReaches(scope, project);
    return;
  }
  assertOwnProject(scope, project);
  if (scope.channel !== null && scope.channel !== channel) {
    throw new Forbidden(
      `This public token may only send events to channel "${scope.channel}" of project "${scope.project}", not "${channel}".`,
    );
  }
}

/**
 * An event that pushes to every device needs a full token, or a public token allowed to notify:
 * public tokens ship inside web pages, where any visitor can read them.
 */
export function assertCanNotify(scope: Scope): void {
  if (scope.kind === "full" || scope.mayNotify) return;
  throw new Forbidden(
    `This public token may not send notifications (notify: true). Send the event without notify, or allow the token to notify in Settings → API.`,
  );
}

/** Metrics and user traits belong to no channel: a channel-limited public token may not set them. */
export function assertCanWriteProject(scope: Scope, project: string, what: string): void {
  if (scope.kind === "full") {
    assertTokenReaches(scope, project);
    return;
  }
  assertOwnProject(scope, project);
  if (scope.channel !== null) {
    throw new Forbidden(
      `This public token is limited to channel "${scope.channel}" and may only send events; ${what} need a token for the whole project.`,
    );
  }
}

export function assertCanRead(scope: Scope): void {
  if (scope.kind === "full") return;
  throw new Forbidden("Public tokens can only send events and metrics; reading needs a full-access token.");
}

function assertOwnProject(scope: Extract<Scope, { kind: "public" }>, project: string): void {
  if (scope.project !== project) {
    throw new Forbidden(`This public token may only send to project "${scope.project}", not "${project}".`);
  }
}
