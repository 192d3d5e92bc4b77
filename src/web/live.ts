// The dashboard's live stream: HTML fragments over SSE for the page that is open. New events of
// the feed (matching its filters), metric widgets, new channels for the sidebar. A reconnecting
// page sends the last event id it has and first gets what it missed (http/resume.ts); when that is
// too much to patch in, it is told to reload. Historical events are not pushed to the top of a
// feed: they appear in their place when that part of the feed is loaded.
import { Elysia } from "elysia";
import type { Deps } from "../app.ts";
import { eventMatcher } from "../domain/filter.ts";
import { resume } from "../http/resume.ts";
import { frame, sseResponse, type View } from "../http/sse.ts";
import type { EventRow } from "../store/events.ts";
import type { MetricRow } from "../store/metrics.ts";
import { readFilters, toEventQuery } from "./filters.ts";
import type { Kit } from "./kit.ts";
import { eventItem } from "./views/events.ts";
import { channelLink } from "./views/layout.ts";
import { metricWidget } from "./views/project.ts";

/** More missed events than this, and the page reloads instead of inserting them one by one. */
const REPLAY_LIMIT = 200;

export function liveRoutes(deps: Deps, kit: Kit) {
  const { web, store, hub, streams, feed, accounts } = deps;

  const feedFrame = (e: EventRow, showChannel: boolean) => frame({ id: e.id, event: "feed", data: eventItem(e, { showChannel, fresh: true }).value });
  const toastFrame = (e: EventRow) => frame({ event: "toast", data: JSON.stringify({ text: `${e.icon ? `${e.icon} ` : ""}${e.name} · #${e.channel}`, href: `/p/${encodeURIComponent(e.project)}/events/${e.id}` }) });
  const metricFrame = (m: MetricRow) => frame({ event: "metric", data: metricWidget(m, { fresh: true }).value });
  const reloadFrame = (newest: number) => frame({ id: newest, event: "reload", data: "too many missed events" });

  return new Elysia({ name: "web.live" }).get("/p/:project/live", ({ request, params, server }) => {
    const session = web.requireSession(request);
    const project = kit.project(params.project);
    const url = new URL(request.url);
    const filters = readFilters(url.searchParams);
    const filter = { ...feed.filterOf(toEventQuery(project.name, filters)), liveOnly: true };
    const wanted = eventMatcher(filter);
    const showChannel = url.searchParams.get("hide") !== "channel";
    const format = `feed:${showChannel ? "full" : "compact"}`;
    const withMetrics = url.searchParams.get("metrics") === "1";
    const header = request.headers.get("last-event-id") ?? url.searchParams.get("last_event_id") ?? "";
    const lastSeen = /^\d{1,15}$/.test(header) ? Number(header) : null;
    server?.timeout(request, 0);

    // Dashboards showing the same page share its frames (see http/sse.ts); the key says what it shows.
    const view: View = {
      key: `web ${project.id} ${format} ${withMetrics} ${JSON.stringify(filter)}`,
      route(published, emit) {
        const { message } = published;
        if (message.type === "event") {
          // A notify event, from any project, also pops up as a toast while a dashboard is open.
          if (message.event.notify && !message.event.historical) emit(published.render("toast", () => toastFrame(message.event)));
          if (wanted(message.event)) emit(published.render(format, () => feedFrame(message.event, showChannel)), message.event.id);
        } else if (message.type === "metric") {
          if (withMetrics && message.metric.projectId === project.id) emit(published.render("metric", () => metricFrame(message.metric)));
        } else if (message.type === "channel" && message.projectId === project.id) {
          emit(published.render("channel", () => frame({ event: "channel", data: channelLink(message.project, message.channel).value })));
        }
      },
    };
    return sseResponse({
      registry: streams,
      signal: request.signal,
      credential: accounts.credential(session),
      async start(stream) {
        if (withMetrics) for (const m of store.metrics.list(project.id)) stream.send(frame({ event: "metric", data: metricWidget(m).value }));
        await resume(stream, { feed, hub, view, filter, lastSeen, limit: REPLAY_LIMIT, encode: (e) => feedFrame(e, showChannel), reset: reloadFrame });
      },
    });
  });
}
