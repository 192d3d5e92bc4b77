// A project's checks as the dashboard shows them: each check's state (in words and colour), last
// ping, when it is next due, a bar of its latest runs, its ping URL with the crontab snippets, its
// badge; the form that makes one, the project's ping and badge keys; and a check's ping log.
import { type BadgeStatus, badgeStatus } from "../../domain/check-badges.ts";
import { dueAt } from "../../domain/check-notices.ts";
import type { CheckUrls } from "../../domain/checks.ts";
import { formatDuration } from "../../domain/units.ts";
import { href } from "../../http/href.ts";
import type { Check, CheckRun } from "../../model/check.ts";
import type { StoredEvent } from "../../model/event.ts";
import type { Project } from "../../model/project.ts";
import { type Html, html } from "../html.ts";
import { paths } from "../paths.ts";
import { time } from "./events.ts";
import { confirmDialog } from "./dialogs.ts";
import { fieldRow, options } from "./fields.ts";

const STATES = { new: "New", up: "Up", started: "Started", down: "Down", paused: "Paused", late: "Late" } as const;

/** What a row needs besides its check: its URLs, its runs, the badge key, and whether the reader may change it. */
export type RowContext = {
  project: Project;
  urls: CheckUrls;
  runs: CheckRun[];
  badgeKey: string;
  baseUrl: string;
  csrf: string;
  mayEdit: boolean;
  now: number;
};

export const CURL = "curl -fsS -m 10 --retry 5 -o /dev/null";

/** Cron's intervals, longest first: what a crontab line can run a job every so often at. */
const CRON_EVERY: [seconds: number, expr: string][] = [
  [7 * 86_400, "0 3 * * 1"],
  [86_400, "0 3 * * *"],
  ...[12, 8, 6, 4, 3, 2].map((h): [number, string] => [h * 3600, `0 */${h} * * *`]),
  [3600, "0 * * * *"],
  ...[30, 20, 15, 10, 5, 2].map((m): [number, string] => [m * 60, `*/${m} * * * *`]),
  [60, "* * * * *"],
];

/** When a crontab line should run the job: the check's cron expression, or as often as its period asks (never less often). */
export function crontabTimes(c: Check): string {
  if (c.schedule.kind === "cron") return c.schedule.expr;
  const seconds = c.schedule.seconds;
  return (CRON_EVERY.find(([every]) => every <= seconds) ?? CRON_EVERY[CRON_EVERY.length - 1]!)[1];
}

/** The crontab lines for a URL: after the job, a start/finish pair, the job's exit status. */
export function snippets(url: string, when = "0 3 * * *"): { id: string; title: string; text: string }[] {
  return [
    { id: "cron", title: "Crontab: after the job succeeds", text: `${when} /path/to/job.sh && ${CURL} ${url}` },
    {
      id: "pair",
      title: "Start and finish (the run's duration)",
      text: `${when} ${CURL} ${url}/start && /path/to/job.sh && ${CURL} ${url}`,
    },
    { id: "exit", title: "The job's exit status (0 is success)", text: `${when} /path/to/job.sh; ${CURL} ${url}/$?` },
  ];
}

const schedule = (c: Check) =>
  c.schedule.kind === "period"
    ? `every ${formatDuration(c.schedule.seconds * 1000)}`
    : `“${c.schedule.expr}” (${c.schedule.tz})`;

/** The latest runs as bars: height by duration, colour and a label by outcome, each with its words for a screen reader. */
export function runBar(c: Check, runs: CheckRun[]): Html {
  if (!runs.length)
    return html`<p class="muted small run-bar-empty" data-testid="run-bar" data-runs="0">No runs yet.</p>`;
  const longest = Math.max(1, ...runs.map((r) => r.durationMs ?? 0));
  const failed = runs.filter((r) => !r.ok).length;
  const summary = `Last ${runs.length} runs of ${c.name}: ${runs.length - failed} succeeded, ${failed} failed`;
  const w = 6;
  return html`<svg class="run-bar" data-testid="run-bar" data-runs="${runs.length}" viewBox="0 0 ${runs.length * w} 24" width="${runs.length * w}" height="24" role="img" aria-label="${summary}"><title>${summary}</title>${runs.map(
    (r, i) => {
      const h = r.durationMs === null ? 24 : Math.max(4, Math.round((24 * r.durationMs) / longest));
      const took = r.durationMs === null ? "" : `, took ${formatDuration(r.durationMs)}`;
      return html`<rect x="${i * w}" y="${24 - h}" width="${w - 1}" height="${h}" class="${r.ok ? "run-ok" : "run-fail"}"><title>${r.label} at ${new Date(r.at).toISOString()}${took}</title></rect>`;
    },
  )}</svg>`;
}

const badgeUrls = (baseUrl: string, key: string, name: string) => ({
  svg: `${baseUrl}${href(paths.badge, { key, file: `${name}.svg` })}`,
  json: `${baseUrl}${href(paths.badge, { key, file: `${name}.json` })}`,
});

function copyRow(id: string, label: string, value: string): Html {
  return html`<div class="copy-row" x-data="copyButton"><input type="text" readonly value="${value}" x-ref="source" id="${id}" aria-label="${label}" data-testid="${id}"><button type="button" class="secondary small" x-on:click="copy"><span x-text="label">Copy</span><span class="visually-hidden"> ${label}</span></button></div>`;
}

/** When its next report is due (its grace on top: dueAt is the grace's end), or by when a run it started must finish. */
function due(c: Check, now: number): Html {
  const at = dueAt(c);
  if (at === null) return html`next due —`;
  if (c.state === "started") return html`must finish ${time(at, now)}`;
  return html`next due ${time(at - c.grace * 1000, now)}`;
}

/** One check's row; `id` check-<id>, replaced whole when a ping changes it. */
export function checkRow(c: Check, x: RowContext): Html {
  const status: BadgeStatus | "started" = c.state === "started" ? "started" : badgeStatus(c, x.now);
  const at = { project: x.project.name, id: c.id };
  const words = STATES[status];
  const badge = badgeUrls(x.baseUrl, x.badgeKey, c.slug);
  // An up check turns late at its due time with nothing sent: the page loads its row again then.
  const deadline = dueAt(c);
  const lateAt = status === "up" && deadline !== null ? html` data-late-at="${deadline - c.grace * 1000}"` : "";
  return html`<li class="card check-row" id="check-${c.id}" data-testid="check-row" data-slug="${c.slug}" data-state="${status}" data-row-url="${href(paths.checkRow, at)}"${lateAt}>
  <div class="alert-head"><a class="alert-name" href="${href(paths.check, at)}">${c.name}</a><span class="badge state-${status}" data-testid="check-state">${words}</span></div>
  <p class="muted small">${c.slug} · ${schedule(c)}, grace ${formatDuration(c.grace * 1000)} · #${c.channel}</p>
  <p class="small alert-times"><span>${words} since ${time(c.since, x.now)}</span> <span data-testid="last-ping">last ping ${c.lastPing === null ? "never" : time(c.lastPing, x.now)}</span> <span data-testid="next-due">${due(c, x.now)}</span>${c.lastDurationMs === null ? "" : html` <span>last run took ${formatDuration(c.lastDurationMs)}</span>`}</p>
  ${runBar(c, x.runs)}
  ${copyRow(`ping-url-${c.id}`, `Ping URL of ${c.name}`, x.urls.ping)}
  <details class="check-more"><summary>Snippets, slug URL, push URL and badge<span class="visually-hidden"> of ${c.name}</span></summary>
    ${snippets(x.urls.ping, crontabTimes(c)).map((s) => html`<div class="snippet-box" x-data="copyButton"><div class="snippet-head"><h3 id="snippet-${s.id}-${c.id}">${s.title}</h3><button type="button" class="secondary small" x-on:click="copy" x-text="label" aria-describedby="snippet-${s.id}-${c.id}">Copy</button></div><pre class="snippet" x-ref="source" data-testid="snippet-${s.id}" tabindex="0" aria-labelledby="snippet-${s.id}-${c.id}">${s.text}</pre></div>`)}
    ${copyRow(`slug-url-${c.id}`, `Slug URL of ${c.name}`, x.urls.slug)}
    ${copyRow(`push-url-${c.id}`, `Uptime Kuma push URL of ${c.name}`, x.urls.push)}
    ${copyRow(`badge-svg-${c.id}`, `Badge (SVG) of ${c.name}`, badge.svg)}
    ${copyRow(`badge-json-${c.id}`, `Badge (shields.io endpoint) of ${c.name}`, badge.json)}
  </details>
  ${
    x.mayEdit
      ? html`<div class="actions wrap" data-testid="check-controls">
    <form method="post" action="${href(c.paused ? paths.checkResume : paths.checkPause, at)}" class="inline"><input type="hidden" name="_csrf" value="${x.csrf}"><button type="submit" class="secondary small">${c.paused ? "Resume" : "Pause"}<span class="visually-hidden"> ${c.name}</span></button></form>
    <button type="button" class="secondary small danger" hx-get="${href(paths.checkDelete, at)}" hx-target="#modal">Delete<span class="visually-hidden"> ${c.name}</span></button>
  </div>`
      : ""
  }
</li>`;
}

export function checkRows(checks: Check[], rowOf: (c: Check) => RowContext): Html {
  if (!checks.length)
    return html`<div class="card" id="check-list" data-testid="check-list"><p>No checks yet. A check is a cron job or a service that reports by calling its URL; silence past its period and grace, or a failure, makes it down and notifies.</p><p class="small muted">Moving from Healthchecks or Uptime Kuma? A check added here gets new URLs; to keep a job's own, make its check with <code>signalboard check create --uuid …</code> (or <code>--push-token …</code>) or over the API (<code>POST /v1/checks</code>), then change only the host in its URL.</p></div>`;
  return html`<ul class="alert-list plain" id="check-list" data-testid="check-list">${checks.map((c) => checkRow(c, rowOf(c)))}</ul>`;
}

export type CheckFormFields = Record<string, string>;

/** The form's labels, which its error summary names each problem by. */
const LABELS: Record<string, string> = {
  name: "Name",
  slug: "Slug",
  period: "Every",
  cron: "Schedule",
  tz: "Time zone",
  grace: "Grace",
  channel: "Channel",
  notify_after: "Notify after",
};

function checkForm(
  project: Project,
  f: CheckFormFields,
  e: Record<string, string>,
  csrf: string,
  zones: string[],
): Html {
  const kind = f.schedule === "cron" ? "cron" : "period";
  const show = (value: string) => html` data-show="schedule:${value}"${kind === value ? "" : html` hidden`}`;
  const problems = Object.entries(e);
  return html`<details class="card" id="new-check"${problems.length ? " open" : ""}><summary data-testid="new-check">New check</summary>
<form class="stack alert-form" method="post" action="${href(paths.checks, { project: project.name })}" x-data="showFor" x-on:change="changed" novalidate>
  ${problems.length ? html`<div class="alert error-summary" role="alert"><p>The check cannot be saved yet:</p><ul>${problems.map(([name, message]) => html`<li><a href="#check-${name}">${LABELS[name] ? `${LABELS[name]}: ` : ""}${message}</a></li>`)}</ul></div>` : ""}
  <input type="hidden" name="_csrf" value="${csrf}">
  ${fieldRow("check-name", "Name", (a) => html`<input id="check-name"${a} name="name" value="${f.name ?? ""}" maxlength="100" required>`, e.name)}
  ${fieldRow("check-slug", "Slug", (a) => html`<input id="check-slug"${a} name="slug" value="${f.slug ?? ""}" placeholder="made from the name" maxlength="100" autocomplete="off" spellcheck="false" autocapitalize="off">`, e.slug, "Lowercase letters, digits and dashes; names the check in slug URLs.")}
  ${fieldRow(
    "check-schedule",
    "Expected",
    (a) =>
      html`<select id="check-schedule"${a} name="schedule" data-controls="schedule">${options(
        [
          ["period", "At least every…"],
          ["cron", "On a schedule (cron)"],
        ],
        kind,
      )}</select>`,
    undefined,
  )}
  <div${show("period")}>${fieldRow("check-period", "Every", (a) => html`<input id="check-period"${a} name="period" value="${f.period ?? ""}" placeholder="1d" autocomplete="off">`, e.period, "Seconds, or 90s, 15m, 12h, 1d.")}</div>
  <div${show("cron")} class="field-pair">
    ${fieldRow("check-cron", "Schedule", (a) => html`<input id="check-cron"${a} name="cron" value="${f.cron ?? ""}" placeholder="0 3 * * *" autocomplete="off">`, e.cron, "minute hour day month weekday")}
    ${fieldRow("check-tz", "Time zone", (a) => html`<input id="check-tz"${a} name="tz" value="${f.tz ?? ""}" list="time-zones" placeholder="UTC" autocomplete="off">`, e.tz)}
  </div>
  ${fieldRow("check-grace", "Grace", (a) => html`<input id="check-grace"${a} name="grace" value="${f.grace ?? ""}" placeholder="1h" autocomplete="off">`, e.grace, "How late a ping may be, and how long a run may take.")}
  ${fieldRow("check-channel", "Channel", (a) => html`<input id="check-channel"${a} name="channel" value="${f.channel ?? ""}" placeholder="checks" maxlength="64" autocomplete="off" spellcheck="false" autocapitalize="off">`, e.channel, "Where its pings are logged.")}
  ${fieldRow("check-notify_after", "Notify after", (a) => html`<input id="check-notify_after"${a} name="notify_after" type="number" min="1" step="1" value="${f.notify_after ?? ""}" placeholder="1" inputmode="numeric">`, e.notify_after, "Failures in a row before it notifies (flapping jobs); empty: at once. Its recovery notifies only if its failure did.")}
  <datalist id="time-zones">${zones.map((z) => html`<option value="${z}"></option>`)}</datalist>
  <div class="actions"><button type="submit" data-testid="save-check">Add check</button></div>
</form>
</details>`;
}

export type ChecksPageData = {
  checks: Check[];
  rowOf: (c: Check) => RowContext;
  pingKey: string;
  badgeKey: string;
  baseUrl: string;
  csrf: string;
  mayEdit: boolean;
  form: { fields: CheckFormFields; errors: Record<string, string> };
  zones: string[];
};

function keysCard(project: Project, d: ChecksPageData): Html {
  const p = { project: project.name };
  const all = `${d.baseUrl}${href(paths.projectBadge, { key: `${d.badgeKey}.svg` })}`;
  const regenerate = (path: string, what: string) =>
    d.mayEdit
      ? html`<form method="post" action="${href(path as typeof paths.checkPingKey, p)}" class="inline"><input type="hidden" name="_csrf" value="${d.csrf}"><button type="submit" class="secondary small">Make a new ${what}</button></form>`
      : "";
  return html`<section class="card stack" aria-labelledby="keys-title"><h2 id="keys-title">Keys</h2>
  <p class="small muted">The ping key names a check by its slug: <code>/ping/&lt;ping key&gt;/&lt;slug&gt;</code>. A new one retires URLs with the old.</p>
  ${copyRow("ping-key", "Ping key", d.pingKey)}
  ${regenerate(paths.checkPingKey, "ping key")}
  <p class="small muted">The badge key makes public status badges (shields.io style), one per check and one for all of them; it pings nothing.</p>
  ${copyRow("badge-all-svg", "Badge of all checks (SVG)", all)}
  ${copyRow("badge-all-json", "Badge of all checks (shields.io endpoint)", all.replace(/\.svg$/, ".json"))}
  ${regenerate(paths.checkBadgeKey, "badge key")}
</section>`;
}

export function checksPage(project: Project, d: ChecksPageData): Html {
  const p = { project: project.name };
  return html`<header class="page-header">
  <p class="crumbs"><a href="${href(paths.project, p)}">${project.name}</a></p>
  <h1>Checks</h1>
</header>
<div class="stack" x-data="checksPage" data-live-url="${href(paths.live, p, { feed: "0", checks: "1" })}" data-list-url="${href(paths.checkList, p)}">
${d.mayEdit ? checkForm(project, d.form.fields, d.form.errors, d.csrf, d.zones) : ""}
${checkRows(d.checks, d.rowOf)}
${keysCard(project, d)}
</div>`;
}

const pingLabel = (e: StoredEvent) =>
  e.tags?.kind === "exit" ? `exit ${String(e.tags["exit-status"])}` : String(e.tags?.kind ?? e.name);

/** A check's ping log: its latest pings, newest first, with their bodies (escaped, as every text). */
export function checkLogPage(project: Project, c: Check, pings: StoredEvent[], now: number): Html {
  const p = { project: project.name };
  return html`<header class="page-header">
  <p class="crumbs"><a href="${href(paths.project, p)}">${project.name}</a> / <a href="${href(paths.checks, p)}">checks</a></p>
  <h1>${c.name}</h1>
</header>
<section class="card"><h2>Latest pings</h2>${
    pings.length
      ? html`<table class="ping-log" data-testid="ping-log"><thead><tr><th scope="col">When</th><th scope="col">Ping</th><th scope="col">Duration</th><th scope="col">Body</th></tr></thead><tbody>${pings.map(
          (e) =>
            html`<tr data-testid="ping"><td>${time(e.ts, now)}</td><td>${pingLabel(e)}</td><td>${typeof e.tags?.duration === "number" ? formatDuration(e.tags.duration * 1000) : ""}</td><td>${e.description ? html`<pre class="ping-body">${e.description}</pre>` : ""}</td></tr>`,
        )}</tbody></table>`
      : html`<p>No pings yet.</p>`
  }</section>`;
}

export const deleteCheckDialog = (project: Project, c: Check): Html =>
  confirmDialog({
    title: `Delete “${c.name}”?`,
    body: "Its ping URLs answer 404 from now on; its past pings stay in their channel.",
    action: href(paths.checkDelete, { project: project.name, id: c.id }),
    confirm: "Delete",
    danger: true,
  });
