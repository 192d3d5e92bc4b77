// Checks: jobs and services that report by pinging (check-pings.ts takes the pings, check-runner.ts
// notices silence). Made and changed here, with the API's names for things (seconds, push_token) and
// a 400 naming the field for anything wrong; and each project's ping key, made when first asked for.
import { randomBytes, randomUUID } from "node:crypto";
import { Cron } from "croner";
import { z } from "zod";
import { type Clock, systemClock } from "../clock.ts";
import { type FieldIssue, NotFound, ValidationError } from "../errors.ts";
import { type Actor, COMMAND_LINE } from "../model/audit.ts";
import { CHECKS_CHANNEL, type Check, type CheckSchedule, type CheckSpec } from "../model/check.ts";
import type { Project } from "../model/project.ts";
import type { Repositories, Store } from "../store/store.ts";
import { cronProblem } from "./alert-kinds/absence.ts";
import { audited } from "./audit.ts";
import { projectOfField, requireProject } from "./projects.ts";
import { zoneName } from "./calendar.ts";
import * as rule from "./input-fields.ts";
import { validate } from "./validation.ts";

/** The shortest period (and silence round) a check may have, as for alert rules. */
export const MIN_PERIOD = 5;
const MAX_SECONDS = 366 * 86_400;
/** What `?create=1` on a slug URL makes, as Healthchecks does: a ping a day, an hour late at most. */
export const CREATED_BY_PING = { period: 86_400, grace: 3_600 } as const;
/**
 * The most checks a project may have for `?create=1` to make one more: anyone holding the ping key
 * can make checks, and no more than this many (those made over the API or on the page have no limit).
 */
export const MOST_CHECKS_BY_PING = 1_000;

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const SLUG = /^[a-z0-9-]{1,100}$/;
/** A ping key: 22 URL-safe characters, as Healthchecks' (16 random bytes in base64url). */
export const PING_KEY = /^[A-Za-z0-9_-]{22}$/;
export const PUSH_TOKEN = /^[A-Za-z0-9_.~-]{32}$/;

const seconds = (what: string, min: number) =>
  z
    .number({ error: "must be a number of seconds" })
    .min(min, `must be at least ${min}`)
    .max(MAX_SECONDS, "must be at most 366 days")
    .meta({ description: what });

export const checkFields = {
  name: rule.text(100, { nonEmpty: true }),
  slug: z
    .string({ error: "must be a string" })
    .regex(SLUG, "must be 1-100 lowercase letters, digits or dashes")
    .optional(),
  period: seconds("Seconds between two pings at most.", MIN_PERIOD).optional(),
  cron: rule.text(100).optional(),
  tz: rule.text(64).optional(),
  grace: seconds("Seconds a ping may be late, or a run may take.", 0).optional(),
  channel: rule.channelName.optional(),
  uuid: z.string({ error: "must be a string" }).regex(UUID, "must be a UUID").optional(),
  push_token: z
    .string({ error: "must be a string" })
    .regex(PUSH_TOKEN, "must be 32 letters, digits or - _ . ~")
    .optional(),
  paused: z.boolean({ error: "must be true or false" }).optional(),
  notify_after: rule.notifyAfter(
    "failures",
    "Notify of down only after this many failures in a row: failure pings, and deadlines missed (default 1: at once).",
  ),
};

export const checkInput = z.object({ project: rule.projectName, ...checkFields }).strict();
export const checkChanges = z.object({ ...checkFields, name: checkFields.name.optional() }).strict();

export type CheckInput = z.input<typeof checkInput>;
export type CheckChangesInput = z.input<typeof checkChanges>;
type Fields = z.output<typeof checkChanges>;

/** The slug a name makes: its letters and digits, lowercase, dashes between. */
export function slugOf(name: string): string {
  return name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 100);
}

/** When silence after `base` makes a check down: a period after it, or its next scheduled time; plus grace. */
export function deadlineOf(schedule: CheckSchedule, grace: number, base: number): number | null {
  if (schedule.kind === "period") return base + (schedule.seconds + grace) * 1000;
  const next = new Cron(schedule.expr, { timezone: schedule.tz, paused: true }).nextRun(new Date(base));
  return next ? next.getTime() + grace * 1000 : null;
}

/** The schedule the fields say, or their problems (each naming its field). */
function scheduleOf(f: Fields, issues: FieldIssue[]): CheckSchedule {
  if (f.period !== undefined && f.cron !== undefined)
    issues.push({ path: "cron", type: "custom", message: "cron: give a period or a cron schedule, not both" });
  if (f.cron === undefined) return { kind: "period", seconds: f.period ?? CREATED_BY_PING.period };
  const tz = zoneName(f.tz ?? "UTC");
  if (!tz) {
    const message = `tz: ${JSON.stringify(f.tz)} is not a time zone; use an IANA name such as Europe/Berlin`;
    issues.push({ path: "tz", type: "custom", message });
    return { kind: "cron", expr: f.cron, tz: "UTC" };
  }
  const problem = cronProblem(f.cron, tz);
  if (problem) issues.push({ path: "cron", type: "custom", message: `cron: ${problem}` });
  return { kind: "cron", expr: f.cron, tz };
}

/** A new push token: 32 letters and digits, as Uptime Kuma makes them. */
export function newPushToken(): string {
  const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  return Array.from(randomBytes(32), (b) => letters[b % letters.length]).join("");
}

export const newPingKey = (): string => randomBytes(16).toString("base64url");

/** The UUID, push token and slug are not another check's (in a write, with the names locked). */
async function assertFree(
  tx: Repositories,
  spec: Pick<CheckSpec, "uuid" | "pushToken" | "slug">,
  projectId: number,
  self: number | null,
): Promise<void> {
  const issues: FieldIssue[] = [];
  const taken = async (key: Parameters<Repositories["checks"]["findBy"]>[0]) =>
    (await tx.checks.findBy(key)).some((c) => c.id !== self);
  if (await taken({ projectId, slug: spec.slug }))
    issues.push({ path: "slug", type: "custom", message: `slug: "${spec.slug}" is another check's in this project` });
  if (await taken({ uuid: spec.uuid }))
    issues.push({ path: "uuid", type: "custom", message: "uuid: another check has this UUID" });
  if (await taken({ pushToken: spec.pushToken }))
    issues.push({ path: "push_token", type: "custom", message: "push_token: another check has this push token" });
  if (issues.length) throw new ValidationError(issues, "body");
}

/** The spec the fields make, over `base` (a check's, when changing one). */
function specOf(f: Fields, base: CheckSpec | null): CheckSpec {
  const issues: FieldIssue[] = [];
  // A new time zone alone keeps the schedule's expression.
  const cron = f.cron ?? (f.tz !== undefined && base?.schedule.kind === "cron" ? base.schedule.expr : undefined);
  // A time zone says when a cron schedule's times are: with a period it would be dropped unsaid.
  if (f.tz !== undefined && cron === undefined)
    issues.push({ path: "tz", type: "custom", message: "tz: goes with a cron schedule (cron); a period needs none" });
  const schedule =
    f.period === undefined && cron === undefined && base ? base.schedule : scheduleOf({ ...f, cron }, issues);
  const name = f.name ?? base!.name;
  const slug = f.slug ?? base?.slug ?? slugOf(name);
  if (!SLUG.test(slug))
    issues.push({
      path: "slug",
      type: "custom",
      message: "slug: the name makes none; give one (lowercase letters, digits, dashes)",
    });
  if (issues.length) throw new ValidationError(issues, "body");
  return {
    name,
    slug,
    schedule,
    grace: f.grace ?? base?.grace ?? CREATED_BY_PING.grace,
    channel: f.channel ?? base?.channel ?? CHECKS_CHANNEL,
    uuid: (f.uuid ?? base?.uuid ?? randomUUID()).toLowerCase(),
    pushToken: f.push_token ?? base?.pushToken ?? newPushToken(),
    paused: f.paused ?? base?.paused ?? false,
    notifyAfter: f.notify_after ?? base?.notifyAfter ?? 1,
  };
}

/** A new check's problems, every one at once, short of a name another check has (that needs a write). */
export function newCheckProblems(input: unknown): FieldIssue[] {
  try {
    specOf(validate(checkInput, input), null);
    return [];
  } catch (error) {
    if (error instanceof ValidationError) return error.issues;
    throw error;
  }
}

/** Makes a check in a write (the names locked first): what a ping's `?create=1` calls too. */
export async function createCheck(
  tx: Repositories,
  project: Project,
  f: Fields & { name: string },
  now: number,
): Promise<Check> {
  const spec = specOf(f, null);
  await tx.checks.lockNames();
  await assertFree(tx, spec, project.id, null);
  return tx.checks.create({ ...spec, projectId: project.id }, now);
}

/** When a changed check is due: its schedule and grace counted again from its last ping, or its open start. */
function dueAfterChange(check: Check, spec: CheckSpec): number | null {
  if (check.state === "up" && check.lastPing !== null) return deadlineOf(spec.schedule, spec.grace, check.lastPing);
  if (check.state === "started" && check.lastStart !== null) return check.lastStart + spec.grace * 1000;
  return check.nextDue;
}

const subject = (c: Check, project: string) => `check “${c.name}” (${c.slug}) of ${project}`;

/** Where a check is pinged: by UUID, by the project's ping key and its slug, and Uptime Kuma's push URL. */
export type CheckUrls = { ping: string; slug: string; push: string };

function urlsWith(baseUrl: string, check: Check, pingKey: string): CheckUrls {
  return {
    ping: `${baseUrl}/ping/${check.uuid}`,
    slug: `${baseUrl}/ping/${pingKey}/${check.slug}`,
    push: `${baseUrl}/api/push/${check.pushToken}?status=up&msg=OK&ping=`,
  };
}

/**
 * `clock`: the time checks are made and changed at (the system's unless given); `baseUrl`: where
 * its ping URLs point.
 */
export function checkService(
  store: Store,
  { clock = systemClock, baseUrl = "" }: { clock?: Clock; baseUrl?: string } = {},
) {
  async function requireCheck(id: number): Promise<Check> {
    const check = await store.checks.find(id);
    if (!check) throw new NotFound(`Check ${id} does not exist.`);
    return check;
  }

  async function projectOf(check: Check): Promise<Project> {
    const project = await store.projects.findById(check.projectId);
    if (!project) throw new NotFound(`Check ${check.id} does not exist.`);
    return project;
  }

  const requireProjectNamed = (name: string): Promise<Project> => requireProject(store, name);
  const urlsOf = (check: Check, pingKey: string) => urlsWith(baseUrl, check, pingKey);

  return {
    get: requireCheck,
    project: requireProjectNamed,
    projectOf,

    async list(projectName: string): Promise<Check[]> {
      return store.checks.list((await requireProjectNamed(projectName)).id);
    },

    /** What is wrong with a new check's fields, without making it (a form names every problem at once). */
    problems: newCheckProblems,

    async create(input: CheckInput, actor: Actor = COMMAND_LINE, now = clock.now()): Promise<Check> {
      const f = validate(checkInput, input);
      const project = await projectOfField(store, f.project);
      return audited(
        store,
        actor,
        async (tx, note) => {
          const check = await createCheck(tx, project, f, now);
          note("check.created", subject(check, project.name), check.paused ? "paused" : null);
          return check;
        },
        now,
      );
    },

    /** Changes a check; pausing it stops watching, resuming makes it new (watched again from its next ping). */
    async update(id: number, input: CheckChangesInput, actor: Actor = COMMAND_LINE, now = clock.now()): Promise<Check> {
      const f = validate(checkChanges, input);
      const check = await requireCheck(id);
      const project = await projectOf(check);
      const spec = specOf(f, check);
      const paused = spec.paused && !check.paused;
      const resumed = !spec.paused && check.paused;
      const state = paused
        ? { state: "paused" as const, nextDue: null, since: now, streak: 0, counted: null }
        : resumed
          ? { state: "new" as const, nextDue: null, since: now, runs: {}, streak: 0, counted: null }
          : { nextDue: dueAfterChange(check, spec) };
      const changed = await audited(
        store,
        actor,
        async (tx, note) => {
          await tx.checks.lockNames();
          await assertFree(tx, spec, check.projectId, id);
          const saved = await tx.checks.update(id, { ...spec, ...state }, now);
          if (saved)
            note("check.changed", subject(saved, project.name), paused ? "paused" : resumed ? "resumed" : null);
          return saved;
        },
        now,
      );
      return changed ?? requireCheck(id);
    },

    async remove(id: number, actor: Actor = COMMAND_LINE): Promise<void> {
      const check = await requireCheck(id);
      const project = await projectOf(check);
      const removed = await audited(store, actor, async (tx, note) => {
        if (!(await tx.checks.delete(id))) return false;
        note("check.deleted", subject(check, project.name));
        return true;
      });
      if (!removed) throw new NotFound(`Check ${id} does not exist.`);
    },

    /** The project's ping key, made at the first ask. */
    async pingKey(projectName: string, now = clock.now()): Promise<string> {
      const project = await requireProjectNamed(projectName);
      const known = await store.checks.pingKey(project.id);
      if (known) return known;
      return store.tx(async (tx) => {
        await tx.checks.lockNames();
        const made = (await tx.checks.pingKey(project.id)) ?? newPingKey();
        await tx.checks.setPingKey(project.id, made, now);
        return made;
      });
    },

    /** The check's ping URLs (its project's ping key made if it has none yet). */
    async urls(check: Check): Promise<CheckUrls> {
      return urlsOf(check, await this.pingKey((await projectOf(check)).name));
    },

    /** The ping URLs of checks of one project, its ping key read once (not once a check). */
    async urlsIn(projectName: string, list: Check[]): Promise<CheckUrls[]> {
      if (!list.length) return [];
      const key = await this.pingKey(projectName);
      return list.map((c) => urlsOf(c, key));
    },

    /** A new ping key for the project: URLs with the old one answer 404 from now on. */
    async regeneratePingKey(projectName: string, actor: Actor = COMMAND_LINE, now = clock.now()): Promise<string> {
      const project = await requireProjectNamed(projectName);
      return audited(
        store,
        actor,
        async (tx, note) => {
          const key = newPingKey();
          await tx.checks.setPingKey(project.id, key, now);
          note("check.ping-key", `ping key of ${project.name}`);
          return key;
        },
        now,
      );
    },
  };
}

export type CheckService = ReturnType<typeof checkService>;
