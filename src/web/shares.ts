// Shared pages: /s/<key> shows a project's chosen cards or its status page to anyone with the link,
// without sign-in (the key is the capability: access "none"), with its cards' bodies, its status and
// its stream under the same key. A key that names no share (or a revoked one) is a 404 at once, and
// open streams of a revoked share end (revoking takes access away; the stream's credential is the
// share). Nothing here reads the feed, events' contents or user ids: the stream only says "refresh".
// Admins make and revoke shares in the project's settings.
import { z } from "zod";
import { hasRole } from "../domain/access.ts";
import type { Share } from "../model/share.ts";
import type { Chart } from "../model/chart.ts";
import type { Project } from "../model/project.ts";
import { NotFound } from "../errors.ts";
import { frame, sseResponse } from "../http/sse.ts";
import { href } from "../http/href.ts";
import { PAGE_HEADERS } from "../http/security.ts";
import type { Edge } from "../http/edge.ts";
import { type Route, route } from "../http/routes.ts";
import type { View } from "../live/fanout.ts";
import type { Session } from "../model/user.ts";
import type { Services } from "../services.ts";
import { cardBody } from "./charts.ts";
import { list, param, text } from "./form.ts";
import { html } from "./html.ts";
import type { Kit } from "./kit.ts";
import { paths } from "./paths.ts";
import { sharedDashboard, sharedLayout, sharedStatus, sharesSection, statusBody } from "./views/shares.ts";

/** Shared pages stay out of search engines, whatever links to them. */
const NOINDEX = { "X-Robots-Tag": "noindex" };
const HEADERS = { ...PAGE_HEADERS, ...NOINDEX };

/** What a key that names nothing gets: a page that says why it may be so and what to do, and links nowhere. */
function gone(assets: Kit["assets"]): Response {
  const body = html`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light dark"><title>Link not found</title><link rel="stylesheet" href="${assets.url("app.css")}"></head><body class="shared-page"><main class="shared"><h1>This link shows nothing</h1><p>It was revoked by whoever shared it, or it was never whole (check that it was copied to its end). Ask them for a new link.</p></main></body></html>`;
  return new Response(body.value, { status: 404, headers: HEADERS });
}

type Opened = { share: Share; project: Project };

const keyParams = z.object({ key: z.string() });

/** The share's charts that still exist and are still its project's, in the order chosen. */
async function chartsOf({ charts }: Services, share: Share): Promise<Chart[]> {
  const found = await Promise.all(share.charts.map((id) => charts.get(id).catch(() => null)));
  return found.filter((c): c is NonNullable<typeof c> => c !== null && c.projectId === share.projectId);
}

const statusKey = (share: Share) => `share:${share.id}:status`;

export function shareRoutes(services: Services, edge: Edge, kit: Kit): Route[] {
  const { shares, answers, config } = services;
  const open = (key: string) => shares.open(key);
  return [
    route({
      method: "GET",
      path: paths.shared,
      access: "none",
      params: keyParams,
      query: z.object({ kiosk: param }),
      async handle({ params, query }) {
        const found = await open(params.key);
        if (!found) return gone(kit.assets);
        const { share, project } = found;
        const kiosk = query.kiosk === "1";
        const liveUrl = href(paths.sharedLive, { key: share.key });
        const layout = { kiosk, liveUrl, refreshMs: config.cardRefresh };
        if (share.kind === "dashboard") {
          const body = sharedDashboard(share, project, await chartsOf(services, share));
          const title = share.title || project.name;
          return new Response(sharedLayout(kit.assets, { ...layout, title, body, charts: true }).value, {
            headers: HEADERS,
          });
        }
        const answer = await answers.get(project.id, statusKey(share), () => shares.status(share));
        const body = sharedStatus(share, project, answer);
        const title = share.title || `${project.name} status`;
        return new Response(sharedLayout(kit.assets, { ...layout, title, body, charts: false }).value, {
          headers: HEADERS,
        });
      },
    }),
    route({
      method: "GET",
      path: paths.sharedCard,
      access: "none",
      params: z.object({ key: z.string(), id: z.string() }),
      query: z.object({ compact: param, live: param }),
      async handle({ params, query }) {
        const found = await open(params.key);
        const id = /^\d{1,9}$/.test(params.id) ? Number(params.id) : -1;
        if (!found || found.share.kind !== "dashboard" || !found.share.charts.includes(id)) return gone(kit.assets);
        const chart = (await chartsOf(services, { ...found.share, charts: [id] }))[0];
        if (!chart) return gone(kit.assets);
        const answer = await cardBody(
          services,
          kit,
          found.project,
          chart,
          query.compact === "1",
          query.live === "1",
          true,
        );
        answer.headers.set("X-Robots-Tag", "noindex");
        return answer;
      },
    }),
    route({
      method: "GET",
      path: paths.sharedStatus,
      access: "none",
      params: keyParams,
      query: z.object({ live: param }),
      async handle({ params, query }) {
        const found = await open(params.key);
        if (!found || found.share.kind !== "status") return gone(kit.assets);
        const { share, project } = found;
        const answer = await answers.get(project.id, statusKey(share), () => shares.status(share), {
          live: query.live === "1",
        });
        return kit.fragment(statusBody(answer), 200, NOINDEX);
      },
    }),
    route({
      method: "GET",
      path: paths.sharedLive,
      access: "none",
      params: keyParams,
      async handle({ request, server, params }) {
        const found = await open(params.key);
        if (!found) return gone(kit.assets);
        server?.timeout(request, 0);
        const key = params.key;
        return sseResponse({
          registry: edge.streams,
          fanout: services.fanout,
          signal: request.signal,
          credential: { key: `share:${found.share.id}`, valid: () => shares.live(key) },
          headers: NOINDEX,
          start(stream) {
            stream.follow(shareView(found))(0);
          },
        });
      },
    }),
    route({
      method: "POST",
      path: paths.shares,
      access: "admin",
      needs: "project",
      form: z.object({
        kind: text,
        charts: list,
        checks: list,
        alerts: list,
        metrics: list,
        title: text,
        text,
        time_zone: text,
      }),
      async handle({ request, project, body, actor }) {
        const numbers = (values: string[]) => values.map((v) => (/^\d{1,9}$/.test(v) ? Number(v) : -1));
        await shares.create(
          {
            project: project.name,
            kind: body.kind === "status" ? "status" : "dashboard",
            ...(body.charts.length && { charts: numbers(body.charts) }),
            ...(body.checks.length && { checks: numbers(body.checks) }),
            ...(body.alerts.length && { alerts: numbers(body.alerts) }),
            ...(body.metrics.length && { metrics: body.metrics }),
            ...(body.title.trim() && { title: body.title }),
            ...(body.text.trim() && { text: body.text }),
            ...(body.kind === "status" && body.time_zone.trim() && { time_zone: body.time_zone.trim() }),
          },
          actor,
        );
        return kit.redirect(request, `${href(paths.projectSettings, { project: project.name })}#shares`);
      },
    }),
    route({
      method: "POST",
      path: paths.shareRevoke,
      access: "admin",
      needs: "project",
      params: z.object({
        project: z.string(),
        id: z
          .string()
          .regex(/^\d{1,9}$/, "No such share.")
          .transform(Number),
      }),
      async handle({ request, project, params, actor }) {
        const share = await shares.get(params.id).catch(() => null);
        if (!share || share.projectId !== project.id)
          throw new NotFound(`Share ${params.id} does not exist in project "${project.name}".`);
        await shares.revoke(share.id, actor);
        return kit.redirect(request, `${href(paths.projectSettings, { project: project.name })}#shares`);
      },
    }),
  ];
}

/**
 * The live view of a shared page: any event or metric of its project may change what it shows, so
 * it is told to ask again ("refresh"), and told nothing else: no event, no name, no user id. Every
 * page of one share is one group (one frame per flush for all of them).
 */
function shareView({ share, project }: Opened): View<{ changed: boolean }> {
  const metrics = new Set(share.metrics);
  const refresh = frame({ event: "refresh", data: "1" });
  return {
    key: `share ${share.id}`,
    projectId: project.id,
    start: () => ({ changed: false }),
    keep(p, m) {
      if (m.type === "channel") return false;
      if (m.type === "metric" && share.kind === "status" && !metrics.has(m.metric.title)) return false;
      p.changed = true;
      return true;
    },
    frames: (p) => (p.changed ? [{ frame: refresh, id: 0 }] : []),
  };
}

/** The project settings' section of shared pages: everyone who may see the settings sees the links; admins make and revoke them. */
export async function sharesSectionOf(services: Services, project: Project, session: Session) {
  const { shares, charts, checks, alerts, feed } = services;
  const admin = hasRole(session.user, "admin");
  const [list, chartList, checkList, alertList, metricList] = await Promise.all([
    shares.list(project.name),
    admin ? charts.list(project.name) : [],
    admin ? checks.list(project.name) : [],
    admin ? alerts.list(project.name) : [],
    admin ? feed.listMetrics(project.name) : [],
  ]);
  return sharesSection(project, {
    shares: list.map((s) => ({ ...s, url: shares.url(s) })),
    charts: chartList,
    checks: checkList,
    alerts: alertList,
    metrics: metricList,
    admin,
  });
}
