// Projects and channels: creation with clear refusals, deletion that says what goes with it.
import { z } from "zod";
import { type Clock, systemClock } from "../clock.ts";
import { Conflict, Forbidden, NotFound, UnknownProject, ValidationError } from "../errors.ts";
import type { Announce } from "../live/hub.ts";
import { type Actor, COMMAND_LINE } from "../model/audit.ts";
import type { Channel, Project } from "../model/project.ts";
import type { User } from "../model/user.ts";
import type { Repositories, Store } from "../store/store.ts";
import { audited } from "./audit.ts";
import { channelName, projectName } from "./input-fields.ts";
import { validate } from "./validation.ts";

const projectInput = z.object({ name: projectName });
const channelInput = z.object({ project: projectName, name: channelName });

const DELETE_BATCH = 2000;

/** The meta key of the last retention run: when, and how many events it deleted per project. */
const RETENTION_RUN = "retention.last_run";
type RetentionRun = { at: number; deleted: Record<string, number> };

/** Deletes events in batches, each its own short transaction, so ingest never waits long. */
async function deleteEvents(
  store: Store,
  where: { projectId: number; channelId?: number; before?: number },
): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await store.events.deleteBatch(where, DELETE_BATCH);
    total += deleted;
    if (deleted < DELETE_BATCH) return total;
  }
}

/** The project of that name; every service that takes a project name finds it through this. */
export async function requireProject(repos: Pick<Repositories, "projects">, name: string): Promise<Project> {
  const project = await repos.projects.findByName(name);
  if (!project) throw new UnknownProject(name);
  return project;
}

/** The project a new thing's `project` field names; one that does not exist is that field's problem (a 400 naming it). */
export async function projectOfField(repos: Pick<Repositories, "projects">, name: string): Promise<Project> {
  const project = await repos.projects.findByName(name);
  if (!project) throw ValidationError.field("project", "custom", `project: "${name}" does not exist; create it first`);
  return project;
}

/** The ids of the named projects; a name that is none is refused, by the `projects` field. */
export async function projectIdsOf(repos: Pick<Repositories, "projects">, names: string[]): Promise<number[]> {
  const ids: number[] = [];
  for (const name of new Set(names)) {
    const project = await repos.projects.findByName(name);
    if (!project)
      throw ValidationError.field("projects", "unknown_project", `projects: there is no project named "${name}"`);
    ids.push(project.id);
  }
  return ids;
}

/**
 * Whether `by` may be told if a project named `name` exists: not someone limited to some projects,
 * of one that is not theirs (everywhere else such a project "does not exist, or is not one of yours").
 */
export function mayKnowProject(by: Pick<User, "projects"> | null | undefined, name: string): boolean {
  return !by?.projects || by.projects.includes(name);
}

/** Why a name cannot be a new project, for someone who may not be told that a project of that name exists. */
const unusable = (name: string) => `“${name}” cannot be used for a new project. Choose another name.`;

/** `defaultProject`: the one that takes metrics sent without a project; it cannot be deleted. */
export function projectService(
  store: Store,
  { announce, defaultProject, clock = systemClock }: { announce?: Announce; defaultProject: string; clock?: Clock },
) {
  const requireProjectNamed = (name: string): Promise<Project> => requireProject(store, name);

  async function requireChannel(project: string, name: string): Promise<{ project: Project; channel: Channel }> {
    const p = await requireProjectNamed(project);
    const channel = await store.projects.findChannel(p.id, name);
    if (!channel) throw new NotFound(`Channel "${name}" does not exist in project "${project}".`);
    return { project: p, channel };
  }

  return {
    requireProject: requireProjectNamed,
    requireChannel,

    /** `by`: who creates it; someone limited to some projects gets this one too (else they could not see what they made). */
    async create(name: string, by: Pick<User, "id" | "projects"> | null = null): Promise<Project> {
      validate(projectInput, { name });
      const created = await store.tx(async (tx) => {
        const project = await tx.projects.create(name);
        if (project && by?.projects) await tx.users.addProject(by.id, project.id);
        return project;
      });
      if (!created)
        throw new Conflict(mayKnowProject(by, name) ? `A project named "${name}" already exists.` : unusable(name));
      return created;
    },

    /** Creates the project if it is missing; used for the default project at start. */
    async ensure(name: string): Promise<Project> {
      return (
        (await store.projects.findByName(name)) ?? (await store.projects.create(name)) ?? requireProjectNamed(name)
      );
    },

    list(): Promise<Project[]> {
      return store.projects.list();
    },

    async channels(project: string): Promise<Channel[]> {
      return store.projects.listChannels((await requireProjectNamed(project)).id);
    },

    /** Each project with its channels (the sidebar, device filters). */
    async withChannels(): Promise<{ project: Project; channels: Channel[] }[]> {
      const projects = await store.projects.list();
      return Promise.all(
        projects.map(async (project) => ({ project, channels: await store.projects.listChannels(project.id) })),
      );
    },

    /**
     * Why `name` cannot be a new project (or a new channel of `project`), or null; to someone limited
     * to some projects (`by`), a project that is not theirs is a name they cannot use, not one that exists.
     */
    async nameTaken(
      kind: "project" | "channel",
      name: string,
      project?: string,
      by?: Pick<User, "projects"> | null,
    ): Promise<string | null> {
      if (kind === "project") {
        if (!(await store.projects.findByName(name))) return null;
        return mayKnowProject(by, name) ? `A project named “${name}” already exists.` : unusable(name);
      }
      const p = project ? await store.projects.findByName(project) : null;
      return p && (await store.projects.findChannel(p.id, name))
        ? `A channel named “${name}” already exists in ${project}.`
        : null;
    },

    async createChannel(project: string, name: string): Promise<Channel> {
      validate(channelInput, { project, name });
      const p = await requireProjectNamed(project);
      const created = await store.projects.createChannel(p.id, name);
      if (!created) throw new Conflict(`A channel named "${name}" already exists in project "${project}".`);
      announce?.({ type: "channel", projectId: p.id, project: p.name, channel: name });
      return created;
    },

    async eventCount(project: string, channel?: string): Promise<number> {
      if (channel)
        return store.projects.countEvents({ channelId: (await requireChannel(project, channel)).channel.id });
      return store.projects.countEvents({ projectId: (await requireProjectNamed(project)).id });
    },

    /** Throws when the project cannot be deleted (the default project), so a dialog can say so first. */
    async assertDeletable(name: string): Promise<Project> {
      const p = await requireProjectNamed(name);
      if (p.name === defaultProject) {
        throw new Forbidden(
          `"${p.name}" is the default project (SIGNALBOARD_DEFAULT_PROJECT): metrics sent without a project go there, and it is created again at every start. Delete its channels instead, or choose another default project.`,
        );
      }
      return p;
    },

    async deleteProject(name: string, actor: Actor = COMMAND_LINE): Promise<void> {
      const p = await this.assertDeletable(name);
      const events = await deleteEvents(store, { projectId: p.id });
      await audited(store, actor, async (tx, note) => {
        await tx.projects.delete(p.id);
        note("project.deleted", `project ${p.name}`, `${events} event${events === 1 ? "" : "s"} deleted with it`);
      });
    },

    async deleteChannel(project: string, name: string): Promise<void> {
      const { project: p, channel } = await requireChannel(project, name);
      await deleteEvents(store, { projectId: p.id, channelId: channel.id });
      await store.projects.deleteChannel(channel);
    },

    async setRetention(name: string, days: number | null, actor: Actor = COMMAND_LINE): Promise<Project> {
      const p = await requireProjectNamed(name);
      if (days !== null && (!Number.isInteger(days) || days < 1 || days > 36_500))
        throw new ValidationError([
          { path: "days", type: "too_small", message: "days: keep events for 1 to 36500 days, or off" },
        ]);
      const kept = (d: number | null) => (d === null ? "forever" : `${d} day${d === 1 ? "" : "s"}`);
      await audited(store, actor, async (tx, note) => {
        await tx.projects.setRetention(p.id, days);
        if (p.retentionDays !== days)
          note("project.retention", `project ${p.name}`, `${kept(p.retentionDays)} → ${kept(days)}`);
      });
      return { ...p, retentionDays: days };
    },

    /** Deletes the events of projects with a retention period that are older than it, and records the run. */
    async pruneExpired(now = clock.now()): Promise<number> {
      const run: RetentionRun = { at: now, deleted: {} };
      for (const p of await store.projects.list()) {
        if (p.retentionDays)
          run.deleted[p.name] = await deleteEvents(store, {
            projectId: p.id,
            before: now - p.retentionDays * 86_400_000,
          });
      }
      await store.meta.set(RETENTION_RUN, JSON.stringify(run));
      return Object.values(run.deleted).reduce((a, b) => a + b, 0);
    },

    /** A project's retention, and when retention last ran (with what it deleted of this project then), or null if it never did. */
    async retention(name: string): Promise<{ project: Project; lastRun: { at: number; deleted: number } | null }> {
      const project = await requireProjectNamed(name);
      const recorded = await store.meta.get(RETENTION_RUN);
      const run = recorded ? (JSON.parse(recorded) as RetentionRun) : null;
      return { project, lastRun: run ? { at: run.at, deleted: run.deleted[name] ?? 0 } : null };
    },
  };
}
