// Who may do what. A scope is what a request proved: a full-access token, or a public token
// limited to one project (and optionally one channel).
import { Forbidden } from "../errors.ts";
import type { Scope } from "../model/access.ts";


/** Events: a public token may send only into its project, and its channel when it has one. */
export function assertCanSendEvent(scope: Scope, project: string, channel: string): void {
  if (scope.kind === "full") return;
  assertOwnProject(scope, project);
  if (scope.channel !== null && scope.channel !== channel) {
    throw new Forbidden(`This public token may only send events to channel "${scope.channel}" of project "${scope.project}", not "${channel}".`);
  }
}

/**
 * An event that pushes to every device needs a full token, or a public token allowed to notify:
 * public tokens ship inside web pages, where any visitor can read them.
 */
export function assertCanNotify(scope: Scope): void {
  if (scope.kind === "full" || scope.mayNotify) return;
  throw new Forbidden(`This public token may not send notifications (notify: true). Send the event without notify, or allow the token to notify in Settings → API.`);
}

/** Metrics and user traits belong to no channel: a channel-limited public token may not set them. */
export function assertCanWriteProject(scope: Scope, project: string, what: string): void {
  if (scope.kind === "full") return;
  assertOwnProject(scope, project);
  if (scope.channel !== null) {
    throw new Forbidden(`This public token is limited to channel "${scope.channel}" and may only send events; ${what} need a token for the whole project.`);
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
