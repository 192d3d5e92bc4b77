// GET /v1/stream: stored events as JSON over SSE, for scripts (`signalboard tail`). A reconnecting
// client sends Last-Event-ID (or ?last_event_id=) and first gets what it missed, in order, once
// (up to REPLAY_LIMIT events; see http/resume.ts for when it gets `event: reset` instead).
import { z } from "zod";
import { eventMatcher } from "../domain/filter.ts";
import * as rule from "../domain/input-fields.ts";
import { validate } from "../domain/validation.ts";
import type { EventFilter } from "../model/filter.ts";
import { ChannelNeedsProject } from "../errors.ts";
import { type ResetReason, resume } from "../http/resume.ts";
import { frame, sseResponse } from "../http/sse.ts";
import type { View } from "../live/fanout.ts";
import type { LiveMessage } from "../live/hub.ts";
import { apiEvent } from "./views.ts";
import type { StoredEvent } from "../model/event.ts";
import type { Scope } from "../model/access.ts";
import type { Edge } from "../http/edge.ts";
import { type BaseContext, projectInQuery, type Route, route } from "../http/routes.ts";
import type { Services } from "../services.ts";

/** A reconnecting client is sent at most this many missed events; past that, `event: reset`. */
export const REPLAY_LIMIT = 10_000;

export const streamQuery = z.object({
  project: rule.projectName.optional(),
  channel: rule.channelName.optional(),
  last_event_id: z
    .string()
    .regex(/^\d{1,15}$/, "must be an event id (a positive integer)")
    .transform(Number)
    .optional(),
});

const encode = (event: StoredEvent) => frame({ id: event.id, data: JSON.stringify(apiEvent(event)) });

const RESET_MESSAGES: Record<ResetReason, string> = {
  too_far_behind:
    "This stream missed too many events to replay them. Read what you missed with GET /v1/events; the stream continues from the newest event.",
  too_many: `This stream missed more than ${REPLAY_LIMIT} matching events. Read what you missed with GET /v1/events; the stream continues from the newest event.`,
  unknown_id:
    "Last-Event-ID is newer than any event this server has (was the database restored from a backup?). The stream continues from the newest event.",
};

/** `id:` moves the client's Last-Event-ID to the newest event, so its next reconnect resumes from there. */
const reset = (newest: number, reason: ResetReason) =>
  frame({
    id: newest,
    event: "reset",
    data: JSON.stringify({ reason, last_event_id: newest, message: RESET_MESSAGES[reason] }),
  });

export function streamRoutes({ fanout, feed, projects, tokens }: Services, { streams }: Edge): Route[] {
  const doc = {
    summary: "Stream events (SSE)",
    description: "Server-Sent Events of stored events as JSON; resumes after Last-Event-ID. Full-access tokens only.",
    query: streamQuery,
    example: "id: 1\ndata: {...event...}",
    contentType: "text/event-stream",
  };
  return [
    route({
      method: "GET",
      path: "/v1/stream",
      access: "full",
      doc,
      project: projectInQuery(),
      handle: ({ request, server, scope }) => openStream(request, server, scope),
    }),
  ];

  async function openStream(request: Request, server: BaseContext["server"], scope: Scope): Promise<Response> {
    const url = new URL(request.url);
    const q = validate(streamQuery, Object.fromEntries(url.searchParams), "query");
    // A channel need not exist yet: tailing one before its first event is normal.
    if (q.channel && !q.project) throw new ChannelNeedsProject();
    const project = q.project ? await projects.requireProject(q.project) : null;
    const filter: EventFilter = { projectId: project?.id, channel: project ? q.channel : undefined };
    const header = request.headers.get("last-event-id");
    const lastSeen = header && /^\d{1,15}$/.test(header) ? Number(header) : (q.last_event_id ?? null);
    server?.timeout(request, 0);

    const matches = eventMatcher(filter);
    // Streams of the same project and channel share their frames (live/fanout.ts). Every event is
    // sent: a script reading the stream must not miss any.
    const view: View<LiveMessage[]> = {
      key: `api ${filter.projectId ?? "*"} ${filter.channel ?? "*"}`,
      projectId: filter.projectId,
      start: () => [],
      keep: (pending, message) => message.type === "event" && matches(message.event) && pending.push(message) > 0,
      frames: (pending, render) =>
        pending.flatMap((m) =>
          m.type === "event" ? [{ frame: render(m, "api-json", () => encode(m.event)), id: m.event.id }] : [],
        ),
    };
    return sseResponse({
      registry: streams,
      fanout,
      signal: request.signal,
      credential: tokens.credential(scope, project?.name ?? null),
      start: (stream) => resume(stream, { feed, view, filter, lastSeen, limit: REPLAY_LIMIT, encode, reset }),
    });
  }
}
