// Export of a project's events as NDJSON: one event per line, the API's JSON shape, oldest first.
// (Import is ingest's: importEvents in ingest.ts.)
import { NotFound } from "../errors.ts";
import type { Store } from "../store/store.ts";
import { eventJson } from "./event-json.ts";
import { requireProject } from "./projects.ts";

/** Events per read: what an export holds in memory at once, whatever the project's size. */
const PAGE = 1000;

export function transferService(store: Store) {
  return {
    /**
     * The project's events (or a channel's), oldest first, one JSON line each, as they were at one
     * moment: every event acknowledged before the export began, whatever is written meanwhile.
     */
    async *exportEvents(projectName: string, channel?: string): AsyncGenerator<string> {
      const project = await requireProject(store, projectName);
      // An empty name is a channel too (one that cannot exist): `--channel "$UNSET"` must not export nothing and succeed.
      if (channel !== undefined && !(await store.projects.findChannel(project.id, channel)))
        throw new NotFound(`Channel "${channel}" does not exist in project "${projectName}".`);
      for await (const page of store.snapshotEvents({ projectId: project.id, channel }, PAGE)) {
        for (const e of page) yield JSON.stringify(eventJson(e));
      }
    },
  };
}
