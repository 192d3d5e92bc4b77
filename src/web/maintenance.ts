// Dashboard routes for a project's maintenance windows, a section of its Alerts page: add one (its
// times typed in a time zone, or a cron schedule and a length) and delete one, each answering the
// section afresh for htmx to swap.
import { z } from "zod";
import { hasRole } from "../domain/access.ts";
import { zoneName, instantOf } from "../domain/calendar.ts";
import type { MaintenanceInput } from "../domain/maintenance.ts";
import { parseSeconds } from "../domain/units.ts";
import { NotFound, ValidationError } from "../errors.ts";
import { type Route, route } from "../http/routes.ts";
import type { Actor } from "../model/audit.ts";
import type { Project } from "../model/project.ts";
import type { Session } from "../model/user.ts";
import type { Services } from "../services.ts";
import { text } from "./form.ts";
import type { Kit } from "./kit.ts";
import { paths } from "./paths.ts";
import { type MaintenanceFormFields, maintenanceSection } from "./views/maintenance.ts";

const FIELDS = ["name", "kind", "start", "end", "cron", "length", "tz"];

const maintenanceForm = z
  .object(Object.fromEntries(FIELDS.map((name) => [name, text])))
  .transform((f): MaintenanceFormFields => Object.fromEntries(FIELDS.map((name) => [name, (f[name] ?? "").trim()])));

/** The API's names of the form's fields, where they differ. */
const FORM_NAME: Record<string, string> = { starts_at: "start", ends_at: "end" };

/** The API's fields for what the form says (only those of the kind chosen), or the problems by form field. */
function maintenanceInputOf(
  project: string,
  f: MaintenanceFormFields,
): { input: MaintenanceInput; errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  const tz = zoneName(f.tz || "UTC");
  if (!tz) errors.tz = `“${f.tz}” is not a time zone; use an IANA name such as Europe/Berlin`;
  /** A datetime-local's "2026-12-01T03:00" as Unix seconds, in the zone given. */
  const moment = (name: string): number | undefined => {
    const m = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})$/.exec(f[name] ?? "");
    if (!f[name]) return undefined;
    if (!m) {
      errors[name] = "use a date and a time, as 2026-12-01 03:00";
      return undefined;
    }
    const wall = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!);
    return tz ? instantOf(wall, tz) / 1000 : undefined;
  };
  let length: number | undefined;
  if (f.kind === "cron" && f.length)
    try {
      length = parseSeconds(f.length);
    } catch {
      errors.length = "use seconds, or a duration such as 90s, 15m, 12h or 1d";
    }
  const input =
    f.kind === "cron"
      ? { project, name: f.name, cron: f.cron || undefined, tz: tz ?? f.tz, length }
      : { project, name: f.name, starts_at: moment("start"), ends_at: moment("end") };
  return { input: JSON.parse(JSON.stringify(input)) as MaintenanceInput, errors };
}

/** A window's problems by the form's fields. */
function formErrors(error: ValidationError): Record<string, string> {
  const out: Record<string, string> = {};
  for (const i of error.issues) {
    const path = i.path.split(".")[0] || "name";
    out[FORM_NAME[path] ?? path] ??= i.message.replace(/^[^:]*: /, "");
  }
  return out;
}

/** The section as it is now, with what the form held and its problems when a save could not be made. */
async function section(
  { maintenance }: Services,
  kit: Kit,
  project: Project,
  session: Session,
  form?: { fields: MaintenanceFormFields; errors: Record<string, string> },
): Promise<Response> {
  const body = maintenanceSection(project, {
    windows: await maintenance.list(project.name),
    now: maintenance.now(),
    csrf: session.csrfToken,
    mayEdit: hasRole(session.user, "member"),
    ...form,
  });
  return kit.fragment(body, form ? 422 : 200);
}

export function maintenanceRoutes(services: Services, kit: Kit): Route[] {
  return [addMaintenance(services, kit), deleteMaintenance(services, kit)];
}

const addMaintenance = (services: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.maintenance,
    access: "member",
    needs: "project",
    form: maintenanceForm,
    async handle({ project, session, body: fields, actor }) {
      return add(services, kit, { project, session, fields, actor });
    },
  });

async function add(
  services: Services,
  kit: Kit,
  {
    project,
    session,
    fields,
    actor,
  }: { project: Project; session: Session; fields: MaintenanceFormFields; actor: Actor },
): Promise<Response> {
  const { input, errors } = maintenanceInputOf(project.name, fields);
  if (Object.keys(errors).length) return section(services, kit, project, session, { fields, errors });
  try {
    await services.maintenance.create(input, actor);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return section(services, kit, project, session, { fields, errors: formErrors(error) });
  }
  return section(services, kit, project, session);
}

const deleteMaintenance = (services: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.maintenanceDelete,
    access: "member",
    needs: "project",
    async handle({ project, params, session, actor }) {
      const id = /^\d{1,9}$/.test(params.id) ? Number(params.id) : null;
      const w = id === null ? null : await services.maintenance.get(id).catch(() => null);
      if (!w || w.projectId !== project.id)
        throw new NotFound(`Maintenance window ${params.id} does not exist in project "${project.name}".`);
      await services.maintenance.remove(w.id, actor);
      return section(services, kit, project, session);
    },
  });
