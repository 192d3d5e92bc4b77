// GET /v1/stream: stored events as JSON over SSE, for scripts (`signalboard tail`). A reconnecting
// client sends Last-Event-ID (or ?last_event_id=) and first gets what it missed, in order, once.
import { Elysia } from "elysia";
import { z } from "zod";
import type { Deps } from "../app.ts";
import { assertCanRead } from "../domain/access.ts";
import * as rule from "../domain/rules.ts";
import { validate } from "../domain/validation.ts";
import type { EventRow } from "../store/events.ts";
import { ChannelNeedsProject } from "../http/errors.ts";
import { frame, sseResponse, type View } from "../http/sse.ts";
import { apiEvent } from "./views.ts";

const BACKLOG_PAGE = 500;

export const streamQuery = z.object({
  project: rule.projectName.optional(),
  channel: rule.channelName.optional(),
  last_event_id: z.string().regex(/^\d{1,15}$/, "must be an event id (a positive integer)").transform(Number).optional(),
});

const encode = (event: EventRow) => frame({ id: event.id, data: JSON.stringify(apiEvent(event)) });

export function streamApi({ guard, hub, store, projects, streams }: Deps) {
  return new Elysia({ name: "api.stream" }).get("/v1/stream", ({ request, server }) => {
    assertCanRead(guard.authenticate(request, server));
    const url = new URL(request.url);
    const q = validate(streamQuery, Object.fromEntries(url.searchParams), "query");
    // A channel need not exist yet: tailing one before its first event is normal.
    if (q.channel && !q.project) throw new ChannelNeedsProject();
    const project = q.project ? projects.requireProject(q.project) : null;
    const scope = { projectId: project?.id, channel: project ? q.channel : undefined };
    const header = request.headers.get("last-event-id");
    const resumeFrom = header && /^\d+$/.test(header) ? Number(header) : q.last_event_id;
    server?.timeout(request, 0);

    const matches = (e: EventRow) => (scope.projectId === undefined || e.projectId === scope.projectId) && (scope.channel === undefined || e.channel === scope.channel);
    // Streams of the same project and channel share their frames (see http/sse.ts).
    const view: View = {
      key: `api ${scope.projectId ?? "*"} ${scope.channel ?? "*"}`,
      route(published, emit) {
        const { message } = published;
        if (message.type === "event" && matches(message.event)) emit(published.render("api-json", () => encode(message.event)), message.event.id);
      },
    };
    return sseResponse({
      registry: streams,
      signal: request.signal,
      start({ send, follow }) {
        let lastSent = resumeFrom ?? store.events.lastId();
        if (resumeFrom !== undefined) {
          // A client far behind gets what fits in its queue, then is dropped and resumes from there.
          backlog: for (let page = store.events.since(lastSent, scope, BACKLOG_PAGE); page.length; page = store.events.since(lastSent, scope, BACKLOG_PAGE)) {
            for (const event of page) {
              if (!send(encode(event))) break backlog;
              lastSent = event.id;
            }
          }
        }
        follow(hub, view, lastSent);
      },
    });
  });
}
