// Dashboard routes for a project's checks: the page (kept current over the page's live stream), a
// row or the list as fragments for it, a check's ping log, and adding, pausing, resuming and
// deleting checks and making new ping and badge keys (members and above; viewers see without controls).
import { z } from "zod";
import { hasRole } from "../domain/access.ts";
import { type FieldIssue, NotFound, ValidationError } from "../errors.ts";
import { href } from "../http/href.ts";
import { type Route, route } from "../http/routes.ts";
import type { Actor } from "../model/audit.ts";
import type { Check } from "../model/check.ts";
import type { Project } from "../model/project.ts";
import type { Session } from "../model/user.ts";
import type { Services } from "../services.ts";
import { durationField, text } from "./form.ts";
import type { Kit } from "./kit.ts";
import { paths } from "./paths.ts";
import {
  type CheckFormFields,
  checkLogPage,
  checkRow,
  checkRows,
  checksPage,
  deleteCheckDialog,
  type RowContext,
} from "./views/checks.ts";

/** Pings a check's log shows. */
const LOG_SIZE = 100;

const FIELDS = ["name", "slug", "schedule", "period", "cron", "tz", "grace", "channel", "notify_after"];

const checkForm = z
  .object(Object.fromEntries(FIELDS.map((name) => [name, text])))
  .transform((f): CheckFormFields => Object.fromEntries(FIELDS.map((name) => [name, (f[name] ?? "").trim()])));

/** The API's fields for what the form says, or the problems by form field. */
function inputOf(f: CheckFormFields): { input: Record<string, unknown>; errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  const seconds = durationField(f, errors);
  const cron = f.schedule === "cron";
  const notifyAfter = f.notify_after ? Number(f.notify_after) : undefined;
  if (notifyAfter !== undefined && !Number.isInteger(notifyAfter))
    errors.notify_after = "must be a whole number of failures";
  const input = {
    name: f.name,
    slug: f.slug || undefined,
    ...(cron ? { cron: f.cron, tz: f.tz || undefined } : { period: seconds("period") }),
    grace: seconds("grace"),
    channel: f.channel || undefined,
    notify_after: notifyAfter,
  };
  return { input: JSON.parse(JSON.stringify(input)) as Record<string, unknown>, errors };
}

/** A check's problems by the form's fields, in the form's order. */
function formErrors(issues: FieldIssue[], first: Record<string, string> = {}): Record<string, string> {
  const found: Record<string, string> = { ...first };
  for (const i of issues) found[i.path.split(".")[0] || "name"] ??= i.message.replace(/^[^:]*: /, "");
  const rank = (field: string) => (FIELDS.includes(field) ? FIELDS.indexOf(field) : FIELDS.length);
  return Object.fromEntries(Object.entries(found).sort(([a], [b]) => rank(a) - rank(b)));
}

export function checkRoutes(services: Services, kit: Kit): Route[] {
  return [
    listChecks(services, kit),
    checkList(services, kit),
    checkRowOf(services, kit),
    checkLog(services, kit),
    createCheck(services, kit),
    confirmDeleteCheck(services, kit),
    ...(Object.keys(ACTIONS) as (keyof typeof ACTIONS)[]).map((name) => action(services, kit, name)),
  ];
}

async function checkOf({ checks }: Services, project: Project, id: string): Promise<Check> {
  const check = /^\d{1,9}$/.test(id) ? await checks.get(Number(id)).catch(() => null) : null;
  if (!check || check.projectId !== project.id)
    throw new NotFound(`Check ${id} does not exist in project "${project.name}".`);
  return check;
}

/** Each row's context for `list`: its URLs, its runs (one read for all of them), the badge key. */
async function rowsOf(
  { checks, config, clock }: Services,
  project: Project,
  session: Session,
  list: Check[],
): Promise<{ rowOf: (c: Check) => RowContext; badgeKey: string }> {
  const [runs, urls, badgeKey] = await Promise.all([
    checks.badges.runs(project, list),
    checks.urlsIn(project.name, list),
    checks.badges.badgeKey(project.name),
  ]);
  const urlOf = new Map(list.map((c, i) => [c.id, urls[i]!]));
  const now = clock.now();
  const rowOf = (c: Check): RowContext => ({
    project,
    urls: urlOf.get(c.id)!,
    runs: runs[c.slug] ?? [],
    badgeKey,
    baseUrl: config.baseUrl,
    csrf: session.csrfToken,
    mayEdit: hasRole(session.user, "member"),
    now,
  });
  return { rowOf, badgeKey };
}

/** The page, with the form's fields and problems when a new check could not be saved. */
async function page(
  services: Services,
  kit: Kit,
  session: Session,
  project: Project,
  form: { fields: CheckFormFields; errors: Record<string, string> } = { fields: {}, errors: {} },
  status = 200,
): Promise<Response> {
  const list = await services.checks.list(project.name);
  const [{ rowOf, badgeKey }, pingKey] = await Promise.all([
    rowsOf(services, project, session, list),
    services.checks.pingKey(project.name),
  ]);
  const body = checksPage(project, {
    checks: list,
    rowOf,
    pingKey,
    badgeKey,
    baseUrl: services.config.baseUrl,
    csrf: session.csrfToken,
    mayEdit: hasRole(session.user, "member"),
    form,
    zones: Intl.supportedValuesOf("timeZone"),
  });
  return kit.page(session, body, { title: `Checks · ${project.name}`, nav: { project }, status });
}

const listChecks = (services: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.checks,
    access: "viewer",
    needs: "project",
    handle: ({ project, session }) => page(services, kit, session, project),
  });

/** The list as a fragment: what the page loads when a check it does not show yet is pinged. */
const checkList = (services: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.checkList,
    access: "viewer",
    needs: "project",
    async handle({ project, session }) {
      const list = await services.checks.list(project.name);
      const { rowOf } = await rowsOf(services, project, session, list);
      return kit.fragment(checkRows(list, rowOf));
    },
  });

/** One check's row as a fragment: what the page loads when a ping of it arrives. */
const checkRowOf = (services: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.checkRow,
    access: "viewer",
    needs: "project",
    async handle({ project, params, session }) {
      const check = await checkOf(services, project, params.id);
      const { rowOf } = await rowsOf(services, project, session, [check]);
      return kit.fragment(checkRow(check, rowOf(check)));
    },
  });

const checkLog = (services: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.check,
    access: "viewer",
    needs: "project",
    async handle({ project, params, session }) {
      const check = await checkOf(services, project, params.id);
      const channels = await services.projects.channels(project.name);
      // A check never pinged has no channel yet, and no pings.
      const pings = channels.some((c) => c.name === check.channel)
        ? (
            await services.feed.listEvents({
              project: project.name,
              channel: check.channel,
              tags: [`check:${check.slug}`],
              limit: LOG_SIZE,
            })
          ).events
        : [];
      return kit.page(session, checkLogPage(project, check, pings, services.clock.now()), {
        title: `${check.name} · Checks · ${project.name}`,
        nav: { project },
      });
    },
  });

const createCheck = (services: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.checks,
    access: "member",
    needs: "project",
    form: checkForm,
    async handle({ request, project, session, body: fields, actor }) {
      const { input, errors } = inputOf(fields);
      // What the form could not read, and beside it every other problem the rest has: all named at once.
      if (Object.keys(errors).length) {
        const all = formErrors(services.checks.problems({ project: project.name, ...input }), errors);
        return page(services, kit, session, project, { fields, errors: all }, 422);
      }
      try {
        await services.checks.create(
          { project: project.name, ...input } as Parameters<Services["checks"]["create"]>[0],
          actor,
        );
      } catch (error) {
        if (!(error instanceof ValidationError)) throw error;
        return page(services, kit, session, project, { fields, errors: formErrors(error.issues) }, 422);
      }
      return kit.redirect(request, href(paths.checks, { project: project.name }));
    },
  });

/** The question before a check is deleted (in #modal); its answer posts to ACTIONS.delete. */
const confirmDeleteCheck = (services: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.checkDelete,
    access: "member",
    needs: "project",
    handle: async ({ project, params }) =>
      kit.fragment(deleteCheckDialog(project, await checkOf(services, project, params.id))),
  });

type At = { project: Project; id: string; actor: Actor };
/** The check a path names; every one of ACTIONS on a check looks it up first. */
const on = (change: (s: Services, c: Check, a: Actor) => Promise<unknown>) => async (s: Services, at: At) =>
  change(s, await checkOf(s, at.project, at.id), at.actor);

/** The changes a member makes from the page, each a POST that goes back to the page. */
const ACTIONS = {
  pause: { path: paths.checkPause, run: on((s, c, a) => s.checks.update(c.id, { paused: true }, a)) },
  resume: { path: paths.checkResume, run: on((s, c, a) => s.checks.update(c.id, { paused: false }, a)) },
  delete: { path: paths.checkDelete, run: on((s, c, a) => s.checks.remove(c.id, a)) },
  // A new ping key: URLs with the old one answer 404. A new badge key: badges with the old one too.
  pingKey: {
    path: paths.checkPingKey,
    run: (s: Services, at: At) => s.checks.regeneratePingKey(at.project.name, at.actor),
  },
  badgeKey: {
    path: paths.checkBadgeKey,
    run: (s: Services, at: At) => s.checks.badges.regenerateBadgeKey(at.project.name, at.actor),
  },
} as const;

const action = (services: Services, kit: Kit, name: keyof typeof ACTIONS) =>
  route({
    method: "POST",
    path: ACTIONS[name].path,
    access: "member",
    needs: "project",
    async handle({ request, project, params, actor }) {
      await ACTIONS[name].run(services, { project, id: "id" in params ? params.id : "", actor });
      return kit.redirect(request, href(paths.checks, { project: project.name }));
    },
  });
