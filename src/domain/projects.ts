// Projects and channels: creation with clear refusals, deletion that says what goes with it.
import { z } from "zod";
import { Conflict, NotFound } from "../http/errors.ts";
import type { Hub } from "../live/hub.ts";
import type { Store } from "../store/index.ts";
import type { ChannelRow, ProjectRow } from "../store/projects.ts";
import { channelName, projectName } from "./rules.ts";
import { validate } from "./validation.ts";

const projectInput = z.object({ name: projectName });
const channelInput = z.object({ project: projectName, name: channelName });

export function projectService(store: Store, hub?: Hub) {
  function requireProject(name: string): ProjectRow {
    const project = store.projects.findByName(name);
    if (!project) throw new NotFound(`Project "${name}" does not exist.`);
    return project;
  }

  function requireChannel(project: string, name: string): { project: ProjectRow; channel: ChannelRow } {
    const p = requireProject(project);
    const channel = store.projects.findChannel(p.id, name);
    if (!channel) throw new NotFound(`Channel "${name}" does not exist in project "${project}".`);
    return { project: p, channel };
  }

  return {
    requireProject,
    requireChannel,

    async create(name: string): Promise<ProjectRow> {
      validate(projectInput, { name });
      const created = await store.writer.submit(() => store.projects.create(name));
      if (!created) throw new Conflict(`A project named "${name}" already exists.`);
      return created;
    },

    /** Creates the project if it is missing; used for the default project at start. */
    async ensure(name: string): Promise<ProjectRow> {
      return store.projects.findByName(name) ?? (await store.writer.submit(() => store.projects.create(name))) ?? requireProject(name);
    },

    list(): ProjectRow[] {
      return store.projects.list();
    },

    channels(project: string): ChannelRow[] {
      return store.projects.listChannels(requireProject(project).id);
    },

    async createChannel(project: string, name: string): Promise<ChannelRow> {
      validate(channelInput, { project, name });
      const p = requireProject(project);
      const created = await store.writer.submit(() => store.projects.createChannel(p.id, name));
      if (!created) throw new Conflict(`A channel named "${name}" already exists in project "${project}".`);
      hub?.publish({ type: "channel", projectId: p.id, project: p.name, channel: name });
      return created;
    },

    eventCount(project: string, channel?: string): number {
      if (channel) return store.projects.countEvents({ channelId: requireChannel(project, channel).channel.id });
      return store.projects.countEvents({ projectId: requireProject(project).id });
    },

    async deleteProject(name: string): Promise<void> {
      const p = requireProject(name);
      await store.writer.submit(() => store.projects.delete(p.id));
    },

    async deleteChannel(project: string, name: string): Promise<void> {
      const { channel } = requireChannel(project, name);
      await store.writer.submit(() => store.projects.deleteChannel(channel));
    },
  };
}

export type ProjectService = ReturnType<typeof projectService>;
