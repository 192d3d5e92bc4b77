// Export and import of a project's events as NDJSON: one event per line, the API's JSON shape.
// An import stores events as historical (at their own timestamps) and never notifies.
import { NotFound } from "../http/errors.ts";
import type { Store } from "../store/index.ts";
import { eventJson } from "./event-json.ts";
import { requireProject } from "./projects.ts";
import { type LogInput, newEvent } from "./ingest.ts";

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

/** Stores events as historical, a thousand per transaction; creates missing projects and channels. */
export async function importEvents(store: Store, events: (LogInput & { timestamp: number })[], now = Date.now()): Promise<{ imported: number; createdProjects: string[] }> {
  const createdProjects: string[] = [];
  for (let i = 0; i < events.length; i += PAGE) {
    const batch = events.slice(i, i + PAGE);
    await store.writer.submit(() => {
      for (const e of batch) {
        let project = store.projects.findByName(e.project);
        if (!project) {
          project = store.projects.create(e.project, now)!;
          createdProjects.push(e.project);
        }
        const channel = store.projects.ensureChannel(project.id, e.channel, now);
        store.events.insert(newEvent(project, channel.id, e, now)); // a timestamp: historical, never notified
      }
    });
  }
  return { imported: events.length, createdProjects };
}
