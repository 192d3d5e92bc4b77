// Shared pages: a link that shows a project's chosen cards (a dashboard) or its chosen checks, alert
// rules and metrics (a status page) to people without an account. Made and revoked by admins (the
// dashboard) and full-access tokens (the API). The key in the link is the capability: 32 random
// bytes, so it cannot be guessed; a revoked share is gone from the next request on, and its open
// streams end (revoking takes access away, as revoking a token does).
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { type Clock, systemClock } from "../clock.ts";
import { type FieldIssue, NotFound, NotInProject, ValidationError } from "../errors.ts";
import { type Actor, COMMAND_LINE } from "../model/audit.ts";
import type { Project } from "../model/project.ts";
import type { Share, ShareChoice } from "../model/share.ts";
import type { Store } from "../store/store.ts";
import { namedProject } from "./alerts.ts";
import { audited } from "./audit.ts";
import { zoneName } from "./calendar.ts";
import * as rule from "./input-fields.ts";
import { requireProject } from "./projects.ts";
import { validate } from "./validation.ts";

/** At most this many of each thing on one shared page. */
export const SHARE_MAX_ITEMS = 50;

/** A share's key: 43 URL-safe characters (32 random bytes). */
export const SHARE_KEY = /^[A-Za-z0-9_-]{43}$/;

const ids = (what: string) =>
  z
    .array(
      z
        .number({ error: `must be ${what} ids (numbers)` })
        .int()
        .positive(),
      { error: `must be a list of ${what} ids` },
    )
    .max(SHARE_MAX_ITEMS, `at most ${SHARE_MAX_ITEMS} ${what}s`)
    .optional()
    .meta({ description: `The ${what}s shown, by id; each must be the project's.` });

export const shareInput = z
  .object({
    project: rule.projectName,
    kind: z.enum(["dashboard", "status"], { error: 'must be "dashboard" or "status"' }).meta({
      description:
        "dashboard: chosen cards (charts, funnels, metric charts, retention); status: checks, alert rules and metrics.",
    }),
    charts: ids("chart"),
    checks: ids("check"),
    alerts: ids("alert rule"),
    metrics: z
      .array(rule.text(160, { nonEmpty: true }))
      .max(SHARE_MAX_ITEMS, `at most ${SHARE_MAX_ITEMS} metrics`)
      .optional()
      .meta({ description: "Status page: the metrics shown with their value now, by title." }),
    title: rule.text(100).optional().meta({ description: "The page's title (the project's name unless given)." }),
    text: rule.text(1000).optional().meta({ description: "A short text under the title." }),
    time_zone: z
      .string({ error: "must be a time zone such as Europe/Paris, America/New_York or UTC" })
      .refine((tz) => zoneName(tz) !== null, "must be a time zone such as Europe/Paris, America/New_York or UTC")
      .optional()
      .meta({ description: "Status page: its 90 days are this zone's days (an IANA name; UTC unless given)." }),
  })
  .strict();

export type ShareInput = z.input<typeof shareInput>;

const issue = (path: string, message: string): FieldIssue => ({ path, type: "invalid", message });

/** What the fields choose, for their kind; a dashboard shows charts alone, a status page no charts. */
function choiceOf(f: z.output<typeof shareInput>): ShareChoice {
  const choice = { charts: f.charts ?? [], checks: f.checks ?? [], alerts: f.alerts ?? [], metrics: f.metrics ?? [] };
  const issues: FieldIssue[] = [];
  if (f.kind === "dashboard") {
    if (!choice.charts.length) issues.push(issue("charts", "a dashboard share needs at least one chart id in charts"));
    for (const other of ["checks", "alerts", "metrics"] as const)
      if (choice[other].length)
        issues.push(issue(other, `a dashboard share shows charts only; put ${other} on a status share`));
    if (f.time_zone !== undefined)
      issues.push(
        issue("time_zone", "only a status share has days; a dashboard's cards each have their own time zone"),
      );
  } else {
    if (choice.charts.length)
      issues.push(issue("charts", "a status share shows checks, alerts and metrics, not charts"));
    if (!choice.checks.length && !choice.alerts.length && !choice.metrics.length)
      issues.push(issue("checks", "a status share needs at least one of checks, alerts or metrics"));
  }
  if (issues.length) throw new ValidationError(issues, "body");
  const unique = <T>(list: T[]) => [...new Set(list)];
  return {
    charts: unique(choice.charts),
    checks: unique(choice.checks),
    alerts: unique(choice.alerts),
    metrics: unique(choice.metrics),
  };
}

/** Every chosen id that is not the project's, named (422 when any is). */
async function assertTheProjects(store: Store, project: Project, c: ShareChoice): Promise<void> {
  const issues: FieldIssue[] = [];
  const not = (path: string, what: string) =>
    issues.push({ path, type: "not_in_project", message: `${what} is not in project "${project.name}"` });
  const found = await Promise.all([
    Promise.all(c.charts.map((id) => store.charts.find(id))),
    Promise.all(c.checks.map((id) => store.checks.find(id))),
    Promise.all(c.alerts.map((id) => store.alerts.find(id))),
    Promise.all(c.metrics.map((title) => store.metrics.find(project.id, title))),
  ]);
  found[0].forEach((x, i) => x?.projectId === project.id || not(`charts[${i}]`, `chart ${c.charts[i]}`));
  found[1].forEach((x, i) => x?.projectId === project.id || not(`checks[${i}]`, `check ${c.checks[i]}`));
  found[2].forEach((x, i) => x?.projectId === project.id || not(`alerts[${i}]`, `alert rule ${c.alerts[i]}`));
  found[3].forEach((x, i) => x || not(`metrics[${i}]`, `metric ${JSON.stringify(c.metrics[i])}`));
  if (issues.length) throw new NotInProject(issues);
}

export const newShareKey = (): string => randomBytes(32).toString("base64url");

export function shareService(store: Store, { clock = systemClock, baseUrl }: { clock?: Clock; baseUrl: string }) {
  async function requireShare(id: number): Promise<Share> {
    const found = await store.shares.find(id);
    if (!found || found.revokedAt !== null) throw new NotFound(`Share ${id} does not exist (or was revoked).`);
    return found;
  }

  return {
    now: () => clock.now(),

    /** The full link of a share. */
    url: (share: Share) => `${baseUrl}/s/${share.key}`,

    get: requireShare,

    /** The name of the project a share belongs to. */
    async projectName(share: Share): Promise<string> {
      const project = await store.projects.findById(share.projectId);
      if (!project) throw new NotFound(`Share ${share.id} does not exist.`);
      return project.name;
    },

    async list(projectName: string): Promise<Share[]> {
      return store.shares.list((await requireProject(store, projectName)).id);
    },

    async create(input: ShareInput, actor: Actor = COMMAND_LINE, now = clock.now()): Promise<Share> {
      const f = validate(shareInput, input);
      const choice = choiceOf(f);
      const project = await namedProject(store, f.project);
      await assertTheProjects(store, project, choice);
      return audited(
        store,
        actor,
        async (tx, note) => {
          const made = await tx.shares.create(
            {
              projectId: project.id,
              kind: f.kind,
              key: newShareKey(),
              ...choice,
              title: f.title?.trim() ?? "",
              text: f.text?.trim() ?? "",
              timeZone: f.time_zone === undefined ? "UTC" : zoneName(f.time_zone)!,
              createdBy: actor.name,
            },
            now,
          );
          note("share.created", subject(made, project.name));
          return made;
        },
        now,
      );
    },

    async revoke(id: number, actor: Actor = COMMAND_LINE, now = clock.now()): Promise<void> {
      const share = await requireShare(id);
      const project = await this.projectName(share);
      const revoked = await audited(
        store,
        actor,
        async (tx, note) => {
          if (!(await tx.shares.revoke(id, now))) return false;
          note("share.revoked", subject(share, project));
          return true;
        },
        now,
      );
      if (!revoked) throw new NotFound(`Share ${id} does not exist (or was revoked).`);
    },

    /** The share a link names, with its project; null for a key that names none (or a revoked one). */
    async open(key: string): Promise<{ share: Share; project: Project } | null> {
      if (!SHARE_KEY.test(key)) return null;
      const share = await store.shares.findByKey(key);
      const project = share ? await store.projects.findById(share.projectId) : null;
      return share && project ? { share, project } : null;
    },

    /** Whether the share is still there (not revoked): what keeps its open streams open. */
    async live(key: string): Promise<boolean> {
      return (await store.shares.findByKey(key)) !== null;
    },
  };
}

const subject = (s: Share, project: string) =>
  `${s.kind} share${s.title ? ` “${s.title}”` : ""} (${s.id}) of ${project}`;
