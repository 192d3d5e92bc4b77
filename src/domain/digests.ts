// Digests: a project's daily or weekly summary, due at a chosen hour (and weekday) in a chosen time
// zone, sent to some of its integrations and to e-mail addresses: events per channel against the
// period before, the top events, metrics now and at the start, the alerts that fired (events of the
// alerts channel tagged state=firing), and a link to the dashboard.
//
// Once per period, whatever happens: the runner (one leader across instances) reads the period's
// numbers, then in one transaction moves the digest's last period to this one, only from the value
// it read, and queues the deliveries. A restart, a second instance or a run that overlaps another
// finds the period taken and sends nothing; a crash before the commit leaves it to the next run.
import { z } from "zod";
import { type Clock, systemClock } from "../clock.ts";
import { NotFound, ValidationError } from "../errors.ts";
import type { SeriesLine } from "../model/analytics.ts";
import type { MetricValue } from "../model/metric.ts";
import type { Digest, NewDelivery } from "../model/notification.ts";
import type { Project } from "../model/project.ts";
import type { Store } from "../store/store.ts";
import { instantOf, wallOf, zoneName } from "./calendar.ts";
import type { Payload } from "./payload.ts";
import { requireProject } from "./projects.ts";
import * as rule from "./input-fields.ts";
import { kindDocument } from "./integration-kinds/messages.ts";
import { escapeMarkdown } from "./templates.ts";
import { validate } from "./validation.ts";

const HOUR = 3_600_000;
const DAY = 86_400_000;
const TOP_EVENTS = 5;
const CHANNELS = 20;
const METRICS = 20;
const WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];

export const digestInput = z
  .object({
    project: rule.projectName,
    name: z.string().trim().max(100, "must be at most 100 characters").optional(),
    frequency: z.enum(["daily", "weekly"], { error: 'must be "daily" or "weekly"' }),
    hour: z
      .number({ error: "must be an hour from 0 to 23" })
      .int("must be a whole hour from 0 to 23")
      .min(0, "must be 0 to 23")
      .max(23, "must be 0 to 23"),
    weekday: z
      .number()
      .int()
      .min(1, "must be 1 (Monday) to 7 (Sunday)")
      .max(7, "must be 1 (Monday) to 7 (Sunday)")
      .nullish(),
    time_zone: z
      .string({ error: "is required: a time zone such as Europe/Paris or UTC" })
      .refine((tz) => zoneName(tz) !== null, "must be a time zone such as Europe/Paris, America/New_York or UTC"),
    integrations: z
      .array(z.number().int().positive(), { error: "must be a list of integration ids" })
      .max(20, "at most 20 integrations")
      .default([]),
    emails: z
      .array(z.email({ error: "must be e-mail addresses, such as ops@example.com" }).max(254), {
        error: "must be a list of e-mail addresses",
      })
      .max(20, "at most 20 addresses")
      .default([]),
  })
  .strict()
  .refine((d) => d.integrations.length + d.emails.length > 0, {
    message: "choose at least one integration or e-mail address to send it to",
    path: ["emails"],
  });

export type DigestPeriod = { key: string; start: number; end: number; previousStart: number; label: string };

/** The last period whose report was due at or before `now`: it ended at the digest's hour (on its weekday). */
export function lastPeriod(d: Pick<Digest, "frequency" | "hour" | "weekday" | "timeZone">, now: number): DigestPeriod {
  const tz = d.timeZone;
  const wall = wallOf(now, tz);
  let due = Math.floor(wall / DAY) * DAY + d.hour * HOUR;
  if (due > wall) due -= DAY;
  // 1970-01-01 was a Thursday (4): Monday is 1.
  if (d.frequency === "weekly") while (((Math.floor(due / DAY) + 3) % 7) + 1 !== (d.weekday ?? 1)) due -= DAY;
  const days = d.frequency === "weekly" ? 7 : 1;
  const start = instantOf(due - days * DAY, tz);
  const key = new Date(due).toISOString().slice(0, 10);
  const from = new Date(due - days * DAY).toISOString().slice(0, 16).replace("T", " ");
  return {
    key,
    start,
    end: instantOf(due, tz),
    previousStart: instantOf(due - 2 * days * DAY, tz),
    label: `${from} to ${new Date(due).toISOString().slice(0, 16).replace("T", " ")} (${tz})`,
  };
}

/** What a digest says, read before it is sent. */
export type DigestReport = {
  period: DigestPeriod;
  channels: { channel: string; now: number; before: number }[];
  total: { now: number; before: number };
  top: { event: string; count: number }[];
  metrics: { title: string; icon: string | null; now: MetricValue | null; then: MetricValue | null }[];
  alertsFired: number;
};

const show = (v: MetricValue | null) =>
  v === null ? "—" : typeof v === "number" ? v.toLocaleString("en-US") : String(v);

function change(now: number, before: number): string {
  if (before === 0) return now === 0 ? "" : " (none the period before)";
  const pct = Math.round(((now - before) / before) * 100);
  return ` (${pct >= 0 ? "▲" : "▼"} ${Math.abs(pct)}% from ${before.toLocaleString("en-US")})`;
}

/** The report as Markdown, every name from an event or metric escaped. */
export function digestMarkdown(r: DigestReport, link: string): string {
  const e = escapeMarkdown;
  const lines = [`**${r.total.now.toLocaleString("en-US")} events**${e(change(r.total.now, r.total.before))}`, ""];
  for (const c of r.channels)
    lines.push(`- \\#${e(c.channel)}: ${c.now.toLocaleString("en-US")}${e(change(c.now, c.before))}`);
  if (r.top.length)
    lines.push(
      "",
      "**Top events**",
      "",
      ...r.top.map((t, i) => `${i + 1}\\. ${e(t.event)}: ${t.count.toLocaleString("en-US")}`),
    );
  if (r.metrics.length)
    lines.push(
      "",
      "**Metrics** (now, and at the start)",
      "",
      ...r.metrics.map(
        (m) => `- ${m.icon ? `${e(m.icon)} ` : ""}${e(m.title)}: ${e(show(m.now))} (${e(show(m.then))})`,
      ),
    );
  lines.push("", `**Alerts fired**: ${r.alertsFired}`, "", `[Open the dashboard](${link})`);
  return lines.join("\n");
}

/** `clock`: when a period ended and a digest is due (the system's unless given). */
export function digestService(store: Store, { baseUrl, clock = systemClock }: { baseUrl: string; clock?: Clock }) {
  async function find(id: number): Promise<{ digest: Digest; project: Project }> {
    const digest = await store.digests.find(id);
    const project = digest && (await store.projects.findById(digest.projectId));
    if (!digest || !project) throw new NotFound("That digest does not exist.");
    return { digest, project };
  }

  async function report(project: Project, period: DigestPeriod): Promise<DigestReport> {
    const filter = { projectId: project.id };
    const count = (lines: SeriesLine[], i: number) => lines.reduce((n, l) => n + (l.counts[i] ?? 0), 0);
    const [byChannel, top, alerts, metrics] = await Promise.all([
      store.analytics.series({
        filter,
        bounds: [period.previousStart, period.start, period.end],
        measure: "events",
        groupBy: { by: "channel" },
        limit: CHANNELS,
      }),
      store.analytics.series({
        filter,
        bounds: [period.start, period.end],
        measure: "events",
        groupBy: { by: "event" },
        limit: TOP_EVENTS,
      }),
      store.analytics.series({
        filter: { ...filter, channel: "alerts", tags: [["state", "firing"]] },
        bounds: [period.start, period.end],
        measure: "events",
        groupBy: null,
        limit: 1,
      }),
      store.metrics.list(project.id),
    ]);
    const channels = byChannel
      .filter((l) => !l.other && l.group !== null)
      .map((l) => ({ channel: l.group!, now: l.counts[1] ?? 0, before: l.counts[0] ?? 0 }));
    const kept = metrics.slice(0, METRICS);
    const then = await Promise.all(kept.map((m) => store.metrics.pointBefore(m.id, period.start)));
    return {
      period,
      channels: channels.filter((c) => c.now || c.before).sort((a, b) => b.now - a.now),
      total: { now: count(byChannel, 1), before: count(byChannel, 0) },
      top: top
        .filter((l) => !l.other && l.group !== null && l.total > 0)
        .map((l) => ({ event: l.group!, count: l.total })),
      metrics: kept.map((m, i) => ({ title: m.title, icon: m.icon, now: m.value, then: then[i]?.value ?? null })),
      alertsFired: count(alerts, 0),
    };
  }

  /** One delivery per integration (that still exists, in its project, enabled) and one for the e-mail addresses. */
  async function deliveries(d: Digest, project: Project, r: DigestReport): Promise<NewDelivery[]> {
    const link = `${baseUrl}/p/${encodeURIComponent(project.name)}`;
    const title = `${project.name}: ${d.frequency} digest, ${r.period.key}`;
    const markdown = digestMarkdown(r, link);
    const base: Payload = {
      title,
      body: "",
      url: link,
      tag: `digest-${d.id}-${r.period.key}`,
      icon: "📊",
      event: null,
      priority: rule.PRIORITY.normal,
      digest: true,
    };
    const rows: NewDelivery[] = [];
    const integrations = await store.notifications.integrationsOf(project.id);
    for (const id of d.integrationIds) {
      const i = integrations.find((x) => x.id === id && x.enabled);
      if (i)
        rows.push({
          target: "integration",
          targetId: i.id,
          eventId: null,
          payload: JSON.stringify({ ...base, ...kindDocument(i.kind, title, markdown) }),
        });
    }
    if (d.emails.length)
      rows.push({
        target: "digest",
        targetId: d.id,
        eventId: null,
        payload: JSON.stringify({ ...base, ...kindDocument("email", title, markdown), to: d.emails }),
      });
    return rows;
  }

  /** Integration ids of another project are refused, naming the field. */
  async function checkIntegrations(project: Project, ids: number[]): Promise<void> {
    const own = new Set((await store.notifications.integrationsOf(project.id)).map((i) => i.id));
    const foreign = ids.filter((id) => !own.has(id));
    if (foreign.length)
      throw ValidationError.field(
        "integrations",
        "not_found",
        `integrations: ${foreign.join(", ")} ${foreign.length > 1 ? "are not integrations" : "is not an integration"} of ${project.name}`,
      );
  }

  return {
    async list(projectName: string): Promise<Digest[]> {
      return store.digests.list((await requireProject(store, projectName)).id);
    },

    /** The first one goes at the next due time, not for the period that just ended. */
    async create(input: unknown, now = clock.now()): Promise<Digest> {
      const i = validate(digestInput, input);
      const project = await requireProject(store, i.project);
      await checkIntegrations(project, i.integrations);
      const spec = {
        frequency: i.frequency,
        hour: i.hour,
        weekday: i.frequency === "weekly" ? (i.weekday ?? 1) : null,
        timeZone: zoneName(i.time_zone)!,
      };
      const name = i.name || `${i.frequency === "daily" ? "Daily" : "Weekly"} digest`;
      return store.digests.create(
        {
          projectId: project.id,
          name,
          ...spec,
          integrationIds: i.integrations,
          emails: i.emails,
          lastPeriod: lastPeriod(spec, now).key,
        },
        now,
      );
    },

    async remove(id: number): Promise<void> {
      await find(id);
      await store.digests.delete(id);
    },

    /** Sends the last period's digest now, whether or not it went already (the dashboard's "Send now"). */
    async sendNow(id: number, now = clock.now()): Promise<number> {
      const { digest, project } = await find(id);
      const rows = await deliveries(digest, project, await report(project, lastPeriod(digest, now)));
      return store.notifications.enqueue(rows, now);
    },

    /** Queues every digest whose period ended and was not sent; how many went. Run by one leader at a time. */
    async runDue(now = clock.now()): Promise<number> {
      let sent = 0;
      for (const d of await store.digests.enabled()) {
        const period = lastPeriod(d, now);
        if (d.lastPeriod === period.key) continue;
        const project = await store.projects.findById(d.projectId);
        if (!project) continue;
        const rows = await deliveries(d, project, await report(project, period));
        const claimed = await store.tx(async (tx) => {
          if (!(await tx.digests.claimPeriod(d.id, d.lastPeriod, period.key, now))) return false;
          await tx.notifications.enqueue(rows, now);
          return true;
        });
        if (claimed) sent++;
      }
      return sent;
    },

    /** When each digest is due next, for the list. */
    describe(d: Digest): string {
      const at = `${String(d.hour).padStart(2, "0")}:00 ${d.timeZone}`;
      return d.frequency === "daily" ? `daily at ${at}` : `weekly on ${WEEKDAYS[(d.weekday ?? 1) - 1]} at ${at}`;
    },
  };
}
