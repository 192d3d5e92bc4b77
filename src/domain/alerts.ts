// Alert rules: what a project expects of its events and metrics. Three kinds: absence (an event at
// least every period, or when a cron schedule says, plus a grace), count (the events of the last
// window above or below a number) and metric (a metric's value above or below one). Rules are
// checked here when made or changed, with the API's names for things (seconds, a 400 naming the
// field); alert-runner.ts watches them.
import { Cron } from "croner";
import { z } from "zod";
import { type Clock, systemClock } from "../clock.ts";
import { type FieldIssue, NotFound, ValidationError } from "../errors.ts";
import type { Alert, AlertChanges, AlertKind, AlertSpec } from "../model/alert.ts";
import { type Actor, COMMAND_LINE } from "../model/audit.ts";
import type { Store } from "../store/store.ts";
import { audited } from "./audit.ts";
import { zoneName } from "./calendar.ts";
import * as rule from "./input-fields.ts";
import { validate } from "./validation.ts";

export const ALERT_KINDS: AlertKind[] = ["absence", "count", "metric"];
/** A rule looks no closer than this: shorter periods, windows and repeats are refused (seconds). */
export const MIN_SECONDS = 5;
const MAX_SECONDS = 366 * 86_400;
/** Default grace: a tenth of the period; five minutes after a scheduled time. */
const CRON_GRACE_MS = 300_000;

const seconds = (what: string) =>
  z
    .number({ error: `must be a number of seconds` })
    .min(MIN_SECONDS, `must be at least ${MIN_SECONDS} seconds`)
    .max(MAX_SECONDS, "must be at most 366 days")
    .meta({ description: what });
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

/** What a rule is, as the API sends it (durations in seconds). */
export const alertFields = {
  name: rule.text(100, { nonEmpty: true }),
  kind: z.enum(ALERT_KINDS, { error: "must be absence, count or metric" }),
  filter: alertFilter.optional(),
  period: seconds("absence: an event is expected at least this often.").optional(),
  cron: rule
    .text(100)
    .optional()
    .meta({ description: 'absence: when events are due, as a cron expression ("0 3 * * *"), instead of a period.' }),
  tz: rule.text(64).optional().meta({ description: "absence with cron: its time zone (an IANA name; default UTC)." }),
  grace: z
    .number({ error: "must be a number of seconds" })
    .min(0, "must be 0 or more")
    .max(MAX_SECONDS, "must be at most 366 days")
    .optional()
    .meta({
      description:
        "absence: how late an event may be (default: a tenth of the period, or 5 minutes after a scheduled time).",
    }),
  window: seconds("count: the events of the last this many seconds.").optional(),
  metric: rule.metricTitle.optional().meta({ description: "metric: the metric's title." }),
  above: limit("count, metric: fires when above this.").optional(),
  below: limit("count, metric: fires when below this.").optional(),
  repeat: seconds("Notify again this often while it keeps firing.").optional(),
  paused: z.boolean({ error: "must be true or false" }).optional(),
};

export const alertInput = z.object({ project: rule.projectName, ...alertFields }).strict();
export const alertChanges = z
  .object({ ...alertFields, name: alertFields.name.optional(), kind: alertFields.kind.optional() })
  .strict();

export type AlertInput = z.input<typeof alertInput>;
export type AlertChangesInput = z.input<typeof alertChanges>;

const ms = (s: number | undefined | null) => (s === undefined || s === null ? null : Math.round(s * 1000));
const issue = (path: string, message: string): FieldIssue => ({ path, type: "custom", message: `${path}: ${message}` });

/** The rule a set of fields describes, or every problem with it (each naming its field). */
export function specOf(f: z.output<typeof alertChanges> & { name: string; kind: AlertKind }): AlertSpec {
  const issues: FieldIssue[] = [];
  const kind = f.kind;
  if (kind === "absence") {
    if (f.period === undefined && f.cron === undefined)
      issues.push(issue("period", "an absence rule needs a period (seconds) or a cron schedule"));
    if (f.period !== undefined && f.cron !== undefined)
      issues.push(issue("cron", "give a period or a cron schedule, not both"));
    if (f.cron !== undefined) {
      const tz = zoneName(f.tz ?? "UTC");
      if (!tz)
        issues.push(issue("tz", `${JSON.stringify(f.tz)} is not a time zone; use an IANA name such as Europe/Berlin`));
      else {
        const fields = f.cron.trim().split(/\s+/).length;
        try {
          // Five fields, as crontab has them: croner also takes seconds (a sixth, "every second"), which no rule can mean.
          if (fields !== 5 && !f.cron.trim().startsWith("@"))
            throw new Error(`${fields} field${fields === 1 ? "" : "s"}${fields === 6 ? ", a sixth for seconds" : ""}`);
          // A schedule that never comes (the 31st of February) is refused: nothing could be due, and croner looks years ahead for it at every check.
          if (!new Cron(f.cron, { timezone: tz, paused: true }).nextRun())
            issues.push(
              issue(
                "cron",
                `never comes (${JSON.stringify(f.cron)} names no day that exists); five fields: minute hour day month weekday, as in "0 3 * * *"`,
              ),
            );
        } catch (error) {
          issues.push(
            issue(
              "cron",
              `${JSON.stringify(f.cron)} is not a cron schedule (${(error as Error).message}); five fields: minute hour day month weekday, as in "0 3 * * *"`,
            ),
          );
        }
      }
    }
  }
  if (kind === "count" && f.window === undefined) issues.push(issue("window", "a count rule needs a window (seconds)"));
  if (kind === "metric" && f.metric === undefined)
    issues.push(issue("metric", "a metric rule needs the metric's title"));
  if (kind !== "absence") {
    if (f.above !== undefined && f.below !== undefined) issues.push(issue("below", "give above or below, not both"));
    if (f.above === undefined && f.below === undefined)
      issues.push(issue("above", `a ${kind} rule fires above or below a number: give one`));
  }
  if (issues.length) throw new ValidationError(issues, "body");
  const absence = kind === "absence";
  const period = absence ? ms(f.period) : null;
  return {
    kind,
    name: f.name,
    filter: kind === "metric" ? {} : (f.filter ?? {}),
    period,
    cron: absence ? (f.cron ?? null) : null,
    tz: absence && f.cron !== undefined ? zoneName(f.tz ?? "UTC") : null,
    grace: absence ? (ms(f.grace) ?? (period !== null ? Math.round(period / 10) : CRON_GRACE_MS)) : 0,
    window: kind === "count" ? ms(f.window) : null,
    metric: kind === "metric" ? (f.metric ?? null) : null,
    above: absence ? null : (f.above ?? null),
    below: absence ? null : (f.below ?? null),
    repeat: ms(f.repeat),
  };
}

/** A rule's fields as the API sends them: what PATCH merges its changes into. */
export function fieldsOf(a: Alert): z.output<typeof alertChanges> & { name: string; kind: AlertKind } {
  const s = (v: number | null) => (v === null ? undefined : v / 1000);
  const or = <T>(v: T | null) => (v === null ? undefined : v);
  return {
    name: a.name,
    kind: a.kind,
    filter: a.filter,
    period: s(a.period),
    cron: or(a.cron),
    tz: or(a.tz),
    grace: a.kind === "absence" ? a.grace / 1000 : undefined,
    window: s(a.window),
    metric: or(a.metric),
    above: or(a.above),
    below: or(a.below),
    repeat: s(a.repeat),
    paused: a.paused,
  };
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
      const f = validate(alertInput, input);
      const project = await store.projects.findByName(f.project);
      // The rule names its project: one that is not there is a field to fix, as any other.
      if (!project)
        throw new ValidationError(
          [issue("project", `project "${f.project}" does not exist; create it first or check its name`)],
          "body",
        );
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
      const merged = { ...fieldsOf(alert), ...changes };
      for (const key of cleared) delete (merged as Record<string, unknown>)[key];
      if (changes.kind && changes.kind !== alert.kind)
        for (const key of ["period", "cron", "tz", "grace", "window", "metric", "above", "below"] as const)
          if (!(key in changes)) delete merged[key];
      const spec = specOf(merged);
      const resumed = alert.paused && changes.paused === false;
      // Paused since now: `since` says when the state shown began, and a paused rule shows paused.
      const paused = !alert.paused && changes.paused === true;
      const update: AlertChanges & { state?: "ok"; since?: number } = {
        ...spec,
        paused: changes.paused ?? alert.paused,
        ...(resumed ? { state: "ok", since: now } : paused ? { since: now } : {}),
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
