// Dashboard routes for a project's alert rules: the list (kept current while open), the form that
// makes or changes a rule, and pause, resume, test and delete.
import { z } from "zod";
import { ALERT_KIND_MODULES, ALERT_KINDS, kindOf } from "../domain/alert-kinds/index.ts";
import { type AlertInput, KINDS_FIELDS } from "../domain/alerts.ts";
import { hasRole } from "../domain/access.ts";
import { formatDuration } from "../domain/units.ts";
import { NotFound, ValidationError } from "../errors.ts";
import { href } from "../http/href.ts";
import { type Route, route } from "../http/routes.ts";
import type { Alert, AlertKind } from "../model/alert.ts";
import type { Actor } from "../model/audit.ts";
import type { Project } from "../model/project.ts";
import type { Session } from "../model/user.ts";
import type { Services } from "../services.ts";
import { readSearch, tagTerm } from "./filters.ts";
import { durationField, text } from "./form.ts";
import type { Kit } from "./kit.ts";
import { paths } from "./paths.ts";
import { type AlertFormFields, alertFormPage, alertRows, alertsPage } from "./views/alerts.ts";
import { confirmDialog } from "./views/dialogs.ts";
import { maintenanceSection } from "./views/maintenance.ts";

const FIELDS = [
  "name",
  "kind",
  "schedule",
  "channel",
  "event",
  "tags",
  "period",
  "cron",
  "tz",
  "grace",
  "window",
  "metric",
  "compare",
  "limit",
  "repeat",
  "notify_after",
];

/** The form's fields as typed (each one's text, trimmed; "" when absent). */
const alertForm = z
  .object(Object.fromEntries(FIELDS.map((name) => [name, text])))
  .transform((f): AlertFormFields => Object.fromEntries(FIELDS.map((name) => [name, (f[name] ?? "").trim()])));

/** A rule's fields as the form shows them: every field (empty where not of its kind), its kind's filled in. */
function formOfRule(a: Alert): AlertFormFields {
  const s = (ms: number | null) => (ms === null ? "" : formatDuration(ms));
  const empty = Object.fromEntries(FIELDS.map((name) => [name, ""]));
  return {
    ...empty,
    name: a.name,
    kind: a.kind,
    schedule: "period",
    ...(kindOf(a).takes.filter
      ? {
          channel: a.filter.channel ?? "",
          event: a.filter.event ?? "",
          // Written as the search writes a tag (a value with a space in quotes), so it reads back the same.
          tags: Object.entries(a.filter.tags ?? {})
            .map(([k, v]) => tagTerm(k, String(v)))
            .join(" "),
        }
      : {}),
    ...kindOf(a).form.fields(a, s),
    compare: "threshold" in a ? a.threshold.compare : "above",
    limit: "threshold" in a ? String(a.threshold.limit) : "",
    repeat: s(a.repeat),
    notify_after: a.notifyAfter === 1 ? "" : String(a.notifyAfter),
  };
}

/** The API's fields for what the form says (only those of the kind and schedule chosen), or the problems by form field. */
function inputOf(f: AlertFormFields): { input: Record<string, unknown>; errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  const duration = durationField(f, errors);
  const tags: Record<string, string> = {};
  // The search's syntax: key:value, or key:"a value with spaces".
  for (const term of readSearch(f.tags ?? "")) {
    if ("word" in term)
      errors.tags = `“${term.word}” is not key:value (a value with a space goes in double quotes: host:"db 1")`;
    else tags[term.tag[0]] = term.tag[1];
  }
  const kind = ALERT_KINDS.includes(f.kind as AlertKind) ? ALERT_KIND_MODULES[f.kind as AlertKind] : null;
  const limit = f.limit === "" ? undefined : Number(f.limit);
  if (limit !== undefined && !Number.isFinite(limit)) errors.limit = "must be a number";
  const notifyAfter = f.notify_after ? Number(f.notify_after) : undefined;
  if (notifyAfter !== undefined && !Number.isInteger(notifyAfter))
    errors.notify_after = "must be a whole number of rounds";
  const input: Record<string, unknown> = {
    name: f.name,
    kind: f.kind,
    ...(kind?.takes.filter
      ? {
          filter: {
            ...(f.channel ? { channel: f.channel } : {}),
            ...(f.event ? { event: f.event } : {}),
            ...(Object.keys(tags).length ? { tags } : {}),
          },
        }
      : {}),
    ...kind?.form.input(f, duration),
    ...(kind?.takes.threshold && limit !== undefined ? { [f.compare === "below" ? "below" : "above"]: limit } : {}),
    repeat: duration("repeat"),
    notify_after: notifyAfter,
  };
  return { input: JSON.parse(JSON.stringify(input)) as Record<string, unknown>, errors };
}

/** A rule's problems by the form's fields (filter.channel is the channel field, above and below the limit). */
function formErrors(error: ValidationError): Record<string, string> {
  const out: Record<string, string> = {};
  for (const i of error.issues) {
    const path = i.path.replace(/^filter\./, "").split(".")[0]!;
    const name = path === "above" || path === "below" ? "limit" : path || "name";
    out[name] ??= i.message.replace(/^[^:]*: /, "");
  }
  return out;
}

export function alertRoutes(services: Services, kit: Kit): Route[] {
  return [
    listAlerts(services, kit),
    alertList(services, kit),
    newAlert(services, kit),
    createAlert(services, kit),
    editAlert(services, kit),
    saveAlert(services, kit),
    pauseOrResume(services, kit, "pause"),
    pauseOrResume(services, kit, "resume"),
    testAlert(services, kit),
    confirmDeleteAlert(services, kit),
    deleteAlert(services, kit),
  ];
}

async function ruleOf({ alerts }: Services, project: Project, id: string): Promise<Alert> {
  const rule = /^\d{1,9}$/.test(id) ? await alerts.get(Number(id)).catch(() => null) : null;
  if (!rule || rule.projectId !== project.id)
    throw new NotFound(`Alert rule ${id} does not exist in project "${project.name}".`);
  return rule;
}

/** The form of a new rule or of `rule`, with its problems by field. */
async function form(
  { projects, feed }: Services,
  kit: Kit,
  session: Session,
  project: Project,
  fields: AlertFormFields,
  rule?: Alert,
  errors?: Record<string, string>,
  status = 200,
): Promise<Response> {
  const [channels, metrics] = await Promise.all([projects.channels(project.name), feed.listMetrics(project.name)]);
  const body = alertFormPage(project, {
    fields,
    rule,
    errors,
    channels: channels.map((c) => c.name),
    metrics: metrics.map((m) => m.title),
    zones: Intl.supportedValuesOf("timeZone"),
    csrf: session.csrfToken,
  });
  return kit.page(session, body, { title: rule ? `Edit ${rule.name}` : "New alert rule", nav: { project }, status });
}

/** Saves what the form says (a new rule, or changes to `rule`), or shows it again with its problems. */
async function save(
  services: Services,
  kit: Kit,
  { request, session, actor, project, fields }: SaveInput,
  rule?: Alert,
): Promise<Response> {
  const { alerts } = services;
  const { input, errors } = inputOf(fields);
  if (Object.keys(errors).length) return form(services, kit, session, project, fields, rule, errors, 422);
  try {
    if (rule) {
      // Fields the form leaves out of this kind are taken out of the rule.
      const cleared = Object.fromEntries(
        [...KINDS_FIELDS, "repeat", "notify_after"].filter((k) => !(k in input)).map((k) => [k, null]),
      );
      await alerts.update(rule.id, { ...cleared, ...input }, actor);
    } else await alerts.create({ project: project.name, ...input } as AlertInput, actor);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return form(services, kit, session, project, fields, rule, formErrors(error), 422);
  }
  return kit.redirect(request, href(paths.alerts, { project: project.name }));
}

type SaveInput = { request: Request; session: Session; actor: Actor; project: Project; fields: AlertFormFields };

/** The rules' list as a fragment (the list's own refresh, and its answer to pause and resume). */
async function rows({ alerts }: Services, kit: Kit, project: Project, session: Session): Promise<Response> {
  return kit.fragment(
    alertRows(project, await alerts.list(project.name), session.csrfToken, hasRole(session.user, "member")),
  );
}

const listAlerts = ({ alerts, projects, maintenance }: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.alerts,
    access: "viewer",
    needs: "project",
    async handle({ project, session }) {
      const [rules, channels, windows] = await Promise.all([
        alerts.list(project.name),
        projects.channels(project.name),
        maintenance.list(project.name),
      ]);
      const hasNotices = channels.some((c) => c.name === "alerts");
      const mayEdit = hasRole(session.user, "member");
      const quiet = maintenanceSection(project, { windows, now: maintenance.now(), csrf: session.csrfToken, mayEdit });
      return kit.page(session, alertsPage(project, rules, session.csrfToken, mayEdit, hasNotices, quiet), {
        title: `Alerts · ${project.name}`,
        nav: { project },
      });
    },
  });

const alertList = (services: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.alertList,
    access: "viewer",
    needs: "project",
    async handle({ project, session }) {
      return rows(services, kit, project, session);
    },
  });

const newAlert = (services: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.newAlert,
    access: "member",
    needs: "project",
    async handle({ project, session }) {
      return form(services, kit, session, project, { kind: "absence", schedule: "period" });
    },
  });

const createAlert = (services: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.alerts,
    access: "member",
    needs: "project",
    form: alertForm,
    async handle({ request, project, session, body: fields, actor }) {
      return save(services, kit, { request, session, actor, project, fields });
    },
  });

const editAlert = (services: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.alert,
    access: "member",
    needs: "project",
    async handle({ project, params, session }) {
      const rule = await ruleOf(services, project, params.id);
      return form(services, kit, session, project, formOfRule(rule), rule);
    },
  });

const saveAlert = (services: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.alert,
    access: "member",
    needs: "project",
    form: alertForm,
    async handle({ request, project, params, session, body: fields, actor }) {
      const rule = await ruleOf(services, project, params.id);
      return save(services, kit, { request, session, actor, project, fields }, rule);
    },
  });

const pauseOrResume = (services: Services, kit: Kit, action: "pause" | "resume") =>
  route({
    method: "POST",
    path: action === "pause" ? paths.alertPause : paths.alertResume,
    access: "member",
    needs: "project",
    async handle({ project, params, session, actor }) {
      const rule = await ruleOf(services, project, params.id);
      await services.alerts.update(rule.id, { paused: action === "pause" }, actor);
      return rows(services, kit, project, session);
    },
  });

/** A test notice of the rule sent to the alerts channel, and a toast that says so. */
const testAlert = (services: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.alertTest,
    access: "member",
    needs: "project",
    async handle({ project, params }) {
      const rule = await ruleOf(services, project, params.id);
      await services.alerts.runner.test(rule);
      // A header holds ASCII: the rule's name travels as JSON escapes.
      const trigger = JSON.stringify({
        "sb-toast": { text: `Sent a test notice of “${rule.name}” to the alerts channel.` },
      }).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
      return kit.fragment("", 200, { "HX-Trigger": trigger });
    },
  });

const confirmDeleteAlert = (services: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.alertDelete,
    access: "member",
    needs: "project",
    async handle({ project, params }) {
      const rule = await ruleOf(services, project, params.id);
      return kit.fragment(
        confirmDialog({
          title: `Delete “${rule.name}”?`,
          body: "Its past notices stay in the alerts channel.",
          action: href(paths.alertDelete, { project: project.name, id: rule.id }),
          confirm: "Delete",
          danger: true,
        }),
      );
    },
  });

const deleteAlert = (services: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.alertDelete,
    access: "member",
    needs: "project",
    async handle({ request, project, params, actor }) {
      const rule = await ruleOf(services, project, params.id);
      await services.alerts.remove(rule.id, actor);
      return kit.redirect(request, href(paths.alerts, { project: project.name }));
    },
  });
