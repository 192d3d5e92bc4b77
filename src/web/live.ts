// The dashboard's live stream: HTML fragments over SSE for the page that is open. New events of
// the feed (matching its filters), metric widgets, toasts, new channels for the sidebar (on every
// page of a project: a page without a feed or a metric asks for those alone). A reconnecting
// page sends the last event id it has and first gets what it missed (http/resume.ts); when that is
// too much to patch in, it is told to reload. Historical events are not pushed to the top of a
// feed: they appear in their place when that part of the feed is loaded.
import { reaches } from "../domain/access.ts";
import { eventMatcher } from "../domain/filter.ts";
import { resume } from "../http/resume.ts";
import { frame, sseResponse } from "../http/sse.ts";
import type { Framed, View } from "../live/fanout.ts";
import type { LiveMessage } from "../live/hub.ts";
import { readFilters, toEventQuery } from "./filters.ts";
import type { Kit } from "./kit.ts";
import { eventItem } from "./views/events.ts";
import { channelLink } from "./views/layout.ts";
import { metricWidget } from "./views/project.ts";
import type { StoredEvent } from "../model/event.ts";
import type { Metric } from "../model/metric.ts";
import type { Session } from "../model/user.ts";
import type { Edge } from "../http/edge.ts";
import { type BaseContext, type Route, route } from "../http/routes.ts";
import type { Services } from "../services.ts";

/** More missed events than this, and the page reloads instead of inserting them one by one. */
const REPLAY_LIMIT = 200;
/** More events than this stored since the page's last one, and it reloads without looking for them. */
const REPLAY_WINDOW = 10_000;
/** A page is sent at most this many new events per flush, the newest, and told how many more there were. */
export const FEED_CAP = 5;
const TOAST_CAP = 3;

export function liveRoutes({ fanout, feed, accounts }: Services, { streams }: Edge, kit: Kit): Route[] {
  const feedFrame = (e: StoredEvent, showChannel: boolean) =>
    frame({ id: e.id, event: "feed", data: eventItem(e, { showChannel, fresh: true }).value });
  const toastFrame = (e: StoredEvent) =>
    frame({
      event: "toast",
      data: JSON.stringify({
        text: `${e.icon ? `${e.icon} ` : ""}${e.name} · #${e.channel}`,
        href: `/p/${encodeURIComponent(e.project)}/events/${e.id}`,
      }),
    });
  const metricFrame = (m: Metric) => frame({ event: "metric", data: metricWidget(m, { fresh: true }).value });
  const reloadFrame = (newest: number) => frame({ id: newest, event: "reload", data: "too many missed events" });

  return [route({ method: "GET", path: "/p/:project/live", access: "viewer", handle: openLive })];

  async function openLive({ request, params, server, session }: BaseContext & { session: Session }): Promise<Response> {
    const project = await kit.project(params.project!);
    const url = new URL(request.url);
    const filters = readFilters(url.searchParams);
    const filter = { ...(await feed.filterOf(toEventQuery(project.name, filters))), liveOnly: true };
    const wanted = eventMatcher(filter);
    const showChannel = url.searchParams.get("hide") !== "channel";
    const format = `feed:${showChannel ? "full" : "compact"}`;
    const withMetrics = url.searchParams.get("metrics") === "1";
    // feed=0: a page without a feed (a metric's page) follows metrics and toasts only; with
    // toasts=0 too, new channels alone (the sidebar of a page with no stream of its own).
    const withFeed = url.searchParams.get("feed") !== "0";
    const withToasts = url.searchParams.get("toasts") !== "0";
    const header = request.headers.get("last-event-id") ?? url.searchParams.get("last_event_id") ?? "";
    const lastSeen = /^\d{1,15}$/.test(header) ? Number(header) : null;
    server?.timeout(request, 0);

    type EventMessage = Extract<LiveMessage, { type: "event" }>;
    type MetricMessage = Extract<LiveMessage, { type: "metric" }>;
    // A person limited to some projects is told only of theirs.
    const mine = session.user.projects;
    const isToast = (m: EventMessage) =>
      withToasts && m.event.notify && !m.event.historical && reaches(mine, m.event.project);
    /** What a dashboard keeps between flushes: the newest few of each kind, and how many events it let go. */
    type Pending = {
      events: EventMessage[];
      skipped: number;
      toasts: EventMessage[];
      metrics: Map<number, MetricMessage>;
      channels: LiveMessage[];
    };
    const newest = <T>(list: T[], item: T, cap: number) => {
      list.push(item);
      if (list.length > cap) list.shift();
    };
    // Dashboards showing the same page share its frames (live/fanout.ts); the key says what it shows.
    const view: View<Pending> = {
      key: `web ${project.id} ${format} ${withMetrics} ${withFeed} ${withToasts} ${JSON.stringify(filter)} ${mine ? mine.join(",") : "*"}`,
      projectId: project.id,
      toasts: withToasts, // a notify event, from any project, pops up as a toast while a dashboard is open
      start: () => ({ events: [], skipped: 0, toasts: [], metrics: new Map(), channels: [] }),
      keep(p, m) {
        if (m.type === "event") {
          const toast = isToast(m);
          if (toast) newest(p.toasts, m, TOAST_CAP);
          if (!withFeed || !wanted(m.event)) return toast;
          if (p.events.length === FEED_CAP) p.skipped++; // the rest are counted, not sent
          newest(p.events, m, FEED_CAP);
          return true;
        }
        if (m.type === "metric") {
          if (!withMetrics || m.metric.projectId !== project.id) return false;
          p.metrics.delete(m.metric.id); // a metric changed many times is sent once, as it is now
          p.metrics.set(m.metric.id, m);
          return true;
        }
        if (m.projectId !== project.id) return false;
        p.channels.push(m);
        return true;
      },
      frames(p, render) {
        const out: Framed[] = [];
        const shown = (m: LiveMessage, name: string, make: () => Uint8Array, id = 0) =>
          out.push({ frame: render(m, name, make), id });
        for (const m of p.channels)
          if (m.type === "channel")
            shown(m, "channel", () => frame({ event: "channel", data: channelLink(m.project, m.channel).value }));
        for (const m of p.metrics.values()) shown(m, "metric", () => metricFrame(m.metric));
        for (const m of p.toasts) shown(m, "toast", () => toastFrame(m.event));
        for (const m of p.events) shown(m, format, () => feedFrame(m.event, showChannel), m.event.id);
        // The page offers what was only counted (its "N new events" pill).
        if (p.skipped)
          out.push({ frame: frame({ event: "skipped", data: JSON.stringify({ count: p.skipped }) }), id: 0 });
        return out;
      },
    };
    return sseResponse({
      registry: streams,
      fanout,
      signal: request.signal,
      credential: accounts.credential(session),
      async start(stream) {
        if (withMetrics)
          for (const m of await feed.listMetrics(project.name))
            stream.send(frame({ event: "metric", data: metricWidget(m).value }));
        await resume(stream, {
          feed,
          view,
          filter,
          lastSeen: withFeed ? lastSeen : null,
          limit: REPLAY_LIMIT,
          window: REPLAY_WINDOW,
          encode: (e) => feedFrame(e, showChannel),
          reset: reloadFrame,
        });
      },
    });
  }
}
