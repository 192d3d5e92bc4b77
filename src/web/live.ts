// The dashboard's live stream: HTML fragments over SSE for the page that is open. New events of
// the feed (matching its filters), metric widgets, new channels for the sidebar. A reconnecting
// page sends the last event id it has and first gets what it missed; historical events are not
// pushed to the top of a feed: they appear in their place when that part of the feed is loaded.
import { Elysia } from "elysia";
import type { Deps } from "../app.ts";
import { frame, sseResponse, type View } from "../http/sse.ts";
import type { EventRow } from "../store/events.ts";
import type { MetricRow } from "../store/metrics.ts";
import { matcher, readFilters } from "./filters.ts";
import type { Kit } from "./kit.ts";
import { eventItem } from "./views/events.ts";
import { channelLink } from "./views/layout.ts";
import { metricWidget } from "./views/project.ts";

const BACKLOG_LIMIT = 200;

export function liveRoutes(deps: Deps, kit: Kit) {
  const { web, store, hub, streams } = deps;

  const feedFrame = (e: EventRow, showChannel: boolean) => frame({ id: e.id, event: "feed", data: eventItem(e, { showChannel, fresh: true }).value });
  const toastFrame = (e: EventRow) => frame({ event: "toast", data: JSON.stringify({ text: `${e.icon ? `${e.icon} ` : ""}${e.name} · #${e.channel}`, href: `/p/${encodeURIComponent(e.project)}/events/${e.id}` }) });
  const metricFrame = (m: MetricRow) => frame({ event: "metric", data: metricWidget(m, { fresh: true }).value });

  return new Elysia({ name: "web.live" }).get("/p/:project/live", ({ request, params, server }) => {
    web.requireSession(request);
    const project = kit.project(params.project);
    const url = new URL(request.url);
    const filters = readFilters(url.searchParams);
    const matches = matcher(filters);
    const showChannel = url.searchParams.get("hide") !== "channel";
    const format = `feed:${showChannel ? "full" : "compact"}`;
    const withMetrics = url.searchParams.get("metrics") === "1";
    const header = request.headers.get("last-event-id") ?? url.searchParams.get("last_event_id") ?? "";
    const resumeFrom = /^\d{1,15}$/.test(header) ? Number(header) : null;
    server?.timeout(request, 0);

    const wanted = (e: EventRow) => e.projectId === project.id && !e.historical && matches(e);
    const missedEvents = (after: number): EventRow[] | null => {
      const found: EventRow[] = [];
      for (let page = store.events.since(after, { projectId: project.id }, 500); page.length; page = store.events.since(page.at(-1)!.id, { projectId: project.id }, 500)) {
        found.push(...page.filter(wanted));
        if (found.length > BACKLOG_LIMIT) return null;
      }
      return found;
    };
    // Dashboards showing the same page share its frames (see http/sse.ts); the key says what it shows.
    const view: View = {
      key: `web ${project.id} ${format} ${withMetrics} ${JSON.stringify(filters)}`,
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
      start({ send, follow }) {
        let lastSent = resumeFrom ?? store.events.lastId();
        if (resumeFrom !== null) {
          const missed = missedEvents(resumeFrom);
          // Too much to catch up on fragment by fragment: the page reloads itself instead.
          if (missed === null) send(frame({ event: "reload", data: "too many missed events" }));
          else for (const e of missed) send(feedFrame(e, showChannel));
          lastSent = Math.max(lastSent, store.events.lastId());
        }
        if (withMetrics) for (const m of store.metrics.list(project.id)) send(frame({ event: "metric", data: metricWidget(m).value }));
        follow(hub, view, lastSent);
      },
    });
  });
}
