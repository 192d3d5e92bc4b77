// Dashboard routes for a project's checks: the page (kept current over the page's live stream), a
// row or the list as fragments for it, a check's ping log, and adding, pausing, resuming and
// deleting checks and making new ping and badge keys (members and above; viewers see without controls).
import { z } from "zod";
import { hasRole } from "../domain/access.ts";
import { parseSeconds } from "../domain/units.ts";
import { NotFound, ValidationError } from "../errors.ts";
import { href } from "../http/href.ts";
import { type Route, route } from "../http/routes.ts";
import type { Check } from "../model/check.ts";
import type { Project } from "../model/project.ts";
import type { Session } from "../model/user.ts";
import type { Services } from "../services.ts";
import { text } from "./form.ts";
import type { Kit } from "./kit.ts";
import { paths } from "./paths.ts";
import {
  type CheckFormFields,
  checkLogPage,
  checkRow,
  checkRows,
  checksPage,
  type RowContext,
} from "./views/checks.ts";
import { confirmDialog } from "./views/dialogs.ts";

/** Pings a check's log shows. */
const LOG_SIZE = 100;

const FIELDS = ["name", "slug", "schedule", "period", "cron", "tz", "grace", "channel"];

const checkForm = z
  .object(Object.fromEntries(FIELDS.map((name) => [name, text])))
  .transform((f): CheckFormFields => Object.fromEntries(FIELDS.map((name) => [name, (f[name] ?? "").trim()])));

/** The API's fields for what the form says, or the problems by form field. */
function inputOf(f: CheckFormFields): { input: Record<string, unknown>; errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  const seconds = (name: string): number | undefined => {
    if (!f[name]) return undefined;
    try {
      return parseSeconds(f[name]!);
    } catch {
      errors[name] = "use seconds, or a duration such as 90s, 15m, 12h or 1d";
      return undefined;
    }
  };
  const cron = f.schedule === "cron";
  const input = {
    name: f.name,
    slug: f.slug || undefined,
    ...(cron ? { cron: f.cron, tz: f.tz || undefined } : { period: seconds("period") }),
    grace: seconds("grace"),
    channel: f.channel || undefined,
  };
  return { input: JSON.parse(JSON.stringify(input)) as Record<string, unknown>, errors };
}

/** A check's problems by the form's fields. */
function formErrors(error: ValidationError): Record<string, string> {
  const out: Record<string, string> = {};
  for (const i of error.issues) out[i.path.split(".")[0] || "name"] ??= i.message.replace(/^[^:]*: /, "");
  return out;
}

export function checkRoutes(services: Services, kit: Kit): Route[] {
  return [
    listChecks(services, kit),
    checkList(services, kit),
    checkRowOf(services, kit),
    checkLog(services, kit),
    createCheck(services, kit),
    pauseOrResume(services, kit, "pause"),
    pauseOrResume(services, kit, "resume"),
    confirmDeleteCheck(services, kit),
    deleteCheck(services, kit),
    newKey(services, kit, "ping"),
    newKey(services, kit, "badge"),
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
    Promise.all(list.map((c) => checks.urls(c))),
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
      if (Object.keys(errors).length) return page(services, kit, session, project, { fields, errors }, 422);
      try {
        await services.checks.create(
          { project: project.name, ...input } as Parameters<Services["checks"]["create"]>[0],
          actor,
        );
      } catch (error) {
        if (!(error instanceof ValidationError)) throw error;
        return page(services, kit, session, project, { fields, errors: formErrors(error) }, 422);
      }
      return kit.redirect(request, href(paths.checks, { project: project.name }));
    },
  });

const pauseOrResume = (services: Services, kit: Kit, action: "pause" | "resume") =>
  route({
    method: "POST",
    path: action === "pause" ? paths.checkPause : paths.checkResume,
    access: "member",
    needs: "project",
    async handle({ request, project, params, actor }) {
      const check = await checkOf(services, project, params.id);
      await services.checks.update(check.id, { paused: action === "pause" }, actor);
      return kit.redirect(request, href(paths.checks, { project: project.name }));
    },
  });

const confirmDeleteCheck = (services: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.checkDelete,
    access: "member",
    needs: "project",
    async handle({ project, params }) {
      const check = await checkOf(services, project, params.id);
      return kit.fragment(
        confirmDialog({
          title: `Delete “${check.name}”?`,
          body: "Its ping URLs answer 404 from now on; its past pings stay in their channel.",
          action: href(paths.checkDelete, { project: project.name, id: check.id }),
          confirm: "Delete",
          danger: true,
        }),
      );
    },
  });

const deleteCheck = (services: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.checkDelete,
    access: "member",
    needs: "project",
    async handle({ request, project, params, actor }) {
      const check = await checkOf(services, project, params.id);
      await services.checks.remove(check.id, actor);
      return kit.redirect(request, href(paths.checks, { project: project.name }));
    },
  });

/** A new ping key (URLs with the old one answer 404) or badge key (badges with the old one too). */
const newKey = (services: Services, kit: Kit, which: "ping" | "badge") =>
  route({
    method: "POST",
    path: which === "ping" ? paths.checkPingKey : paths.checkBadgeKey,
    access: "member",
    needs: "project",
    async handle({ request, project, actor }) {
      if (which === "ping") await services.checks.regeneratePingKey(project.name, actor);
      else await services.checks.badges.regenerateBadgeKey(project.name, actor);
      return kit.redirect(request, href(paths.checks, { project: project.name }));
    },
  });
