// The writes of ingest, each run inside a write transaction (the writer's group commit, on this
// thread or on the writer thread: store/writer-thread.ts). Plain data in, plain data out, so either
// can run them. With an Idempotency-Key, the first answer is stored in the same transaction as the
// write, and a retry (even one racing the first request) gets that answer back instead of writing again.
import { IdempotencyKeyReused, ValidationError } from "../errors.ts";
import type { Store } from "../store/index.ts";
import { type AnswerKind, answer } from "./answers.ts";
import { queueNotifications } from "./notifications.ts";
import { requireProject } from "./projects.ts";
import type { Properties } from "../model/profile.ts";
import type { StoredEvent, NewEvent, Tags } from "../model/event.ts";
import type { Metric, MetricValue } from "../model/metric.ts";
import type { Project } from "../model/project.ts";

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

/** A keyed request: who sent it, its key, a digest of the request, and which answer it gets. */
export type Idempotency = { tokenId: number; key: string; fingerprint: string; answer: AnswerKind };

/** What a write did: its result and the answer stored for its key, or the answer stored before. */
export type Written<T> = { result: T; answer: string | null; replayed?: undefined } | { replayed: string; result?: undefined; answer?: undefined };

type Common = { idempotency?: Idempotency; now: number };

/** The stored answer for a known key, else the work and its answer. */
function keyed<T>(store: Store, { idempotency: idem, now }: Common, work: () => T): Written<T> {
  const kept = idem ? store.idempotency.find(idem.tokenId, idem.key, now) : null;
  if (kept) {
    if (kept.fingerprint !== idem!.fingerprint) throw new IdempotencyKeyReused();
    return { replayed: kept.response };
  }
  const result = work();
  if (!idem) return { result, answer: null };
  const text = answer(idem.answer, result);
  store.idempotency.save(idem.tokenId, idem.key, idem.fingerprint, text, now);
  return { result, answer: text };
}

export const ingestWrites = {
  logEvent(store: Store, w: Common & { input: LogInput; baseUrl: string }): { written: Written<StoredEvent>; newChannel: boolean } {
    let newChannel = false;
    const written = keyed(store, w, () => {
      const project = requireProject(store, w.input.project);
      const channel = store.projects.ensureChannel(project.id, w.input.channel, w.now);
      newChannel = channel.created;
      const event = store.events.insert(newEvent(project, channel.id, w.input, w.now));
      // Queued with the event, in its transaction: an acknowledged event's notifications survive a crash.
      if (event.notify && !event.historical) queueNotifications(store, event, w.baseUrl, w.now);
      return event;
    });
    return { written, newChannel };
  },

  /** Sets the value, or adds to it with `increment` (a metric that does not exist starts at 0). */
  recordMetric(store: Store, w: Common & { input: MetricInput; project: string }): Written<Metric> {
    return keyed(store, w, (): Metric => {
      const project = requireProject(store, w.project);
      const current = store.metrics.current(project.id, w.input.title);
      const value = w.input.increment ? incremented(w.input.title, current?.value ?? null, w.input.value) : w.input.value;
      const saved = store.metrics.save({ projectId: project.id, title: w.input.title, value, icon: w.input.icon ?? null, now: w.now });
      return { id: saved.id, projectId: project.id, project: project.name, title: w.input.title, value, icon: saved.icon, updatedAt: w.now };
    });
  },

  identify(store: Store, w: Common & { input: IdentifyInput }): Written<null> {
    return keyed(store, w, () => {
      const project = requireProject(store, w.input.project);
      store.profiles.identify(project.id, w.input.userId, w.input.properties, w.now);
      return null;
    });
  },

  group(store: Store, w: Common & { input: GroupInput }): Written<null> {
    return keyed(store, w, () => {
      const project = requireProject(store, w.input.project);
      store.profiles.group(project.id, w.input.groupId, w.input.properties, w.now);
      if (w.input.userId) store.profiles.addMember(project.id, w.input.groupId, w.input.userId, w.now);
      return null;
    });
  },
};

export type IngestWrites = typeof ingestWrites;
export type IngestWrite = keyof IngestWrites;

/** The row for an event sent as `input`, received `now`: at its own timestamp if it has one. */
export function newEvent(project: Project, channelId: number, input: LogInput, now: number): NewEvent {
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
