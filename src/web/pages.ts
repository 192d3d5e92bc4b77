// Dashboard pages: project and channel feeds, the next page of any feed, an event, a user, a
// metric, and the activity chart's data.
import { z } from "zod";
import { hasRole, visibleTo } from "../domain/access.ts";
import type { EventQuery, FeedService } from "../domain/feed.ts";
import { NotFound, QueryTimeout } from "../errors.ts";
import { href } from "../http/href.ts";
import { type Route, route } from "../http/routes.ts";
import type { Project } from "../model/project.ts";
import type { Services } from "../services.ts";
import { channelsByAge, colorSlots } from "./colors.ts";
import {
  type Filters,
  filterFields,
  filterParams,
  filtersOf,
  filtersQuery,
  isFiltered,
  toEventQuery,
  viewerOffset,
} from "./filters.ts";
import { projectDashboard } from "./charts.ts";
import { param } from "./form.ts";
import type { Kit } from "./kit.ts";
import { paths } from "./paths.ts";
import { eventDetail, feedItems } from "./views/events.ts";
import { metricPage } from "./views/metric.ts";
import { channelPage, type FeedView, projectPage } from "./views/project.ts";
import { userPage } from "./views/user.ts";

const PAGE_SIZE = 40;

/** Days back a chart spans: `fallback` unless asked, from 1 to `most`. */
const daysParam = (fallback: number, most: number) =>
  param.transform((days) => Math.min(Math.max(Math.round(Number(days ?? null)) || fallback, 1), most));

export function pageRoutes(services: Services, kit: Kit): Route[] {
  return [
    home(services, kit),
    projectFeed(services, kit),
    channelFeed(services, kit),
    nextPage(services, kit),
    eventPage(services, kit),
    userOfProject(services, kit),
    metricOfProject(services, kit),
    activity(services),
  ];
}

/** The first project the person may see (the default one first), else their settings. */
const home = ({ projects, config }: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.home,
    access: "viewer",
    async handle({ request, session }) {
      const list = visibleTo(session.user, await projects.list(), (p) => p.name);
      const first = list.find((p) => p.name === config.defaultProject) ?? list[0];
      if (first) return kit.redirect(request, href(paths.project, { project: first.name }));
      return kit.redirect(request, hasRole(session.user, "admin") ? paths.api : paths.account);
    },
  });

const projectFeed = (services: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.project,
    access: "viewer",
    needs: "project",
    query: filtersQuery,
    async handle({ project, query: filters, session }) {
      const { feed, projects, config } = services;
      const [metrics, channels, feedView_, dashboard] = await Promise.all([
        feed.listMetrics(project.name),
        projects.channels(project.name),
        feedView(feed, project, filters, { metrics: true }),
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
  });

const channelFeed = ({ feed, config }: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.channel,
    access: "viewer",
    needs: "channel",
    query: filtersQuery,
    async handle({ project, channel, query: filters, session }) {
      const body = channelPage(project, channel, {
        filters,
        feed: await feedView(feed, project, filters, { channel: channel.name, hideChannel: true }),
        baseUrl: config.baseUrl,
      });
      return kit.page(session, body, {
        title: `#${channel.name} · ${project.name}`,
        nav: { project, channel: channel.name },
        status: filters.errors ? 422 : 200,
      });
    },
  });

/** The next page of a feed, as a fragment (its "more" link's target). */
const nextPage = ({ feed }: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.feed,
    access: "viewer",
    needs: "project",
    query: z.object({ ...filterFields, cursor: param, hide: param }),
    async handle({ project, query }) {
      const filters = filtersOf(query);
      const hideChannel = query.hide === "channel";
      const page = await feed.listEvents({
        ...toEventQuery(project.name, filters),
        limit: PAGE_SIZE,
        cursor: query.cursor,
      });
      const next = page.nextCursor
        ? href(
            paths.feed,
            { project: project.name },
            { ...filterParams(filters), cursor: page.nextCursor, hide: hideChannel ? "channel" : undefined },
          )
        : null;
      return kit.fragment(feedItems(page.events, next, { showChannel: !hideChannel }));
    },
  });

const eventPage = ({ feed }: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.event,
    access: "viewer",
    needs: "project",
    async handle({ project, params, session }) {
      if (!/^\d{1,15}$/.test(params.id))
        throw new NotFound(`Event ${params.id} does not exist in project "${project.name}".`);
      const event = await feed.eventOf(project, Number(params.id));
      return kit.page(session, eventDetail(event), { title: event.name, nav: { project, channel: event.channel } });
    },
  });

const userOfProject = ({ feed, config }: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.user,
    access: "viewer",
    needs: "project",
    query: filtersQuery,
    async handle({ project, params: { userId }, query, session }) {
      const filters = { ...query, user: userId }; // userId: Elysia has decoded it
      const [{ profile, groups, summary }, feedView_] = await Promise.all([
        feed.user(project, userId),
        feedView(feed, project, filters),
      ]);
      // An id nothing knows (a typo, an old link) is not shown as an empty user.
      if (!summary && !groups.length)
        throw new NotFound(
          `No user “${userId}” in project “${project.name}”: no event carries this user id, and it was never identified. Check its spelling, or find it under Users.`,
        );
      const body = userPage(project, userId, { profile, groups, summary, feed: feedView_, baseUrl: config.baseUrl });
      return kit.page(session, body, { title: userId, nav: { project } });
    },
  });

const metricOfProject = ({ feed }: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.metric,
    access: "viewer",
    needs: "project",
    query: z.object({ days: daysParam(7, 365) }),
    async handle({ project, params, query: { days }, session }) {
      // The chart spans exactly the window, the value held at its start carried in from the left.
      const now = Date.now();
      const chart = await feed.metricChart(project.name, params.title, now - days * 86_400_000, now);
      const liveUrl = href(paths.live, { project: project.name }, { metrics: "1", feed: "0" });
      return kit.page(session, metricPage(chart, { days, now, liveUrl }), {
        title: chart.metric.title,
        nav: { project },
        charts: true,
      });
    },
  });

/** The activity chart's data: events per channel per day, of what the feed shows. */
const activity = ({ feed, projects, answers }: Services) =>
  route({
    method: "GET",
    path: paths.activity,
    access: "viewer",
    needs: "project",
    query: z.object({ ...filterFields, days: daysParam(30, 366), live: param }),
    async handle({ project, query }) {
      const { days } = query;
      // The browser's offset from UTC, so days start at the viewer's midnight.
      const offsetMs = viewerOffset(query.tz) * 60_000;
      const firstDay = Math.floor((Date.now() + offsetMs) / 86_400_000) - days + 1;
      const start = firstDay * 86_400_000 - offsetMs;
      // The feed's filters, as the page's URL has them: the chart counts what the feed shows.
      const filters = filtersOf(query);
      // One answer for everyone looking at this chart, worked out again when events arrive (at most every SIGNALBOARD_CARD_REFRESH).
      const key = `activity:${project.id}:${start}:${days}:${JSON.stringify(filterParams(filters))}`;
      const [{ channels, other }, all] = await Promise.all([
        answers.get(project.id, key, () => feed.activity(project, start, days, toEventQuery(project.name, filters)), {
          live: query.live === "1",
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
  });

/** The first page of a feed, with the URLs for its next page and its live stream. */
async function feedView(
  feed: FeedService,
  project: Project,
  filters: Filters,
  extra: { channel?: string; hideChannel?: boolean; metrics?: boolean } = {},
): Promise<FeedView> {
  const q: EventQuery = toEventQuery(project.name, filters, extra.channel);
  const lastId = await feed.newestId(); // before the page: the live stream starts after it, so nothing falls between
  const page = await feed.listEvents({ ...q, limit: PAGE_SIZE });
  const filtered = isFiltered(filters);
  // A search says how many events match: the first page when it holds them all, else a count.
  const matches = !filtered ? null : page.nextCursor ? await countMatches(feed, q) : page.events.length;
  const params = { ...filterParams(filters), channel: extra.channel ?? (filters.channel || undefined) };
  const hide = extra.hideChannel ? "channel" : undefined;
  return {
    events: page.events,
    nextUrl: page.nextCursor
      ? href(paths.feed, { project: project.name }, { ...params, cursor: page.nextCursor, hide })
      : null,
    liveUrl: href(paths.live, { project: project.name }, { ...params, hide, metrics: extra.metrics ? "1" : undefined }),
    lastId,
    filtered,
    matches,
  };
}

/** The events a search matches, up to the cap (domain/feed.ts); null when counting takes longer than a read may. */
async function countMatches(feed: FeedService, q: EventQuery): Promise<number | null> {
  try {
    return await feed.countEvents(q);
  } catch (error) {
    if (error instanceof QueryTimeout) return null;
    throw error;
  }
}
