// The writes of ingest, each run inside a write transaction (store.tx: the writer's group commit, on
// this thread or on the writer thread: store/sqlite/writer-thread.ts). Plain data in, plain data out, so either
// can run them. With an Idempotency-Key, the first answer is stored in the same transaction as the
// write, and a retry (even one racing the first request) gets that answer back instead of writing again.
import { createHash } from "node:crypto";
import { IdempotencyKeyReused, ValidationError } from "../errors.ts";
import type { Repositories } from "../store/store.ts";
import { type AnswerKind, answer } from "./ingest-answers.ts";
import { canonicalJson } from "./canonical.ts";
import { queueNotifications } from "./notifications.ts";
import { requireProject } from "./projects.ts";
import { PRIORITY } from "./input-fields.ts";
import type { Properties } from "../model/profile.ts";
import type { EventContent, NewEvent, StoredEvent, Tags } from "../model/event.ts";
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
  /**
   * Unix milliseconds when a live event happened, at most `now` (OTLP's timeUnixNano of a recent
   * record): stored as its time without making it historical. Ignored with a timestamp; now when absent.
   */
  time?: number;
  /** 1 (min) to 5 (urgent); 3 when absent. */
  priority?: number;
};

export type MetricInput = { project?: string; title: string; value: MetricValue; icon?: string; increment?: boolean };
export type IdentifyInput = { project: string; userId: string; properties: Properties };
export type GroupInput = { project: string; groupId: string; userId?: string; properties: Properties };

/**
 * A keyed request: who sent it, its key, a digest of the request, and which answer it gets;
 * `keepMs`, how long the key is kept (a day unless given).
 */
export type Idempotency = { tokenId: number; key: string; fingerprint: string; answer: AnswerKind; keepMs?: number };

/** What a write did: its result and the answer stored for its key, or the answer stored before. */
export type Written<T> =
  | { result: T; answer: string | null; replayed?: undefined }
  | { replayed: string; result?: undefined; answer?: undefined };

type Common = { idempotency?: Idempotency; now: number };

/** The stored answer for a known key, else the work and its answer. */
async function keyed<T>(
  tx: Repositories,
  { idempotency: idem, now }: Common,
  work: () => Promise<T>,
): Promise<Written<T>> {
  if (!idem) return { result: await work(), answer: null };
  // Claimed before the work: a retry racing the first request waits for it, then gets its answer.
  const kept = await tx.idempotency.claim(idem.tokenId, idem.key, idem.fingerprint, now, idem.keepMs);
  if (kept) {
    if (kept.fingerprint !== idem.fingerprint) throw new IdempotencyKeyReused();
    return { replayed: kept.response };
  }
  const result = await work();
  const text = answer(idem.answer, result);
  await tx.idempotency.complete(idem.tokenId, idem.key, text);
  return { result, answer: text };
}

export const ingestWrites = {
  async logEvent(
    tx: Repositories,
    w: Common & { input: LogInput; baseUrl: string },
  ): Promise<{ written: Written<StoredEvent>; newChannel: boolean }> {
    let newChannel = false;
    const written = await keyed(tx, w, async () => {
      const project = await requireProject(tx, w.input.project);
      const channel = await tx.projects.ensureChannel(project.id, w.input.channel, w.now);
      newChannel = channel.created;
      const row = newEvent(project, channel.id, w.input, w.now);
      const notifies = row.notify && !row.historical;
      // Its id is wanted inside the write only by its notifications and a stored answer.
      const event = await tx.events.insert(row, { idNow: notifies || w.idempotency !== undefined });
      // Queued with the event, in its transaction: an acknowledged event's notifications survive a crash.
      if (notifies) await queueNotifications(tx, event, w.baseUrl, w.now);
      return event;
    });
    return { written, newChannel };
  },

  /** Sets the value, or adds to it with `increment` (a metric that does not exist starts at 0). */
  recordMetric(tx: Repositories, w: Common & { input: MetricInput; project: string }): Promise<Written<Metric>> {
    return keyed(tx, w, async (): Promise<Metric> => {
      const project = await requireProject(tx, w.project);
      const { title, icon = null } = w.input;
      if (w.input.increment) {
        const delta = w.input.value;
        if (typeof delta !== "number")
          throw ValidationError.field(
            "value",
            "invalid_type",
            `value: must be a number to increment metric "${title}", got a string`,
          );
        // One statement: increments from several requests (or instances) at once all count.
        const sum = await tx.metrics.increment({ projectId: project.id, title, delta, icon, now: w.now });
        if ("holds" in sum) {
          const what = typeof sum.holds === "boolean" ? "a boolean" : "text";
          throw ValidationError.field(
            "value",
            "not_incrementable",
            `value: metric "${title}" holds ${what} (${JSON.stringify(sum.holds)}) and cannot be incremented; send it without increment to replace the value`,
          );
        }
        // Thrown inside the write: the sum is undone with it.
        if (!Number.isFinite(sum.value))
          throw ValidationError.field(
            "value",
            "too_big",
            `value: adding ${delta} to metric "${title}" would leave the range of numbers; set a new value instead`,
          );
        return {
          id: sum.id,
          projectId: project.id,
          project: project.name,
          title,
          value: sum.value,
          icon: sum.icon,
          updatedAt: w.now,
        };
      }
      const saved = await tx.metrics.save({ projectId: project.id, title, value: w.input.value, icon, now: w.now });
      return {
        id: saved.id,
        projectId: project.id,
        project: project.name,
        title,
        value: w.input.value,
        icon: saved.icon,
        updatedAt: w.now,
      };
    });
  },

  identify(tx: Repositories, w: Common & { input: IdentifyInput }): Promise<Written<null>> {
    return keyed(tx, w, async () => {
      const project = await requireProject(tx, w.input.project);
      await tx.profiles.identify(project.id, w.input.userId, w.input.properties, w.now);
      return null;
    });
  },

  group(tx: Repositories, w: Common & { input: GroupInput }): Promise<Written<null>> {
    return keyed(tx, w, async () => {
      const project = await requireProject(tx, w.input.project);
      await tx.profiles.group(project.id, w.input.groupId, w.input.properties, w.now);
      if (w.input.userId) await tx.profiles.addMember(project.id, w.input.groupId, w.input.userId, w.now);
      return null;
    });
  },

  /**
   * Stores a batch of an import as historical events; creates missing projects and channels. An
   * event is skipped when its channel already holds `ordinal` events with its time and content
   * (the ordinal-th such event of the file is there already), so an import run again adds nothing.
   */
  async importBatch(
    tx: Repositories,
    w: { lines: ImportEntry[]; now: number },
  ): Promise<{ imported: number; skipped: number; created: string[] }> {
    const result = { imported: 0, skipped: 0, created: [] as string[] };
    for (const { line, ordinal } of w.lines) {
      let project = await tx.projects.findByName(line.project);
      if (!project) {
        project = (await tx.projects.create(line.project, w.now))!;
        result.created.push(line.project);
      }
      const channel = await tx.projects.ensureChannel(project.id, line.channel, w.now);
      const event = newEvent(project, channel.id, line, w.now); // a timestamp: historical, never notified
      const content = contentKey(event);
      const stored = (await tx.events.contentAt(channel.id, event.ts)).filter(
        (other) => contentKey(other) === content,
      ).length;
      if (stored >= ordinal) {
        result.skipped++;
        continue;
      }
      await tx.events.insert(event);
      result.imported++;
    }
    return result;
  },
};

/** A line of an import (an event with its timestamp), and how many events like it the file held up to it. */
export type ImportLine = LogInput & { timestamp: number };
export type ImportEntry = { line: ImportLine; ordinal: number };

/** What makes two imported events the same: where, when, and a digest of what they say. */
export function importKey(line: ImportLine): string {
  const e = newEvent({ id: 0, name: line.project, retentionDays: null, createdAt: 0 }, 0, line, 0);
  return `${line.project}\0${line.channel}\0${e.ts}\0${contentKey(e)}`;
}

/** A digest of what an event says, the same whatever order its tags were written in. */
function contentKey(e: EventContent): string {
  return createHash("sha256")
    .update(canonicalJson([e.name, e.description, e.icon, e.parser, e.userId, e.tags]))
    .digest("base64");
}

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
    ts: historical ? Math.round(input.timestamp! * 1000) : Math.min(input.time ?? now, now),
    receivedAt: now,
    historical,
    priority: input.priority ?? PRIORITY.normal,
  };
}
