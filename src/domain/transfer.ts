// Export of a project's events as NDJSON: one event per line, the API's JSON shape, oldest first.
// (Import is ingest's: IngestService.importEvents.)
import { NotFound } from "../errors.ts";
import type { Store } from "../store/store.ts";
import { eventJson } from "./event-json.ts";
import { requireProject } from "./projects.ts";

const PAGE = 1000;

export function transferService(store: Store) {
  return {
    /** The project's events (or a channel's), oldest first, one JSON line each. */
    async *exportEvents(projectName: string, channel?: string): AsyncGenerator<string> {
      const project = await requireProject(store, projectName);
      if (channel && !(await store.projects.findChannel(project.id, channel))) throw new NotFound(`Channel "${channel}" does not exist in project "${projectName}".`);
      let after = { ts: Number.MIN_SAFE_INTEGER, id: 0 };
      for (;;) {
        const page = await store.events.list({ projectId: project.id, channel, after, limit: PAGE });
        for (const e of page) yield JSON.stringify(eventJson(e));
        if (page.length < PAGE) return;
        const last = page.at(-1)!;
        after = { ts: last.ts, id: last.id };
      }
    },
  };
}
