// Maintenance windows: when a project's alert rules record their changes of state but notify
// nobody (quiet.ts decides). A window is one-off (starts_at, ends_at: Unix seconds) or comes back
// when a cron schedule says, in a time zone, for a length (seconds). Checked here with the API's
// names for things, each problem a 400 naming its field.
import { z } from "zod";
import { type Clock, systemClock } from "../clock.ts";
import { type FieldIssue, NotFound, ValidationError } from "../errors.ts";
import { type Actor, COMMAND_LINE } from "../model/audit.ts";
import type { Maintenance, MaintenanceSchedule } from "../model/maintenance.ts";
import type { Store } from "../store/store.ts";
import { cronProblem } from "./alert-kinds/absence.ts";
import { at, issue, seconds } from "./alert-kinds/kind.ts";
import { namedProject } from "./alerts.ts";
import { audited } from "./audit.ts";
import { zoneName } from "./calendar.ts";
import * as rule from "./input-fields.ts";
import { inWindow, occurrence } from "./quiet.ts";
import { formatDuration } from "./units.ts";
import { requireProject } from "./projects.ts";
import { validate } from "./validation.ts";

const unixSeconds = (what: string) =>
  z
    .number({ error: "must be Unix seconds" })
    .superRefine((s, ctx) => {
      // A window may be planned far ahead, so only the shape of the time is checked, not how near it is.
      const problem = rule.timestampProblem(s, Number.POSITIVE_INFINITY);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    .meta({ description: what });

export const maintenanceInput = z
  .object({
    project: rule.projectName,
    name: rule.text(100).optional().meta({ description: "What it is for (shown on the Alerts page)." }),
    starts_at: unixSeconds("One-off: when it starts (Unix seconds).").optional(),
    ends_at: unixSeconds("One-off: when it ends (Unix seconds), after starts_at.").optional(),
    cron: rule
      .text(100)
      .optional()
      .meta({ description: 'Recurring: when it starts, as a cron expression ("0 3 * * *"), instead of starts_at.' }),
    tz: rule.text(64).optional().meta({ description: "Recurring: the cron schedule's time zone (IANA; default UTC)." }),
    length: seconds("Recurring: how long each lasts (seconds).").optional(),
  })
  .strict();

export type MaintenanceInput = z.input<typeof maintenanceInput>;

/** The schedule the fields describe, or every problem with them (each naming its field). */
function scheduleOf(f: z.output<typeof maintenanceInput>): MaintenanceSchedule {
  const issues: FieldIssue[] = [];
  const once = f.starts_at !== undefined || f.ends_at !== undefined;
  const recurring = f.cron !== undefined || f.length !== undefined || f.tz !== undefined;
  if (once && recurring) issues.push(issue("cron", "give starts_at and ends_at, or cron and length, not both"));
  else if (!once && !recurring)
    issues.push(issue("starts_at", "a window needs starts_at and ends_at (one-off), or cron and length (recurring)"));
  else if (once) {
    if (f.starts_at === undefined) issues.push(issue("starts_at", "a one-off window needs when it starts"));
    if (f.ends_at === undefined) issues.push(issue("ends_at", "a one-off window needs when it ends"));
    if (f.starts_at !== undefined && f.ends_at !== undefined && f.ends_at <= f.starts_at)
      issues.push(issue("ends_at", "must be after starts_at"));
  } else {
    if (f.cron === undefined) issues.push(issue("cron", "a recurring window needs a cron schedule of when it starts"));
    if (f.length === undefined) issues.push(issue("length", "a recurring window needs how long it lasts (seconds)"));
    const tz = zoneName(f.tz ?? "UTC");
    if (!tz)
      issues.push(issue("tz", `${JSON.stringify(f.tz)} is not a time zone; use an IANA name such as Europe/Berlin`));
    const problem = f.cron !== undefined && tz ? cronProblem(f.cron, tz) : null;
    if (problem) issues.push(issue("cron", problem));
  }
  if (issues.length) throw new ValidationError(issues, "body");
  if (once) return { kind: "once", startsAt: Math.round(f.starts_at! * 1000), endsAt: Math.round(f.ends_at! * 1000) };
  return { kind: "cron", cron: f.cron!, tz: zoneName(f.tz ?? "UTC")!, length: Math.round(f.length! * 1000) };
}

/** Where a window stands at `now`: inside it, and its current or next occurrence (null: none to come). */
export function standing(
  w: Maintenance,
  now: number,
): { active: boolean; next: { start: number; end: number } | null } {
  return { active: inWindow(w, now), next: occurrence(w, now) };
}

/** `clock`: the time a window is made at (the system's unless given). */
export function maintenanceService(store: Store, { clock = systemClock }: { clock?: Clock } = {}) {
  const projectOf = (name: string) => requireProject(store, name);

  return {
    now: () => clock.now(),

    async get(id: number): Promise<Maintenance> {
      const found = await store.maintenance.find(id);
      if (!found) throw new NotFound(`Maintenance window ${id} does not exist.`);
      return found;
    },

    /** The name of the project a window belongs to. */
    async projectName(w: Maintenance): Promise<string> {
      const project = await store.projects.findById(w.projectId);
      if (!project) throw new NotFound(`Maintenance window ${w.id} does not exist.`);
      return project.name;
    },

    async list(projectName: string): Promise<Maintenance[]> {
      return store.maintenance.list((await projectOf(projectName)).id);
    },

    async create(input: MaintenanceInput, actor: Actor = COMMAND_LINE, now = clock.now()): Promise<Maintenance> {
      const f = validate(maintenanceInput, input);
      const schedule = scheduleOf(f);
      const project = await namedProject(store, f.project);
      return audited(
        store,
        actor,
        async (tx, note) => {
          const made = await tx.maintenance.create({ projectId: project.id, name: f.name ?? "", schedule }, now);
          note("maintenance.created", subject(made, project.name), describeSchedule(made));
          return made;
        },
        now,
      );
    },

    async remove(id: number, actor: Actor = COMMAND_LINE): Promise<void> {
      const w = await this.get(id);
      const project = await this.projectName(w);
      const removed = await audited(store, actor, async (tx, note) => {
        if (!(await tx.maintenance.delete(id))) return false;
        note("maintenance.deleted", subject(w, project));
        return true;
      });
      if (!removed) throw new NotFound(`Maintenance window ${id} does not exist.`);
    },
  };
}

/** When a window is, in words: "2026-11-29 03:00:00 UTC to 2026-11-29 05:00:00 UTC", or "“0 3 * * *” (Europe/Berlin) for 1h". */
export function describeSchedule(w: Maintenance): string {
  const s = w.schedule;
  return s.kind === "once"
    ? `${at(s.startsAt)} to ${at(s.endsAt)}`
    : `“${s.cron}” (${s.tz}) for ${formatDuration(s.length)}`;
}

const subject = (w: Maintenance, project: string) =>
  `maintenance window ${w.name ? `“${w.name}” ` : ""}(${w.id}) of ${project}`;
