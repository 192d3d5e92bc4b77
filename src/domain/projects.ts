// Projects and channels: creation with clear refusals, deletion that says what goes with it.
import { z } from "zod";
import { Conflict, Forbidden, NotFound, UnknownProject, ValidationError } from "../errors.ts";
import type { Hub } from "../live/hub.ts";
import type { Store } from "../store/index.ts";
import { channelName, projectName } from "./rules.ts";
import { validate } from "./validation.ts";
import type { Channel, Project } from "../model/project.ts";

const projectInput = z.object({ name: projectName });
const channelInput = z.object({ project: projectName, name: channelName });

const DELETE_BATCH = 2000;

/** Deletes events in batches, each its own short transaction, so ingest never waits long. */
async function deleteEvents(store: Store, where: { projectId: number; channelId?: number; before?: number }): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await store.writer.submit(() => store.events.deleteBatch(where, DELETE_BATCH));
    total += deleted;
    if (deleted < DELETE_BATCH) return total;
  }
}

/** The project of that name; every service that takes a project name finds it through this. */
export function requireProject(store: Store, name: string): Project {
  const project = store.projects.findByName(name);
  if (!project) throw new UnknownProject(name);
  return project;
}

/** `defaultProject`: the one that takes metrics sent without a project; it cannot be deleted. */
export function projectService(store: Store, { hub, defaultProject }: { hub?: Hub; defaultProject: string }) {
  const requireProjectNamed = (name: string): Project => requireProject(store, name);

  function requireChannel(project: string, name: string): { project: Project; channel: Channel } {
    const p = requireProjectNamed(project);
    const channel = store.projects.findChannel(p.id, name);
    if (!channel) throw new NotFound(`Channel "${name}" does not exist in project "${project}".`);
    return { project: p, channel };
  }

  return {
    requireProject: requireProjectNamed,
    requireChannel,

    async create(name: string): Promise<Project> {
      validate(projectInput, { name });
      const created = await store.writer.submit(() => store.projects.create(name));
      if (!created) throw new Conflict(`A project named "${name}" already exists.`);
      return created;
    },

    /** Creates the project if it is missing; used for the default project at start. */
    async ensure(name: string): Promise<Project> {
      return store.projects.findByName(name) ?? (await store.writer.submit(() => store.projects.create(name))) ?? requireProjectNamed(name);
    },

    list(): Project[] {
      return store.projects.list();
    },

    channels(project: string): Channel[] {
      return store.projects.listChannels(requireProjectNamed(project).id);
    },

    async createChannel(project: string, name: string): Promise<Channel> {
      validate(channelInput, { project, name });
      const p = requireProjectNamed(project);
      const created = await store.writer.submit(() => store.projects.createChannel(p.id, name));
      if (!created) throw new Conflict(`A channel named "${name}" already exists in project "${project}".`);
      hub?.publish({ type: "channel", projectId: p.id, project: p.name, channel: name });
      return created;
    },

    eventCount(project: string, channel?: string): number {
      if (channel) return store.projects.countEvents({ channelId: requireChannel(project, channel).channel.id });
      return store.projects.countEvents({ projectId: requireProjectNamed(project).id });
    },

    /** Throws when the project cannot be deleted (the default project), so a dialog can say so first. */
    assertDeletable(name: string): Project {
      const p = requireProjectNamed(name);
      if (p.name === defaultProject) {
        throw new Forbidden(`"${p.name}" is the default project (SIGNALBOARD_DEFAULT_PROJECT): metrics sent without a project go there, and it is created again at every start. Delete its channels instead, or choose another default project.`);
      }
      return p;
    },

    async deleteProject(name: string): Promise<void> {
      const p = this.assertDeletable(name);
      await deleteEvents(store, { projectId: p.id });
      await store.writer.submit(() => store.projects.delete(p.id));
    },

    async deleteChannel(project: string, name: string): Promise<void> {
      const { project: p, channel } = requireChannel(project, name);
      await deleteEvents(store, { projectId: p.id, channelId: channel.id });
      await store.writer.submit(() => store.projects.deleteChannel(channel));
    },

    async setRetention(name: string, days: number | null): Promise<Project> {
      const p = requireProjectNamed(name);
      if (days !== null && (!Number.isInteger(days) || days < 1 || days > 36_500)) throw new ValidationError([{ path: "days", type: "too_small", message: "days: keep events for 1 to 36500 days, or off" }]);
      await store.writer.submit(() => store.projects.setRetention(p.id, days));
      return { ...p, retentionDays: days };
    },

    /** Deletes the events of projects with a retention period that are older than it. */
    async pruneExpired(now = Date.now()): Promise<number> {
      let deleted = 0;
      for (const p of store.projects.list()) {
        if (p.retentionDays) deleted += await deleteEvents(store, { projectId: p.id, before: now - p.retentionDays * 86_400_000 });
      }
      return deleted;
    },
  };
}

export type ProjectService = ReturnType<typeof projectService>;
