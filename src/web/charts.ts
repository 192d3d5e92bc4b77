// Dashboard routes for charts, funnels, metric charts and retention grids: the list, the builder
// (its preview asked as the form changes, its URL the question, so it can be shared), a chart's
// page, the cards of a project's dashboard and their arrangement, and the users who dropped at a
// step of a funnel.
import { z } from "zod";
import type { ChartAnswer, PlacedChart } from "../domain/charts.ts";
import { MAX_POSITION } from "../domain/charts.ts";
import { hasRole } from "../domain/access.ts";
import { BadRequest, NotFound, QueryTimeout, ValidationError } from "../errors.ts";
import { href } from "../http/href.ts";
import { type Route, route } from "../http/routes.ts";
import { ACTIVITY_CARD, type CardRef, type Chart } from "../model/chart.ts";
import type { Project } from "../model/project.ts";
import type { Session } from "../model/user.ts";
import type { Services } from "../services.ts";
import {
  definitionOf,
  type FormFields,
  fieldsForm,
  fieldsOfDefinition,
  fieldsQuery,
  kindOf,
  one,
  queryOfFields,
} from "./chart-form.ts";
import { channelsByAge } from "./colors.ts";
import { type Filters, readFilters } from "./filters.ts";
import { field, param, text } from "./form.ts";
import type { Kit } from "./kit.ts";
import { paths } from "./paths.ts";
import {
  builderPage,
  chartBody,
  chartPage,
  chartProblem,
  chartsListPage,
  deleteChartBody,
  droppedPage,
} from "./views/charts.ts";
import { dashboardSection } from "./views/dashboard.ts";
import { confirmDialog } from "./views/dialogs.ts";

/** A definition's field as the API names it (definition.interval) to the builder's field. */
const FIELD_OF: Record<string, string> = {
  last_days: "range",
  steps: "step",
  group_by: "group_by",
  tag: "tag",
  title: "title",
  window: "window",
  from: "from",
  to: "to",
};

/** Why a question could not be saved or answered, by the builder's fields, in the builder's words. */
function formErrors(error: unknown, fields: FormFields): Record<string, string> | null {
  if (error instanceof NotFound) return { form: error.message };
  if (!(error instanceof ValidationError)) return null;
  const errors: Record<string, string> = {};
  for (const issue of error.issues) {
    const path = issue.path.replace(/^definition\.?/, "").split(".")[0] || "form";
    errors[FIELD_OF[path] ?? path] ??= issue.message.replace(/^[^:]+: /, "");
  }
  // The API's words name its parameters; the form has its own fields.
  if (errors.group_by && one(fields, "group_by") === "tag") {
    errors.group_tag = "use a tag key: lowercase letters, digits or dashes, such as plan";
    delete errors.group_by;
  }
  if (errors.from?.startsWith("must be before to")) errors.from = "must be before “To”";
  // A range of the last N days has no From field: what is wrong with its start is the range's.
  if (errors.from && one(fields, "range") !== "custom") {
    errors.range ??= errors.from;
    delete errors.from;
  }
  return errors;
}

/** A dashboard rearranged from its own controls shows the activity chart unfiltered. */
const NO_FILTERS = readFilters(new URLSearchParams());

export function chartRoutes(services: Services, kit: Kit): Route[] {
  return [
    listCharts(services, kit),
    newChart(services, kit),
    previewChart(services, kit),
    createChart(services, kit),
    showChart(services, kit),
    editChart(services, kit),
    saveChart(services, kit),
    confirmDeleteChart(services, kit),
    deleteChart(services, kit),
    chartCard(services, kit),
    arrangeDashboard(services, kit),
    droppedUsers(services, kit),
  ];
}

/** The builder with what it needs beside the fields: channels, metrics, names of recent events. */
async function builder(
  { feed, projects }: Services,
  kit: Kit,
  session: Session,
  project: Project,
  fields: FormFields,
  chart?: PlacedChart,
  errors?: Record<string, string>,
  status = 200,
): Promise<Response> {
  const [channels, metrics, recent] = await Promise.all([
    projects.channels(project.name),
    feed.listMetrics(project.name),
    feed.listEvents({ project: project.name, limit: 200 }),
  ]);
  const eventNames = [...new Set(recent.events.map((e) => e.name))].sort().slice(0, 100);
  const body = builderPage(project, {
    fields,
    chart,
    errors,
    channels: channels.map((c) => c.name),
    metrics: metrics.map((m) => m.title),
    eventNames,
    zones: Intl.supportedValuesOf("timeZone"),
    csrf: session.csrfToken,
  });
  return kit.page(session, body, {
    title: chart ? `Edit ${chart.name}` : "New chart",
    nav: { project },
    charts: true,
    status,
  });
}

/** For a chart split by channel, the project's channels, whose order gives each its colour (web/colors.ts). */
async function channelsFor(
  { projects }: Services,
  project: Project,
  answer: ChartAnswer,
): Promise<string[] | undefined> {
  if (answer.kind !== "series" || answer.series.groupBy !== "channel") return undefined;
  return channelsByAge(await projects.channels(project.name));
}

async function chartOf({ charts }: Services, project: Project, id: string): Promise<PlacedChart> {
  const chart = /^\d{1,9}$/.test(id) ? await charts.get(Number(id)).catch(() => null) : null;
  if (!chart || chart.projectId !== project.id)
    throw new NotFound(`Chart ${id} does not exist in project "${project.name}".`);
  return chart;
}

/**
 * What a chart's question answers now, in a card's body: shared by everyone looking (live/answers.ts).
 * `shared`: for a shared page (web/shares.ts), which links nowhere in the dashboard and lists no users.
 */
export async function cardBody(
  services: Services,
  kit: Kit,
  project: Project,
  chart: Chart,
  compact: boolean,
  live: boolean,
  shared = false,
): Promise<Response> {
  const { answers, charts } = services;
  try {
    const data = await answers.get(project.id, `chart:${chart.id}:${chart.updatedAt}`, () => charts.data(chart.id), {
      live,
    });
    return kit.fragment(
      chartBody(project, data, {
        display: chart.kind === "series" ? (chart.definition.display ?? "") : "",
        fields: fieldsOfDefinition(chart),
        compact,
        channels: await channelsFor(services, project, data),
        shared,
      }),
    );
  } catch (error) {
    if (error instanceof QueryTimeout)
      return kit.fragment(
        chartProblem(
          "This chart took too long to work out. Narrow it (a shorter range, a channel, an event name) and it will show again.",
        ),
      );
    // A question that can no longer be asked (its channel deleted since it was saved) says why in
    // its place: a card answered with an error would say "Loading…" for ever.
    if (error instanceof NotFound || error instanceof ValidationError || error instanceof BadRequest) {
      return kit.fragment(
        chartProblem(
          shared
            ? "This chart cannot be worked out now."
            : `This chart cannot be worked out now: ${error.message.replace(/\.?$/, ".")} Edit it to ask what is there now.`,
        ),
      );
    }
    throw error;
  }
}

const listCharts = ({ charts }: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.charts,
    access: "viewer",
    needs: "project",
    async handle({ project, session }) {
      return kit.page(session, chartsListPage(project, await charts.list(project.name)), {
        title: `Charts · ${project.name}`,
        nav: { project },
      });
    },
  });

const newChart = (services: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.newChart,
    access: "member",
    needs: "project",
    query: fieldsQuery,
    async handle({ project, session, query: fields }) {
      kindOf(fields); // a kind that is none is refused before the builder is drawn
      return builder(services, kit, session, project, fields);
    },
  });

/** The builder's preview of the question as it stands, as the form changes. */
const previewChart = (services: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.chartPreview,
    access: "member",
    needs: "project",
    query: fieldsQuery,
    async handle({ project, query: fields }) {
      // The builder's own page (new, or a chart's edit): anything else (a line break, which no header may hold) is not followed.
      const base = `${href(paths.charts, { project: project.name })}/`;
      const asked = one(fields, "path");
      const path =
        asked.startsWith(base) && /^(new|\d{1,9}\/edit)$/.test(asked.slice(base.length))
          ? asked
          : href(paths.newChart, { project: project.name });
      const { _csrf, path: _, ...shown } = fields;
      // The builder's URL follows the question, so what is on screen can be shared or bookmarked.
      const headers = { "HX-Replace-Url": `${path}${queryOfFields(shown)}` };
      const kind = kindOf(fields);
      let answer: ChartAnswer;
      try {
        answer = await services.charts.preview(project.name, kind, definitionOf(fields));
      } catch (error) {
        const errors = formErrors(error, fields);
        if (errors) return kit.fragment(chartProblem(Object.values(errors).join(" ")), 200, headers);
        if (error instanceof QueryTimeout) return kit.fragment(chartProblem(error.message), 200, headers);
        throw error;
      }
      const channels = await channelsFor(services, project, answer);
      return kit.fragment(
        chartBody(project, answer, { display: one(fields, "display"), fields, channels }),
        200,
        headers,
      );
    },
  });

const createChart = (services: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.charts,
    access: "member",
    needs: "project",
    form: fieldsForm,
    async handle({ request, project, session, body: fields }) {
      const kind = kindOf(fields); // refused as it is, not shown again in a builder of no kind
      const position = field(fields, "pin") ? MAX_POSITION : undefined;
      return saved(services, kit, { request, session, project, fields }, async () => {
        const chart = await services.charts.create({
          project: project.name,
          kind,
          name: one(fields, "name"),
          definition: definitionOf(fields),
          position,
        });
        return chart.id;
      });
    },
  });

/** The chart `write` saved (its id), or the builder shown again with why it could not be. */
async function saved(
  services: Services,
  kit: Kit,
  {
    request,
    session,
    project,
    fields,
    chart,
  }: { request: Request; session: Session; project: Project; fields: FormFields; chart?: PlacedChart },
  write: () => Promise<number>,
): Promise<Response> {
  try {
    return kit.redirect(request, href(paths.chart, { project: project.name, id: await write() }));
  } catch (error) {
    const errors = formErrors(error, fields);
    if (!errors) throw error;
    return builder(services, kit, session, project, fields, chart, errors, 422);
  }
}

const showChart = (services: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.chart,
    access: "viewer",
    needs: "project",
    async handle({ project, params, session }) {
      const chart = await chartOf(services, project, params.id);
      return kit.page(session, chartPage(project, chart), {
        title: `${chart.name} · ${project.name}`,
        nav: { project },
        charts: true,
      });
    },
  });

const editChart = (services: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.chartEdit,
    access: "member",
    needs: "project",
    query: fieldsQuery,
    async handle({ project, params, session, query: asked }) {
      const chart = await chartOf(services, project, params.id);
      // The URL holds the question as it was being changed (a reload, a shared link); else the saved one.
      const fields = asked.kind ? { ...asked, kind: chart.kind } : fieldsOfDefinition(chart, chart.name);
      return builder(services, kit, session, project, fields, chart);
    },
  });

const saveChart = (services: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.chart,
    access: "member",
    needs: "project",
    form: fieldsForm,
    async handle({ request, project, params, session, body }) {
      const chart = await chartOf(services, project, params.id);
      const fields = { ...body, kind: chart.kind };
      const pinned = Boolean(field(body, "pin"));
      return saved(services, kit, { request, session, project, fields, chart }, async () => {
        const position = pinned === (chart.position !== null) ? undefined : pinned ? MAX_POSITION : null;
        await services.charts.update(chart.id, {
          name: one(fields, "name"),
          definition: definitionOf(fields),
          position,
        });
        return chart.id;
      });
    },
  });

const confirmDeleteChart = (services: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.chartDelete,
    access: "member",
    needs: "project",
    async handle({ project, params }) {
      const chart = await chartOf(services, project, params.id);
      return kit.fragment(
        confirmDialog({
          title: `Delete “${chart.name}”?`,
          body: deleteChartBody(chart),
          action: href(paths.chartDelete, { project: project.name, id: chart.id }),
          confirm: "Delete",
          danger: true,
        }),
      );
    },
  });

const deleteChart = (services: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.chartDelete,
    access: "member",
    needs: "project",
    async handle({ request, project, params }) {
      const chart = await chartOf(services, project, params.id);
      await services.charts.remove(chart.id);
      return kit.redirect(request, href(paths.charts, { project: project.name }));
    },
  });

/** A card of the dashboard: its chart's answer, asked when the card shows and as it refreshes. */
const chartCard = (services: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.card,
    access: "viewer",
    needs: "project",
    query: z.object({ compact: param, live: param }),
    async handle({ project, params, query }) {
      const chart = await chartOf(services, project, params.id);
      return cardBody(services, kit, project, chart, query.compact === "1", query.live === "1");
    },
  });

const MOVES = ["up", "down", "add", "remove"] as const;

/** A card moved on the dashboard, added to it or taken off; back to the page it was moved from, or the dashboard redrawn. */
const arrangeDashboard = (services: Services, kit: Kit) =>
  route({
    method: "POST",
    path: paths.dashboard,
    access: "member",
    needs: "project",
    form: z.object({ card: text, move: text, back: text }),
    async handle({ request, project, body }) {
      const card: CardRef =
        body.card === ACTIVITY_CARD ? ACTIVITY_CARD : /^\d{1,9}$/.test(body.card) ? Number(body.card) : -1;
      const move = MOVES.find((m) => m === body.move);
      if (card === -1 || !move)
        throw ValidationError.field(
          "card",
          "invalid",
          "card: name a card (activity, or a chart's id) and a move (up, down, add or remove)",
        );
      await services.charts.moveCard(project.name, card, move);
      if (body.back.startsWith(`${href(paths.project, { project: project.name })}/`))
        return kit.redirect(request, body.back);
      // The moved card's control keeps the focus (or its neighbour, at an end), so arranging goes on by keyboard.
      const focus = move === "remove" || move === "add" ? "add-card" : `move-${String(card)}-${move}`;
      return kit.fragment(await projectDashboard(services, project, NO_FILTERS, { arranging: true, focus }));
    },
  });

/** The users who reached a step of a funnel and not the next, a page at a time. */
const droppedUsers = ({ charts }: Services, kit: Kit) =>
  route({
    method: "GET",
    path: paths.dropped,
    access: "viewer",
    needs: "project",
    query: fieldsQuery,
    async handle({ project, session, query: fields }) {
      const at = Number(one(fields, "at"));
      const cursor = one(fields, "cursor") || undefined;
      const { funnel, page } = await charts.dropped(
        project.name,
        definitionOf({ ...fields, kind: "funnel" }),
        at,
        cursor,
      );
      const { at: _, cursor: __, ...question } = fields;
      const next = page.nextCursor
        ? href(paths.dropped, { project: project.name }) +
          queryOfFields({ ...question, at: String(at), cursor: page.nextCursor })
        : null;
      // Back to the builder with this funnel, for those who may build charts; a viewer, who may not, goes to the charts.
      const back = hasRole(session.user, "member")
        ? {
            href: href(paths.newChart, { project: project.name }) + queryOfFields({ ...question, kind: "funnel" }),
            label: "funnel",
          }
        : { href: href(paths.charts, { project: project.name }), label: "charts" };
      return kit.page(session, droppedPage(project, { funnel, at, users: page.users, next, back }), {
        title: `Dropped · ${project.name}`,
        nav: { project },
      });
    },
  });

/** The dashboard of a project page, as the page's filters see it (the activity card follows the search). */
export async function projectDashboard(
  { charts, config }: Services,
  project: Project,
  filters: Filters,
  extra: { arranging?: boolean; focus?: string } = {},
) {
  const [cards, all] = await Promise.all([charts.dashboard(project.name), charts.list(project.name)]);
  return dashboardSection(project, {
    cards,
    others: all.filter((c) => c.position === null),
    filters,
    refreshMs: config.cardRefresh,
    ...extra,
  });
}
