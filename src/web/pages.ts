// Dashboard pages: project and channel feeds, the next page of any feed, an event, a user, a
// metric, and the activity chart's data.
import { hasRole, visibleTo } from "../domain/access.ts";
import type { EventQuery } from "../domain/feed.ts";
import { NotFound, QueryTimeout } from "../errors.ts";
import { type Route, route } from "../http/routes.ts";
import type { Project } from "../model/project.ts";
import type { Services } from "../services.ts";
import { channelsByAge, colorSlots } from "./colors.ts";
import { type Filters, filterParams, isFiltered, readFilters, toEventQuery, viewerOffset } from "./filters.ts";
import { projectDashboard } from "./charts.ts";
import { query, seg } from "./html.ts";
import type { Kit } from "./kit.ts";
import { eventDetail, feedItems } from "./views/events.ts";
import { metricPage } from "./views/metric.ts";
import { channelPage, type FeedView, projectPage } from "./views/project.ts";
import { userPage } from "./views/user.ts";

const PAGE_SIZE = 40;

export function pageRoutes(services: Services, kit: Kit): Route[] {
  const { feed, projects, answers, config } = services;
  /** The first page of a feed, with the URLs for its next page and its live stream. */
  async function feedView(
    project: Project,
    filters: Filters,
    extra: { channel?: string; hideChannel?: boolean; metrics?: boolean } = {},
  ): Promise<FeedView> {
    const q: EventQuery = toEventQuery(project.name, filters, extra.channel);
    const lastId = await feed.newestId(); // before the page: the live stream starts after it, so nothing falls between
    const page = await feed.listEvents({ ...q, limit: PAGE_SIZE });
    const filtered = isFiltered(filters);
    // A search says how many events match: the first page when it holds them all, else a count.
    const matches = !filtered ? null : page.nextCursor ? await countMatches(q) : page.events.length;
    const params = { ...filterParams(filters), channel: extra.channel ?? (filters.channel || undefined) };
    const base = `/p/${seg(project.name)}`;
    return {
      events: page.events,
      nextUrl: page.nextCursor
        ? `${base}/feed${query({ ...params, cursor: page.nextCursor, hide: extra.hideChannel ? "channel" : undefined })}`
        : null,
      liveUrl: `${base}/live${query({ ...params, hide: extra.hideChannel ? "channel" : undefined, metrics: extra.metrics ? "1" : undefined })}`,
      lastId,
      filtered,
      matches,
    };
  }

  /** The events a search matches, up to the cap (domain/feed.ts); null when counting takes longer than a read may. */
  async function countMatches(q: EventQuery): Promise<number | null> {
    try {
      return await feed.countEvents(q);
    } catch (error) {
      if (error instanceof QueryTimeout) return null;
      throw error;
    }
  }

  return [
    route({
      method: "GET",
      path: "/",
      access: "viewer",
      async handle({ request, session }) {
        const list = visibleTo(session.user, await projects.list(), (p) => p.name);
        const first = list.find((p) => p.name === config.defaultProject) ?? list[0];
        if (first) return kit.redirect(request, `/p/${seg(first.name)}`);
        return kit.redirect(request, hasRole(session.user, "admin") ? "/settings/api" : "/settings/account");
      },
    }),
    route({
      method: "GET",
      path: "/p/:project",
      access: "viewer",
      async handle({ request, params, session }) {
        const project = await kit.project(params.project!);
        const filters = readFilters(new URL(request.url).searchParams);
        const [metrics, channels, feedView_, dashboard] = await Promise.all([
          feed.listMetrics(project.name),
          projects.channels(project.name),
          feedView(project, filters, { metrics: true }),
          projectDashboard(services, project, filters),
        ]);
        const body = projectPage(project, {
          metrics,
          channels,
          filters,
          feed: feedView_,
          baseUrl: config.baseUrl,
          dashboard,
        });
        // A date it could not use: the page, with the search run without it and the error by its field.
        return kit.page(session, body, {
          title: project.name,
          nav: { project },
          charts: true,
          status: filters.errors ? 422 : 200,
        });
      },
    }),
    route({
      method: "GET",
      path: "/p/:project/c/:channel",
      access: "viewer",
      async handle({ request, params, session }) {
        const { project, channel } = await projects.requireChannel(params.project!, params.channel!);
        const filters = readFilters(new URL(request.url).searchParams);
        const body = channelPage(project, channel, {
          filters,
          feed: await feedView(project, filters, { channel: channel.name, hideChannel: true }),
          baseUrl: config.baseUrl,
        });
        return kit.page(session, body, {
          title: `#${channel.name} · ${project.name}`,
          nav: { project, channel: channel.name },
          status: filters.errors ? 422 : 200,
        });
      },
    }),
    route({
      method: "GET",
      path: "/p/:project/feed",
      access: "viewer",
      async handle({ request, params }) {
        const project = await kit.project(params.project!);
        const url = new URL(request.url);
        const filters = readFilters(url.searchParams);
        const hideChannel = url.searchParams.get("hide") === "channel";
        const page = await feed.listEvents({
          ...toEventQuery(project.name, filters),
          limit: PAGE_SIZE,
          cursor: url.searchParams.get("cursor") ?? undefined,
        });
        const next = page.nextCursor
          ? `/p/${seg(project.name)}/feed${query({ ...filterParams(filters), cursor: page.nextCursor, hide: hideChannel ? "channel" : undefined })}`
          : null;
        return kit.fragment(feedItems(page.events, next, { showChannel: !hideChannel }));
      },
    }),
    route({
      method: "GET",
      path: "/p/:project/events/:id",
      access: "viewer",
      async handle({ params, session }) {
        const project = await kit.project(params.project!);
        if (!/^\d{1,15}$/.test(params.id!))
          throw new NotFound(`Event ${params.id} does not exist in project "${project.name}".`);
        const event = await feed.eventOf(project, Number(params.id));
        return kit.page(session, eventDetail(event), { title: event.name, nav: { project, channel: event.channel } });
      },
    }),
    route({
      method: "GET",
      path: "/p/:project/users/:userId",
      access: "viewer",
      async handle({ request, params, session }) {
        const project = await kit.project(params.project!);
        const userId = params.userId!; // Elysia has decoded it
        const filters = { ...readFilters(new URL(request.url).searchParams), user: userId };
        const [{ profile, groups, summary }, feedView_] = await Promise.all([
          feed.user(project, userId),
          feedView(project, filters),
        ]);
        // An id nothing knows (a typo, an old link) is not shown as an empty user.
        if (!summary && !groups.length)
          throw new NotFound(
            `No user “${userId}” in project “${project.name}”: no event carries this user id, and it was never identified. Check its spelling, or find it under Users.`,
          );
        const body = userPage(project, userId, { profile, groups, summary, feed: feedView_, baseUrl: config.baseUrl });
        return kit.page(session, body, { title: userId, nav: { project } });
      },
    }),
    route({
      method: "GET",
      path: "/p/:project/metrics/:title",
      access: "viewer",
      async handle({ request, params, session }) {
        const project = await kit.project(params.project!);
        const days = Math.min(Math.max(Math.round(Number(new URL(request.url).searchParams.get("days"))) || 7, 1), 365);
        // The chart spans exactly the window, the value held at its start carried in from the left.
        const now = Date.now();
        const chart = await feed.metricChart(project.name, params.title!, now - days * 86_400_000, now);
        const liveUrl = `/p/${seg(project.name)}/live${query({ metrics: "1", feed: "0" })}`;
        return kit.page(session, metricPage(chart, { days, now, liveUrl }), {
          title: chart.metric.title,
          nav: { project },
          charts: true,
        });
      },
    }),
    route({
      method: "GET",
      path: "/p/:project/activity.json",
      access: "viewer",
      async handle({ request, params }) {
        const project = await kit.project(params.project!);
        const url = new URL(request.url);
        const days = Math.min(Math.max(Math.round(Number(url.searchParams.get("days"))) || 30, 1), 366);
        // The browser's offset from UTC, so days start at the viewer's midnight.
        const offsetMs = viewerOffset(url.searchParams) * 60_000;
        const firstDay = Math.floor((Date.now() + offsetMs) / 86_400_000) - days + 1;
        const start = firstDay * 86_400_000 - offsetMs;
        // The feed's filters, as the page's URL has them: the chart counts what the feed shows.
        const filters = readFilters(url.searchParams);
        // One answer for everyone looking at this chart, worked out again when events arrive (at most every SIGNALBOARD_CARD_REFRESH).
        const key = `activity:${project.id}:${start}:${days}:${JSON.stringify(filterParams(filters))}`;
        const [{ channels, other }, all] = await Promise.all([
          answers.get(project.id, key, () => feed.activity(project, start, days, toEventQuery(project.name, filters)), {
            live: url.searchParams.get("live") === "1",
          }),
          projects.channels(project.name),
        ]);
        const body = {
          days: Array.from({ length: days }, (_, i) => (start + i * 86_400_000) / 1000),
          channels: channels.map((r) => r.channel),
          series: channels.map((r) => r.counts),
          totals: channels.map((r) => r.total),
          colors: colorSlots(
            channels.map((r) => r.channel),
            channelsByAge(all),
          ),
          other,
          filtered: isFiltered(filters) || Boolean(filters.channel),
        };
        return new Response(JSON.stringify(body), {
          headers: { "Content-Type": "application/json", "Cache-Control": "no-store" },
        });
      },
    }),
  ];
}
