// Dashboard pages: project and channel feeds, the next page of any feed, an event, a user, a
// metric, and the activity chart's data.
import { Elysia } from "elysia";
import type { Deps } from "../app.ts";
import type { EventQuery } from "../domain/feed.ts";
import { NotFound } from "../errors.ts";
import { filterParams, isFiltered, readFilters, toEventQuery, viewerOffset, type Filters } from "./filters.ts";
import { query, seg } from "./html.ts";
import type { Kit } from "./kit.ts";
import { eventDetail, feedItems } from "./views/events.ts";
import { channelPage, type FeedView, metricPage, projectPage } from "./views/project.ts";
import { userPage } from "./views/user.ts";
import type { Project } from "../model/project.ts";
import type { Session } from "../model/user.ts";

const PAGE_SIZE = 40;

export function pageRoutes(deps: Deps, kit: Kit) {
  const { web, feed, store } = deps;

  /** The first page of a feed, with the URLs for its next page and its live stream. */
  function feedView(project: Project, filters: Filters, extra: { channel?: string; hideChannel?: boolean; metrics?: boolean } = {}): FeedView {
    const q: EventQuery = toEventQuery(project.name, filters, extra.channel);
    const lastId = store.events.lastId();
    const page = feed.listEvents({ ...q, limit: PAGE_SIZE });
    const params = { ...filterParams(filters), channel: extra.channel ?? (filters.channel || undefined) };
    const base = `/p/${seg(project.name)}`;
    return {
      events: page.events,
      nextUrl: page.nextCursor ? `${base}/feed${query({ ...params, cursor: page.nextCursor, hide: extra.hideChannel ? "channel" : undefined })}` : null,
      liveUrl: `${base}/live${query({ ...params, hide: extra.hideChannel ? "channel" : undefined, metrics: extra.metrics ? "1" : undefined })}`,
      lastId,
      filtered: isFiltered(filters),
    };
  }

  const signedIn = (request: Request): Session => web.requireSession(request);

  return new Elysia({ name: "web.pages" })
    .get("/", ({ request }) => {
      signedIn(request);
      const first = deps.projects.list().find((p) => p.name === deps.config.defaultProject) ?? deps.projects.list()[0];
      return kit.redirect(request, first ? `/p/${seg(first.name)}` : "/settings/api");
    })
    .get("/p/:project", ({ request, params }) => {
      const session = signedIn(request);
      const project = kit.project(params.project);
      const filters = readFilters(new URL(request.url).searchParams);
      const body = projectPage(project, {
        metrics: store.metrics.list(project.id),
        channels: store.projects.listChannels(project.id),
        filters,
        feed: feedView(project, filters, { metrics: true }),
        baseUrl: deps.config.baseUrl,
        deletable: project.name !== deps.config.defaultProject,
      });
      return kit.page(session, body, { title: project.name, nav: { project }, charts: true });
    })
    .get("/p/:project/c/:channel", ({ request, params }) => {
      const session = signedIn(request);
      const { project, channel } = deps.projects.requireChannel(params.project, params.channel);
      const filters = readFilters(new URL(request.url).searchParams);
      const body = channelPage(project, channel, { filters, feed: feedView(project, filters, { channel: channel.name, hideChannel: true }), baseUrl: deps.config.baseUrl });
      return kit.page(session, body, { title: `#${channel.name} · ${project.name}`, nav: { project, channel: channel.name } });
    })
    .get("/p/:project/feed", ({ request, params }) => {
      signedIn(request);
      const project = kit.project(params.project);
      const url = new URL(request.url);
      const filters = readFilters(url.searchParams);
      const hideChannel = url.searchParams.get("hide") === "channel";
      const page = feed.listEvents({ ...toEventQuery(project.name, filters), limit: PAGE_SIZE, cursor: url.searchParams.get("cursor") ?? undefined });
      const next = page.nextCursor ? `/p/${seg(project.name)}/feed${query({ ...filterParams(filters), cursor: page.nextCursor, hide: hideChannel ? "channel" : undefined })}` : null;
      return kit.fragment(feedItems(page.events, next, { showChannel: !hideChannel }));
    })
    .get("/p/:project/events/:id", ({ request, params }) => {
      const session = signedIn(request);
      const project = kit.project(params.project);
      const event = /^\d{1,15}$/.test(params.id) ? store.events.findById(Number(params.id)) : null;
      if (!event || event.projectId !== project.id) throw new NotFound(`Event ${params.id} does not exist in project "${project.name}".`);
      return kit.page(session, eventDetail(event), { title: event.name, nav: { project, channel: event.channel } });
    })
    .get("/p/:project/users/:userId", ({ request, params }) => {
      const session = signedIn(request);
      const project = kit.project(params.project);
      const userId = params.userId; // Elysia has decoded it
      const filters = { ...readFilters(new URL(request.url).searchParams), user: userId };
      const body = userPage(project, userId, {
        profile: store.profiles.find(project.id, userId),
        groups: store.profiles.groupsOf(project.id, userId),
        feed: feedView(project, filters),
        baseUrl: deps.config.baseUrl,
      });
      return kit.page(session, body, { title: userId, nav: { project } });
    })
    .get("/p/:project/metrics/:title", ({ request, params }) => {
      const session = signedIn(request);
      const project = kit.project(params.project);
      const days = Math.min(Math.max(Number(new URL(request.url).searchParams.get("days")) || 7, 1), 365);
      const { metric, points } = feed.metricHistory(project.name, params.title, Date.now() - days * 86_400_000);
      return kit.page(session, metricPage(metric, points, days), { title: metric.title, nav: { project }, charts: true });
    })
    .get("/p/:project/activity.json", ({ request, params }) => {
      signedIn(request);
      const project = kit.project(params.project);
      const url = new URL(request.url);
      const days = Math.min(Math.max(Number(url.searchParams.get("days")) || 30, 1), 366);
      // The browser's offset from UTC, so days start at the viewer's midnight.
      const offsetMs = viewerOffset(url.searchParams) * 60_000;
      const firstDay = Math.floor((Date.now() + offsetMs) / 86_400_000) - days + 1;
      const start = firstDay * 86_400_000 - offsetMs;
      const rows = store.events.activity(project.id, start, days).filter((r) => r.counts.some((n) => n > 0));
      const channels = rows.map((r) => r.channel);
      const series = rows.map((r) => r.counts);
      const dayStarts = Array.from({ length: days }, (_, i) => (start + i * 86_400_000) / 1000);
      return new Response(JSON.stringify({ days: dayStarts, channels, series }), { headers: { "Content-Type": "application/json", "Cache-Control": "no-store" } });
    });
}
