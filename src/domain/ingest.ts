// Ingest: events, metrics and user traits. Each operation checks access, then runs its writes in
// the writer's next group commit, then publishes to the live hub once they are on disk.
//
// With an Idempotency-Key, the first answer is stored in the same transaction as the write, and a
// retry (even one racing the first request) gets that answer back instead of writing again.
import { IdempotencyKeyReused, ValidationError } from "../http/errors.ts";
import type { Hub } from "../live/hub.ts";
import type { EventRow, NewEvent, Tags } from "../store/events.ts";
import type { Store } from "../store/index.ts";
import type { MetricRow, MetricValue } from "../store/metrics.ts";
import type { ProjectRow } from "../store/projects.ts";
import { assertCanNotify, assertCanSendEvent, assertCanWriteProject, type Scope } from "./access.ts";
import { queueNotifications } from "./notifications.ts";
import { requireProject } from "./projects.ts";
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

/** A keyed request: who sent it, its key, a digest of the request, and how its answer is written. */
export type Idempotency<T> = { tokenId: number; key: string; fingerprint: string; answer: (result: T) => string };

/** How a write is asked for: with an Idempotency-Key, with the signal of the request that asked (a
 * write whose client left before it began is not made), at a given time (tests). */
export type WriteOptions<T> = { idempotency?: Idempotency<T>; signal?: AbortSignal; now?: number };

/** What a write did: its result and the answer stored for its key, or the answer stored before. */
export type Written<T> = { result: T; answer: string | null; replayed?: undefined } | { replayed: string; result?: undefined; answer?: undefined };

export function ingestService({ store, hub, defaultProject, baseUrl }: IngestDeps) {
  /** Inside a write transaction: the stored answer for a known key, else the work and its answer. */
  function keyed<T>(idem: Idempotency<T> | undefined, now: number, work: () => T): Written<T> {
    const kept = idem ? store.idempotency.find(idem.tokenId, idem.key, now) : null;
    if (kept) {
      if (kept.fingerprint !== idem!.fingerprint) throw new IdempotencyKeyReused();
      return { replayed: kept.response };
    }
    const result = work();
    if (!idem) return { result, answer: null };
    const answer = idem.answer(result);
    store.idempotency.save(idem.tokenId, idem.key, idem.fingerprint, answer, now);
    return { result, answer };
  }

  return {
    async logEvent(scope: Scope, input: LogInput, { idempotency: idem, signal, now = Date.now() }: WriteOptions<EventRow> = {}): Promise<Written<EventRow>> {
      assertCanSendEvent(scope, input.project, input.channel);
      const historical = input.timestamp !== undefined;
      if (input.notify && !historical) assertCanNotify(scope); // a historical event never pushes
      const written = await store.writer.submit(() => {
        let newChannel = false;
        const done = keyed(idem, now, () => {
          const project = requireProject(store, input.project);
          const channel = store.projects.ensureChannel(project.id, input.channel, now);
          newChannel = channel.created;
          const event = store.events.insert(newEvent(project, channel.id, input, now));
          // Queued with the event, in its transaction: an acknowledged event's notifications survive a crash.
          if (event.notify && !historical) queueNotifications(store, event, baseUrl, now);
          return event;
        });
        return { done, newChannel };
      }, signal);
      const { done, newChannel } = written;
      if (done.result) {
        if (newChannel) hub.publish({ type: "channel", projectId: done.result.projectId, project: done.result.project, channel: done.result.channel });
        hub.publish({ type: "event", event: done.result });
      }
      return done;
    },

    /** Sets the value, or adds to it with `increment` (a metric that does not exist starts at 0). */
    async recordMetric(scope: Scope, input: MetricInput, { idempotency: idem, signal, now = Date.now() }: WriteOptions<MetricRow> = {}): Promise<Written<MetricRow>> {
      const projectName = input.project ?? (scope.kind === "public" ? scope.project : defaultProject);
      assertCanWriteProject(scope, projectName, "metrics");
      const written = await store.writer.submit(() =>
        keyed(idem, now, (): MetricRow => {
          const project = requireProject(store, projectName);
          const current = store.metrics.current(project.id, input.title);
          const value = input.increment ? incremented(input.title, current?.value ?? null, input.value) : input.value;
          const saved = store.metrics.save({ projectId: project.id, title: input.title, value, icon: input.icon ?? null, now });
          return { id: saved.id, projectId: project.id, project: project.name, title: input.title, value, icon: saved.icon, updatedAt: now };
        }),
        signal,
      );
      if (written.result) hub.publish({ type: "metric", metric: written.result });
      return written;
    },

    async identify(scope: Scope, input: IdentifyInput, { idempotency: idem, signal, now = Date.now() }: WriteOptions<null> = {}): Promise<Written<null>> {
      assertCanWriteProject(scope, input.project, "user properties");
      return store.writer.submit(() =>
        keyed(idem, now, () => {
          const project = requireProject(store, input.project);
          store.profiles.identify(project.id, input.userId, input.properties, now);
          return null;
        }),
        signal,
      );
    },

    async group(scope: Scope, input: GroupInput, { idempotency: idem, signal, now = Date.now() }: WriteOptions<null> = {}): Promise<Written<null>> {
      assertCanWriteProject(scope, input.project, "group properties");
      return store.writer.submit(() =>
        keyed(idem, now, () => {
          const project = requireProject(store, input.project);
          store.profiles.group(project.id, input.groupId, input.properties, now);
          if (input.userId) store.profiles.addMember(project.id, input.groupId, input.userId, now);
          return null;
        }),
        signal,
      );
    },
  };
}

/** The row for an event sent as `input`, received `now`: at its own timestamp if it has one. */
export function newEvent(project: ProjectRow, channelId: number, input: LogInput, now: number): NewEvent {
  const historical = input.timestamp !== undefined;
  return {
    projectId: project.id,
    project: project.name,
    channelId,
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
  };
}

function incremented(title: string, current: MetricValue | null, delta: MetricValue): number {
  if (typeof delta !== "number") throw ValidationError.field("value", "invalid_type", `value: must be a number to increment metric "${title}", got a string`);
  if (typeof current === "string") {
    throw ValidationError.field("value", "not_incrementable", `value: metric "${title}" holds text (${JSON.stringify(current)}) and cannot be incremented; send it without increment to replace the value`);
  }
  const result = (current ?? 0) + delta;
  if (!Number.isFinite(result)) throw ValidationError.field("value", "too_big", `value: adding ${delta} to metric "${title}" would leave the range of numbers; set a new value instead`);
  return result;
}

export type IngestService = ReturnType<typeof ingestService>;
