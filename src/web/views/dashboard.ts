// A project's dashboard: its cards in the order its team arranged them (the activity chart, there
// by default, and pinned charts, funnels, metric charts and retention grids), each refreshed when
// events arrive, and the controls to add, remove and reorder them, by keyboard as well as by pointer.
import type { Card, PlacedChart } from "../../domain/charts.ts";
import { ACTIVITY_CARD, type CardRef } from "../../model/chart.ts";
import { href } from "../../http/href.ts";
import type { Project } from "../../model/project.ts";
import type { Filters } from "../filters.ts";
import { type Html, html } from "../html.ts";
import { paths } from "../paths.ts";
import { describeChart } from "./charts.ts";
import { activityCard } from "./project.ts";

export type DashboardView = {
  cards: Card[];
  /** Charts of the project that are not on the dashboard, to add. */
  others: PlacedChart[];
  filters: Filters;
  /** At most this often are the cards asked again while events arrive (ms). */
  refreshMs: number;
  /** Open with the controls shown (after a move, so the next one is at hand). */
  arranging?: boolean;
  /** The control to give focus to after a move. */
  focus?: string;
};

const refOf = (card: Card): CardRef => (card.kind === ACTIVITY_CARD ? ACTIVITY_CARD : card.chart.id);
const nameOf = (card: Card) => (card.kind === ACTIVITY_CARD ? "Activity" : card.chart.name);

export function dashboardSection(project: Project, v: DashboardView): Html {
  const p = { project: project.name };
  const activityGone = !v.cards.some((c) => c.kind === ACTIVITY_CARD);
  const addable: [string, string][] = [
    ...(activityGone ? [[ACTIVITY_CARD, "Activity (events per channel per day)"] as [string, string]] : []),
    ...v.others.map((c): [string, string] => [String(c.id), `${c.name} (${describeChart(c)})`]),
  ];
  return html`<section class="dashboard" id="dashboard" aria-label="Dashboard" x-data="dashboard" x-on:sb-events.window="eventsArrived" data-refresh-ms="${String(v.refreshMs)}" data-arranging="${v.arranging ? "1" : "0"}"${v.focus ? html` data-focus="${v.focus}"` : ""}>
  <div class="dashboard-bar">
    <button type="button" class="secondary small needs-member" x-on:click="toggleArrange" x-bind:aria-pressed="arrangingText" aria-controls="dashboard-cards" data-testid="arrange">Arrange cards</button>
    <a class="button secondary small needs-member" href="${href(paths.newChart, p)}" data-testid="new-chart">New chart</a>
    <a class="link-button small jump-feed" href="#events">Skip to the feed</a>
  </div>
  <div class="arrange-panel" x-show="arranging"${v.arranging ? "" : html` x-cloak`}>
    ${
      addable.length
        ? html`<form class="inline-form" hx-post="${href(paths.dashboard, p)}" hx-target="#dashboard" hx-swap="outerHTML" data-testid="add-card">
      <label for="add-card">Add a card</label>
      <select id="add-card" name="card">${addable.map(([value, label]) => html`<option value="${value}">${label}</option>`)}</select>
      <input type="hidden" name="move" value="add"><input type="hidden" name="arranging" value="1">
      <button type="submit" class="small">Add</button>
    </form>`
        : html`<p class="muted small">Every chart of this project is on the dashboard. <a href="${href(paths.newChart, p)}">Build another</a>.</p>`
    }
  </div>
  <ol class="cards" id="dashboard-cards" aria-label="Cards">
    ${v.cards.map((card, i) => cardItem(project, card, { first: i === 0, last: i === v.cards.length - 1, filters: v.filters }))}
  </ol>
  ${v.cards.length ? "" : html`<p class="muted small empty-dashboard">No cards. Add the activity chart or a saved chart with “Arrange cards”.</p>`}
</section>`;
}

function cardItem(project: Project, card: Card, o: { first: boolean; last: boolean; filters: Filters }): Html {
  const p = { project: project.name };
  const ref = String(refOf(card));
  const name = nameOf(card);
  const move = (what: "up" | "down" | "remove", label: string, text: string, disabled: boolean) =>
    html`<form hx-post="${href(paths.dashboard, p)}" hx-target="#dashboard" hx-swap="outerHTML" class="inline"><input type="hidden" name="card" value="${ref}"><input type="hidden" name="move" value="${what}"><input type="hidden" name="arranging" value="1"><button type="submit" class="secondary small" id="move-${ref}-${what}" aria-label="${label} ${name}"${disabled ? " disabled" : ""}>${text}</button></form>`;
  const controls = html`<div class="card-moves" x-show="arranging" x-cloak>${move("up", "Move up:", "↑", o.first)}${move("down", "Move down:", "↓", o.last)}${move("remove", "Remove from the dashboard:", "Remove", false)}</div>`;
  if (card.kind === ACTIVITY_CARD)
    return html`<li class="card-item wide" id="card-activity" data-card="activity">${controls}${activityCard(project.name, o.filters)}</li>`;
  const chart = card.chart;
  // The live URL's "&" is written as the markup always had it (interpolated, it would read &amp;).
  return html`<li class="card-item${chart.kind === "funnel" || chart.kind === "retention" || (chart.kind === "series" && chart.definition.group_by) ? " wide" : ""}" id="card-${ref}" data-card="${ref}">${controls}<section class="card chart-card" aria-labelledby="card-title-${ref}">
  <div class="chart-head"><h2 id="card-title-${ref}"><a href="${href(paths.chart, { ...p, id: ref })}">${chart.name}</a></h2><span class="muted small">${describeChart(chart)}</span></div>
  <div class="card-body" hx-get="${href(paths.card, { ...p, id: ref }, { compact: 1 })}" hx-trigger="load" data-live-url="${href(paths.card, { ...p, id: ref }, { compact: 1 })}&live=1" data-testid="card-body"><p class="muted small">Loading…</p></div>
</section></li>`;
}
