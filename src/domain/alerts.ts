// Alert rules: what a project expects of its events and metrics, of the kinds alert-kinds/ holds
// (absence, count, metric). Rules are checked here when made or changed, with the API's names for
// things (seconds, a 400 naming the field); alert-runner.ts watches them.
import { z } from "zod";
import { type Clock, systemClock } from "../clock.ts";
import { type FieldIssue, NotFound, ValidationError } from "../errors.ts";
import type { Alert, AlertChanges, AlertSpec } from "../model/alert.ts";
import type { AlertMarkWrite } from "../model/alert-row.ts";
import { type Actor, COMMAND_LINE } from "../model/audit.ts";
import type { Project } from "../model/project.ts";
import type { Store } from "../store/store.ts";
import { ALERT_KIND_MODULES, ALERT_KINDS, KIND_FIELDS, kindOf } from "./alert-kinds/index.ts";
import { type AlertFields, issue, ms, seconds, thresholdOf } from "./alert-kinds/kind.ts";
import { audited } from "./audit.ts";
import * as rule from "./input-fields.ts";
import { validate } from "./validation.ts";

export { MIN_SECONDS } from "./alert-kinds/kind.ts";

const limit = (what: string) =>
  z
    .number({ error: "must be a number" })
    .refine(Number.isFinite, "must be a finite number")
    .meta({ description: what });

export const alertFilter = z
  .object({
    channel: rule.channelName.optional(),
    event: rule.eventName.optional(),
    tags: z
      .record(
        z.string().regex(/^[a-z0-9-]{1,64}$/, "tag keys are 1-64 lowercase letters, digits or dashes"),
        rule.text(200),
        { error: "must be an object of tag keys and values" },
      )
      .optional(),
  })
  .strict()
  .meta({ description: "Which events: a channel, an event name and tags, each optional (all must match)." });

/** The fields of every kind, in the kinds' order: what a change of kind takes out unless it sends them again. */
export const KINDS_FIELDS = [...Object.keys(KIND_FIELDS), "above", "below"];

/** What a rule is, as the API sends it (durations in seconds): every rule's fields and each kind's. */
export const alertFields = {
  name: rule.text(100, { nonEmpty: true }),
  kind: z.enum(ALERT_KINDS, {
    error: `must be ${ALERT_KINDS.slice(0, -1).join(", ")} or ${ALERT_KINDS[ALERT_KINDS.length - 1]}`,
  }),
  filter: alertFilter.optional(),
  ...KIND_FIELDS,
  above: limit("count, metric: fires when above this.").optional(),
  below: limit("count, metric: fires when below this.").optional(),
  repeat: seconds("Notify again this often while it keeps firing.").optional(),
  notify_after: rule.notifyAfter(
    "rounds",
    "Notify of firing only after this many rounds firing in a row (default 1: at once).",
  ),
  paused: z.boolean({ error: "must be true or false" }).optional(),
};

export const alertInput = z.object({ project: rule.projectName, ...alertFields }).strict();
export const alertChanges = z
  .object({ ...alertFields, name: alertFields.name.optional(), kind: alertFields.kind.optional() })
  .strict();

export type AlertInput = z.input<typeof alertInput>;
export type AlertChangesInput = z.input<typeof alertChanges>;

/** The rule a set of fields describes, or every problem with it (each naming its field). */
export function specOf(f: AlertFields): AlertSpec {
  const issues: FieldIssue[] = [];
  const kind = ALERT_KIND_MODULES[f.kind];
  const own = kind.spec(f, issues);
  const threshold = kind.takes.threshold ? { threshold: thresholdOf(f, issues) } : {};
  if (issues.length) throw new ValidationError(issues, "body");
  const filter = kind.takes.filter ? { filter: f.filter ?? {} } : {};
  return {
    ...own,
    name: f.name,
    ...filter,
    ...threshold,
    repeat: ms(f.repeat),
    notifyAfter: f.notify_after ?? 1,
  } as AlertSpec;
}

/** A rule's fields as the API sends them: what PATCH merges its changes into. */
export function fieldsOf(a: Alert): AlertFields {
  const kind = kindOf(a);
  return {
    name: a.name,
    kind: a.kind,
    ...(kind.takes.filter ? { filter: a.filter } : {}),
    ...kind.fieldsOf(a),
    ...("threshold" in a ? { [a.threshold.compare]: a.threshold.limit } : {}),
    ...(a.repeat === null ? {} : { repeat: a.repeat / 1000 }),
    notify_after: a.notifyAfter,
    paused: a.paused,
  };
}

/** The project a new rule (or window) names: one that is not there is a field to fix, as any other. */
export async function namedProject(store: Store, name: string): Promise<Project> {
  const project = await store.projects.findByName(name);
  if (!project)
    throw new ValidationError([
      issue("project", `project "${name}" does not exist; create it first or check its name`),
    ]);
  return project;
}

/** `clock`: the time a rule is made, paused or resumed at (the system's unless given). */
export function alertService(store: Store, { clock = systemClock }: { clock?: Clock } = {}) {
  async function requireAlert(id: number): Promise<Alert> {
    const alert = await store.alerts.find(id);
    if (!alert) throw new NotFound(`Alert rule ${id} does not exist.`);
    return alert;
  }

  return {
    get: requireAlert,

    /** The name of the project a rule belongs to. */
    async projectName(alert: Alert): Promise<string> {
      const project = await store.projects.findById(alert.projectId);
      if (!project) throw new NotFound(`Alert rule ${alert.id} does not exist.`);
      return project.name;
    },

    async list(projectName: string): Promise<Alert[]> {
      const project = await store.projects.findByName(projectName);
      if (!project) throw new NotFound(`Project "${projectName}" does not exist.`);
      return store.alerts.list(project.id);
    },

    async create(input: AlertInput, actor: Actor = COMMAND_LINE, now = clock.now()): Promise<Alert> {
      const f = validate(alertInput, input) as AlertFields & { project: string };
      const project = await namedProject(store, f.project);
      return audited(
        store,
        actor,
        async (tx, note) => {
          const alert = await tx.alerts.create({ ...specOf(f), projectId: project.id, paused: f.paused ?? false }, now);
          note("alert.created", ruleSubject(alert, project.name), `${alert.kind}${alert.paused ? ", paused" : ""}`);
          return alert;
        },
        now,
      );
    },

    /** Changes what a rule is; `paused` pauses it (its state shows paused) or resumes it (from ok, watching from now). */
    async update(
      id: number,
      input: AlertChangesInput | Record<string, unknown>,
      actor: Actor = COMMAND_LINE,
      now = clock.now(),
    ): Promise<Alert> {
      // A field sent as null is taken out (a repeat no longer wanted); the rest is merged over the rule.
      const sent =
        typeof input === "object" && input !== null && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
      const cleared = Object.keys(sent).filter(
        (key) => sent[key] === null && key in alertFields && key !== "name" && key !== "kind",
      );
      const changes = validate(
        alertChanges,
        sent === input ? Object.fromEntries(Object.entries(sent).filter(([key]) => !cleared.includes(key))) : input,
      );
      const alert = await requireAlert(id);
      const merged: AlertFields = { ...fieldsOf(alert), ...(changes as Partial<AlertFields>) };
      for (const key of cleared) delete (merged as Record<string, unknown>)[key];
      if (changes.kind && changes.kind !== alert.kind)
        for (const key of KINDS_FIELDS) if (!(key in changes)) delete (merged as Record<string, unknown>)[key];
      const spec = specOf(merged);
      const resumed = alert.paused && changes.paused === false;
      // Paused since now: `since` says when the state shown began, and a paused rule shows paused.
      const paused = !alert.paused && changes.paused === true;
      // Resumed, it starts afresh: ok, nothing counted, nothing told (what it told before the pause is not followed up).
      const update: AlertChanges & Partial<AlertMarkWrite> = {
        ...spec,
        paused: changes.paused ?? alert.paused,
        ...(resumed ? { state: "ok", since: now, streak: 0, notified: "ok" } : paused ? { since: now } : {}),
      };
      const project = await this.projectName(alert);
      const onlyPaused = Object.keys(changes).every((key) => key === "paused") && !cleared.length;
      const how = onlyPaused
        ? update.paused === alert.paused
          ? null
          : update.paused
            ? "paused"
            : "resumed"
        : `changed${update.paused !== alert.paused ? (update.paused ? " and paused" : " and resumed") : ""}`;
      const changed = await audited(
        store,
        actor,
        async (tx, note) => {
          const saved = await tx.alerts.update(id, update, now);
          if (saved && how) note("alert.changed", ruleSubject(saved, project), how);
          return saved;
        },
        now,
      );
      return changed ?? requireAlert(id);
    },

    async remove(id: number, actor: Actor = COMMAND_LINE): Promise<void> {
      const alert = await requireAlert(id);
      const project = await this.projectName(alert);
      const removed = await audited(store, actor, async (tx, note) => {
        if (!(await tx.alerts.delete(id))) return false;
        note("alert.deleted", ruleSubject(alert, project));
        return true;
      });
      if (!removed) throw new NotFound(`Alert rule ${id} does not exist.`);
    },
  };
}

const ruleSubject = (a: Alert, project: string) => `alert rule “${a.name}” (${a.id}) of ${project}`;
