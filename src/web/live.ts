// The dashboard's live stream: HTML fragments over SSE for the page that is open. New events of
// the feed (matching its filters), metric widgets, toasts, new channels for the sidebar (on every
// page of a project: a page without a feed or a metric asks for those alone). A reconnecting
// page sends the last event id it has and first gets what it missed (http/resume.ts); when that is
// too much to patch in, it is told to reload. The Checks page is told which checks were pinged
// (checks=1: any event of the project tagged `check`, a ping or a notice), and loads their rows. Historical events are not pushed to the top of a
// feed: they appear in their place when that part of the feed is loaded.
import { reaches } from "../domain/access.ts";
import { eventMatcher } from "../domain/filter.ts";
import { resume } from "../http/resume.ts";
import { frame, sseResponse } from "../http/sse.ts";
import type { Framed, View } from "../live/fanout.ts";
import type { LiveMessage } from "../live/hub.ts";
import { filterFields, filtersOf, toEventQuery } from "./filters.ts";
import { param } from "./form.ts";
import { href } from "../http/href.ts";
import { paths } from "./paths.ts";
import { eventItem } from "./views/events.ts";
import { channelLink } from "./views/layout.ts";
import { metricWidget } from "./views/project.ts";
import { z } from "zod";
import type { StoredEvent } from "../model/event.ts";
import type { Project } from "../model/project.ts";
import type { Metric } from "../model/metric.ts";
import type { Session } from "../model/user.ts";
import type { Edge } from "../http/edge.ts";
import { type BaseContext, type Route, route } from "../http/routes.ts";
import type { EventFilter } from "../model/filter.ts";
import type { Services } from "../services.ts";

/** More missed events than this, and the page reloads instead of inserting them one by one. */
const REPLAY_LIMIT = 200;
/** More events than this stored since the page's last one, and it reloads without looking for them. */
const REPLAY_WINDOW = 10_000;
/** A page is sent at most this many new events per flush, the newest, and told how many more there were. */
export const FEED_CAP = 5;
const TOAST_CAP = 3;

/** What the page asks to follow: its feed's filters, and which kinds of frames it wants. */
const liveQuery = z
  .object({
    ...filterFields,
    hide: param,
    metrics: param,
    feed: param,
    toasts: param,
    checks: param,
    last_event_id: param,
  })
  .transform((q) => ({
    filters: filtersOf(q),
    showChannel: q.hide !== "channel",
    withMetrics: q.metrics === "1",
    // feed=0: a page without a feed (a metric's page) follows metrics and toasts only; with
    // toasts=0 too, new channels alone (the sidebar of a page with no stream of its own).
    withFeed: q.feed !== "0",
    withToasts: q.toasts !== "0",
    withChecks: q.checks === "1",
    lastEventId: q.last_event_id,
  }));
type Asked = z.output<typeof liveQuery>;

export function liveRoutes(services: Services, edge: Edge): Route[] {
  return [
    route({
      method: "GET",
      path: paths.live,
      access: "viewer",
      needs: "project",
      query: liveQuery,
      handle: (ctx) => openLive(services, edge, ctx),
    }),
  ];
}

async function openLive(
  { fanout, feed, accounts }: Services,
  { streams }: Edge,
  {
    request,
    server,
    session,
    project,
    query: asked,
  }: Omit<BaseContext, "params"> & { session: Session; project: Project; query: Asked },
): Promise<Response> {
  const filter = { ...(await feed.filterOf(toEventQuery(project.name, asked.filters))), liveOnly: true };
  const header = request.headers.get("last-event-id") ?? asked.lastEventId ?? "";
  const lastSeen = /^\d{1,15}$/.test(header) ? Number(header) : null;
  server?.timeout(request, 0);
  const { showChannel, withMetrics, withFeed } = asked;
  const view = dashboardView(project, filter, session.user.projects, asked);
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

type EventMessage = Extract<LiveMessage, { type: "event" }>;
type MetricMessage = Extract<LiveMessage, { type: "metric" }>;
/** What a dashboard keeps between flushes: the newest few of each kind, and how many events it let go. */
type Pending = {
  events: EventMessage[];
  skipped: number;
  toasts: EventMessage[];
  metrics: Map<number, MetricMessage>;
  channels: LiveMessage[];
  /** The slugs of the checks pinged (or noticed) since the last flush. */
  checks: Set<string>;
};

const newest = <T>(list: T[], item: T, cap: number) => {
  list.push(item);
  if (list.length > cap) list.shift();
};

/** The live view of a dashboard page; `mine`: the projects of a person limited to some, told only of theirs. */
function dashboardView(
  project: Project,
  filter: EventFilter,
  mine: string[] | null,
  { showChannel, withMetrics, withFeed, withToasts, withChecks }: Omit<Asked, "filters" | "lastEventId">,
): View<Pending> {
  const wanted = eventMatcher(filter);
  const format = `feed:${showChannel ? "full" : "compact"}`;
  const isToast = (m: EventMessage) =>
    withToasts && m.event.notify && !m.event.historical && reaches(mine, m.event.project);
  // Dashboards showing the same page share its frames (live/fanout.ts); the key says what it shows.
  return {
    key: `web ${project.id} ${format} ${withMetrics} ${withFeed} ${withToasts} ${withChecks} ${JSON.stringify(filter)} ${mine ? mine.join(",") : "*"}`,
    projectId: project.id,
    toasts: withToasts, // a notify event, from any project, pops up as a toast while a dashboard is open
    start: () => ({ events: [], skipped: 0, toasts: [], metrics: new Map(), channels: [], checks: new Set() }),
    keep(p, m) {
      if (m.type === "event") {
        const toast = isToast(m);
        if (toast) newest(p.toasts, m, TOAST_CAP);
        const check = withChecks && m.event.projectId === project.id ? m.event.tags?.check : undefined;
        if (typeof check === "string") p.checks.add(check);
        if (!withFeed || !wanted(m.event)) return toast || typeof check === "string";
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
      for (const slug of p.checks) out.push({ frame: frame({ event: "check", data: slug }), id: 0 });
      for (const m of p.events) shown(m, format, () => feedFrame(m.event, showChannel), m.event.id);
      // The page offers what was only counted (its "N new events" pill).
      if (p.skipped)
        out.push({ frame: frame({ event: "skipped", data: JSON.stringify({ count: p.skipped }) }), id: 0 });
      return out;
    },
  };
}

const feedFrame = (e: StoredEvent, showChannel: boolean) =>
  frame({ id: e.id, event: "feed", data: eventItem(e, { showChannel, fresh: true }).value });
const toastFrame = (e: StoredEvent) =>
  frame({
    event: "toast",
    data: JSON.stringify({
      text: `${e.icon ? `${e.icon} ` : ""}${e.name} · #${e.channel}`,
      href: href(paths.event, { project: e.project, id: e.id }),
    }),
  });
const metricFrame = (m: Metric) => frame({ event: "metric", data: metricWidget(m, { fresh: true }).value });
const reloadFrame = (newest: number) => frame({ id: newest, event: "reload", data: "too many missed events" });
