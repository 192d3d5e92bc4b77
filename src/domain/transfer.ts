// Export and import of a project's events as NDJSON: one event per line, the API's JSON shape.
// An import stores events as historical (at their own timestamps), never notifies, and skips
// events that are already there.
import { createHash } from "node:crypto";
import { NotFound } from "../errors.ts";
import type { Store } from "../store/index.ts";
import { canonicalJson } from "./canonical.ts";
import { eventJson } from "./event-json.ts";
import { requireProject } from "./projects.ts";
import { type LogInput, newEvent } from "./ingest.ts";
import type { EventContent } from "../model/event.ts";

const PAGE = 1000;

/** The project's events, oldest first, one JSON line each. */
export function* exportEvents(store: Store, projectName: string, channel?: string): Generator<string> {
  const project = requireProject(store, projectName);
  if (channel && !store.projects.findChannel(project.id, channel)) throw new NotFound(`Channel "${channel}" does not exist in project "${projectName}".`);
  let after = { ts: Number.MIN_SAFE_INTEGER, id: 0 };
  for (;;) {
    const page = store.events.list({ projectId: project.id, channel, after, limit: PAGE });
    for (const e of page) yield JSON.stringify(eventJson(e));
    if (page.length < PAGE) return;
    const last = page.at(-1)!;
    after = { ts: last.ts, id: last.id };
  }
}

export type ImportProgress = { imported: number; skipped: number };
export type ImportLine = LogInput & { timestamp: number };

/**
 * Stores events as historical, a thousand per transaction; creates missing projects and channels.
 * Events already present are skipped, so running an import again adds nothing and finishes one
 * that was cut short. Present: the channel already holds as many events with that time and that
 * content (see contentKey) as the file has so far; a file that holds an event twice stores it
 * twice, and never more.
 */
export async function importEvents(store: Store, events: ImportLine[], onBatch: (progress: ImportProgress) => void = () => {}, now = Date.now()): Promise<ImportProgress & { createdProjects: string[] }> {
  const createdProjects: string[] = [];
  const progress = { imported: 0, skipped: 0 };
  const seen = new Map<string, number>(); // how often each event was met in the file so far
  for (let i = 0; i < events.length; i += PAGE) {
    const batch = events.slice(i, i + PAGE);
    const done = await store.writer.submit(() => storeBatch(store, batch, seen, now));
    // Counted only once committed: the writer may run a write again after a rollback.
    for (const [key, n] of done.seen) seen.set(key, n);
    createdProjects.push(...done.created);
    progress.imported += done.imported;
    progress.skipped += done.skipped;
    onBatch({ ...progress });
  }
  return { ...progress, createdProjects };
}

function storeBatch(store: Store, batch: ImportLine[], seenBefore: ReadonlyMap<string, number>, now: number) {
  const result = { imported: 0, skipped: 0, created: [] as string[], seen: new Map<string, number>() };
  for (const e of batch) {
    let project = store.projects.findByName(e.project);
    if (!project) {
      project = store.projects.create(e.project, now)!;
      result.created.push(e.project);
    }
    const channel = store.projects.ensureChannel(project.id, e.channel, now);
    const event = newEvent(project, channel.id, e, now); // a timestamp: historical, never notified
    const content = contentKey(event);
    const key = `${channel.id}:${event.ts}:${content}`;
    const inFile = (result.seen.get(key) ?? seenBefore.get(key) ?? 0) + 1;
    result.seen.set(key, inFile);
    const stored = store.events.contentAt(channel.id, event.ts).filter((other) => contentKey(other) === content).length;
    if (stored >= inFile) {
      result.skipped++;
      continue;
    }
    store.events.insert(event);
    result.imported++;
  }
  return result;
}

/** A digest of what an event says, the same whatever order its tags were written in. */
function contentKey(e: EventContent): string {
  return createHash("sha256").update(canonicalJson([e.name, e.description, e.icon, e.parser, e.userId, e.tags])).digest("base64");
}
