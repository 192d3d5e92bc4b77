// A status page's content: each chosen check and alert rule with its state now and the last 90 days
// as bars (a day up, down, or without data), and each chosen metric's value now. The days are the
// share's time zone's, from midnight to midnight there (23 or 25 hours when its clocks change: still
// one bar). They come from
// the notices recorded in the project's `alerts` channel (a check's up/down, a rule's firing and
// resolved): reads of the feed per check or rule, through the read path (a range of the tag
// index), newest first, in pages, at most HISTORY_NOTICES of them.
import type { Alert } from "../model/alert.ts";
import type { Check } from "../model/check.ts";
import type { StoredEvent } from "../model/event.ts";
import type { Position } from "../model/filter.ts";
import type { MetricValue } from "../model/metric.ts";
import type { Share } from "../model/share.ts";
import type { Store } from "../store/store.ts";
import { ALERTS_CHANNEL } from "./alert-runner.ts";
import { instantOf, wallOf } from "./calendar.ts";
import { type BadgeStatus, badgeStatus } from "./check-badges.ts";

export const HISTORY_DAYS = 90;
const DAY = 86_400_000;
/** The newest notices read per check or rule: far more than 90 days of changes of anything sane. */
const HISTORY_NOTICES = 2000;
const NOTICES_PAGE = 500;

/** A day's bar: down if it was down (or firing) at any time that day, up if watched and never down, none before it was watched. */
export type DayBar = "up" | "down" | "none";

export type StatusItem = {
  kind: "check" | "alert";
  id: number;
  name: string;
  /** Now: up, down, late, new or paused (a check); up (ok), down (firing) or paused (a rule). */
  status: BadgeStatus;
  /** Oldest first, HISTORY_DAYS of them, the last one today (in the share's time zone). */
  days: DayBar[];
  /** The share of watched days (up or down) that were up, 0..1; null when none was watched. */
  uptime: number | null;
};

export type StatusMetric = { title: string; value: MetricValue | null; icon: string | null; updatedAt: number | null };

export type StatusAnswer = {
  items: StatusItem[];
  metrics: StatusMetric[];
  at: number;
  /** The zone the days are in, and each day's date there (YYYY-MM-DD), oldest first. */
  timeZone: string;
  dates: string[];
};

/** The HISTORY_DAYS days up to `now` in `tz`: when each begins (Unix ms), and its date there; oldest first. */
export function statusDays(now: number, tz: string): { starts: number[]; dates: string[] } {
  const today = Math.floor(wallOf(now, tz) / DAY) * DAY;
  const walls = Array.from({ length: HISTORY_DAYS }, (_, i) => today - (HISTORY_DAYS - 1 - i) * DAY);
  return {
    starts: walls.map((wall) => instantOf(wall, tz)),
    dates: walls.map((wall) => new Date(wall).toISOString().slice(0, 10)),
  };
}

/** A notice's direction: true down (down, firing), false up (up, resolved); null for neither (a test). */
function downOf(e: StoredEvent): boolean | null {
  const state = e.tags?.state;
  if (state === "down" || state === "firing") return true;
  if (state === "up" || state === "resolved") return false;
  return null;
}

/**
 * The bars of the days that begin at `starts` (statusDays; the last is today): `notices` newest
 * first, `downNow` where it stands now, `since` when it began to be watched (no data before),
 * `watched` whether it is watched at all now (a paused or never-pinged thing shows no data for the
 * days without notices).
 */
export function dayBars(
  notices: StoredEvent[],
  downNow: boolean,
  since: number,
  watched: boolean,
  starts: number[],
): DayBar[] {
  const changes = notices
    .map((e) => ({ at: e.ts, down: downOf(e) }))
    .filter((c): c is { at: number; down: boolean } => c.down !== null)
    .sort((a, b) => a.at - b.at);
  // Walking back from now: the state in each day is what the next change's opposite was.
  const bars: DayBar[] = [];
  let i = changes.length - 1;
  let state = downNow;
  for (let day = starts.length - 1; day >= 0; day--) {
    const start = starts[day]!;
    const end = starts[day + 1] ?? Number.POSITIVE_INFINITY;
    let down = state;
    while (i >= 0 && changes[i]!.at >= start) {
      down ||= changes[i]!.down;
      state = !changes[i]!.down; // before a change to down, it was up, and the other way round
      i--;
    }
    down ||= state;
    if (end <= since || (!watched && !changes.length)) bars.push("none");
    else bars.push(down ? "down" : "up");
  }
  return bars.reverse();
}

function uptimeOf(days: DayBar[]): number | null {
  const watched = days.filter((d) => d !== "none");
  return watched.length ? watched.filter((d) => d === "up").length / watched.length : null;
}

/**
 * A check's (or a rule's) notices since `from`, newest first, at most HISTORY_NOTICES, read in
 * pages of NOTICES_PAGE: each page's rows are made into events in one turn of the event loop
 * (on PostgreSQL, on the thread that serves requests), so a page of two thousand never holds it.
 */
async function noticesOf(store: Store, projectId: number, tag: [string, string], from: number): Promise<StoredEvent[]> {
  const notices: StoredEvent[] = [];
  let before: Position | undefined;
  while (notices.length < HISTORY_NOTICES) {
    const limit = Math.min(NOTICES_PAGE, HISTORY_NOTICES - notices.length);
    const page = await store.events.list({ projectId, channel: ALERTS_CHANNEL, tags: [tag], from, before, limit });
    notices.push(...page);
    if (page.length < limit) break;
    const last = page.at(-1)!;
    before = { ts: last.ts, id: last.id };
  }
  return notices;
}

function checkItem(c: Check, notices: StoredEvent[], now: number, starts: number[]): StatusItem {
  const status = badgeStatus(c, now);
  const watched = status !== "paused" && status !== "new";
  const days = dayBars(notices, status === "down", c.createdAt, watched || notices.length > 0, starts);
  return { kind: "check", id: c.id, name: c.name, status, days, uptime: uptimeOf(days) };
}

function alertItem(a: Alert, notices: StoredEvent[], starts: number[]): StatusItem {
  const status: BadgeStatus = a.paused ? "paused" : a.state === "firing" ? "down" : "up";
  const days = dayBars(notices, a.state === "firing", a.createdAt, !a.paused || notices.length > 0, starts);
  return { kind: "alert", id: a.id, name: a.name, status, days, uptime: uptimeOf(days) };
}

/** What a status share shows at `now`: its chosen things that still exist and are still its project's. */
export async function statusOf(store: Store, share: Share, now: number): Promise<StatusAnswer> {
  const mine = <T extends { projectId: number }>(x: T | null): x is T => x?.projectId === share.projectId;
  const [checks, alerts, metrics] = await Promise.all([
    Promise.all(share.checks.map((id) => store.checks.find(id))).then((l) => l.filter(mine)),
    Promise.all(share.alerts.map((id) => store.alerts.find(id))).then((l) => l.filter(mine)),
    Promise.all(share.metrics.map((title) => store.metrics.find(share.projectId, title))),
  ]);
  const { starts, dates } = statusDays(now, share.timeZone);
  const from = starts[0]!;
  const items = await Promise.all([
    ...checks.map(async (c) =>
      checkItem(c, await noticesOf(store, share.projectId, ["check", c.slug], from), now, starts),
    ),
    ...alerts.map(async (a) =>
      alertItem(a, await noticesOf(store, share.projectId, ["alert", String(a.id)], from), starts),
    ),
  ]);
  return {
    timeZone: share.timeZone,
    dates,
    items,
    metrics: metrics
      .filter((m) => m !== null)
      .map((m) => ({ title: m.title, value: m.value, icon: m.icon, updatedAt: m.updatedAt })),
    at: now,
  };
}
