// Ingest: events, metrics and user traits. Each operation checks access, then runs its writes in
// the writer's next group commit, then publishes to the live hub once they are on disk.
import { NotFound, ValidationError } from "../http/errors.ts";
import type { Hub } from "../live/hub.ts";
import type { EventRow, Tags } from "../store/events.ts";
import type { Store } from "../store/index.ts";
import type { MetricRow, MetricValue } from "../store/metrics.ts";
import type { ProjectRow } from "../store/projects.ts";
import { assertCanSendEvent, assertCanWriteProject, type Scope } from "./access.ts";
import { queueNotifications } from "./notifications.ts";
import type { Properties } from "./rules.ts";

export type LogInput = {
  project: string;
  channel: string;
  event: string;
  description?: string;
  icon?: string;
  notify?: boolean;
  tags?: Tags;
  parser?: "text" | "markdown";
  userId?: string;
  /** Unix seconds; given means historical: stored at that time and never notified. */
  timestamp?: number;
};

export type MetricInput = { project?: string; title: string; value: MetricValue; icon?: string; increment?: boolean };
export type IdentifyInput = { project: string; userId: string; properties: Properties };
export type GroupInput = { project: string; groupId: string; userId?: string; properties: Properties };

export type IngestDeps = { store: Store; hub: Hub; defaultProject: string; baseUrl: string };

export function ingestService({ store, hub, defaultProject, baseUrl }: IngestDeps) {
  function requireProject(name: string): ProjectRow {
    const project = store.projects.findByName(name);
    if (!project) throw new NotFound(`Project "${name}" does not exist. Create it in the dashboard or with: signalboard project create ${name}`);
    return project;
  }

  return {
    async logEvent(scope: Scope, input: LogInput, now = Date.now()): Promise<EventRow> {
      assertCanSendEvent(scope, input.project, input.channel);
      const historical = input.timestamp !== undefined;
      const created = await store.writer.submit(() => {
        const project = requireProject(input.project);
        const channel = store.projects.ensureChannel(project.id, input.channel, now);
        const event = store.events.insert({
          projectId: project.id,
          project: project.name,
          channelId: channel.id,
          channel: input.channel,
          name: input.event,
          description: input.description ?? null,
          icon: input.icon ?? null,
          notify: input.notify ?? false,
          parser: input.parser ?? "text",
          userId: input.userId ?? null,
          tags: input.tags && Object.keys(input.tags).length ? input.tags : null,
          ts: historical ? Math.round(input.timestamp! * 1000) : now,
          receivedAt: now,
          historical,
        });
        // Queued with the event, in its transaction: an acknowledged event's notifications survive a crash.
        if (event.notify && !historical) queueNotifications(store, event, baseUrl, now);
        return { event, newChannel: channel.created };
      });
      const { event } = created;
      if (created.newChannel) hub.publish({ type: "channel", projectId: event.projectId, project: event.project, channel: event.channel });
      hub.publish({ type: "event", event });
      return event;
    },

    /** Sets the value, or adds to it with `increment` (a metric that does not exist starts at 0). */
    async recordMetric(scope: Scope, input: MetricInput, now = Date.now()): Promise<MetricRow> {
      const projectName = input.project ?? (scope.kind === "public" ? scope.project : defaultProject);
      assertCanWriteProject(scope, projectName, "metrics");
      const metric = await store.writer.submit((): MetricRow => {
        const project = requireProject(projectName);
        const current = store.metrics.current(project.id, input.title);
        const value = input.increment ? incremented(input.title, current?.value ?? null, input.value) : input.value;
        const saved = store.metrics.save({ projectId: project.id, title: input.title, value, icon: input.icon ?? null, now });
        return { id: saved.id, projectId: project.id, project: project.name, title: input.title, value, icon: saved.icon, updatedAt: now };
      });
      hub.publish({ type: "metric", metric });
      return metric;
    },

    async identify(scope: Scope, input: IdentifyInput, now = Date.now()): Promise<void> {
      assertCanWriteProject(scope, input.project, "user properties");
      await store.writer.submit(() => {
        const project = requireProject(input.project);
        store.profiles.identify(project.id, input.userId, input.properties, now);
      });
    },

    async group(scope: Scope, input: GroupInput, now = Date.now()): Promise<void> {
      assertCanWriteProject(scope, input.project, "group properties");
      await store.writer.submit(() => {
        const project = requireProject(input.project);
        store.profiles.group(project.id, input.groupId, input.properties, now);
        if (input.userId) store.profiles.addMember(project.id, input.groupId, input.userId, now);
      });
    },
  };
}

function incremented(title: string, current: MetricValue | null, delta: MetricValue): number {
  if (typeof delta !== "number") throw ValidationError.field("value", "invalid_type", `value: must be a number to increment metric "${title}", got a string`);
  if (typeof current === "string") {
    throw ValidationError.field("value", "not_incrementable", `value: metric "${title}" holds text (${JSON.stringify(current)}) and cannot be incremented; send it without increment to replace the value`);
  }
  return (current ?? 0) + delta;
}

export type IngestService = ReturnType<typeof ingestService>;
