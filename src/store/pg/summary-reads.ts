// The summaries' reads on PostgreSQL (store/summary/series.ts asks them), on the read pool: sums of
// the hourly counts per span (one statement for every span), the monthly activity rows a page at a
// time (rows are read on the thread that acknowledges writes: a page is a few milliseconds of it),
// and the few events of the parts of an hour at a bucket's ends.
import { and, type SQL, sql } from "drizzle-orm";
import { rowsOn } from "./db.ts";
import { MAX_VALUES } from "../summary/deltas.ts";
import type { ActivityRow, Group, Span, SummaryReads } from "../summary/reads.ts";
import type { Ctx } from "./context.ts";
import { eventSource, groupOf, within } from "./event-source.ts";
import { cohortCounter, usersCounter } from "./summary-users.ts";

const PAGE = 5000;

/** Spans as two int arrays, for unnest. */
const spanArrays = (spans: Span[]) => [
  `{${spans.map((s) => s[0]).join(",")}}`,
  `{${spans.map((s) => s[1]).join(",")}}`,
];

export function summaryReads(ctx: Ctx): SummaryReads {
  const { db } = ctx;
  const rows = rowsOn(db);

  /** Sums per span and group, from rows of (span index, group, n). */
  const perSpan = <G>(n: number, found: { i: number; g: G; n: number }[]) => {
    const out = Array.from({ length: n }, () => new Map<G, number>());
    for (const row of found) out[row.i - 1]!.set(row.g, (out[row.i - 1]!.get(row.g) ?? 0) + Number(row.n));
    return out;
  };

  /** Sums of a summary table's counts (c) of a project per span of hours and group, where `also` holds. */
  const sums = async <G>(projectId: number, spans: Span[], group: SQL, table: SQL, also: SQL) => {
    if (!spans.length) return [];
    const [lo, hi] = spanArrays(spans);
    const found = await rows<{ i: number; g: G; n: number }>(sql`
      SELECT s.i::int AS i, ${group} AS g, sum(c.n)::float8 AS n
        FROM unnest(${lo}::int[], ${hi}::int[]) WITH ORDINALITY AS s(lo, hi, i)
        JOIN ${table} c ON c.project_id = ${projectId} AND c.hour >= s.lo AND c.hour < s.hi ${also}
       GROUP BY 1, 2`);
    return perSpan(spans.length, found);
  };

  return {
    users: usersCounter(ctx),
    cohorts: cohortCounter(ctx),

    async ready(projectId) {
      const [row] = await rows<{ n: number }>(
        sql`SELECT count(*)::int AS n FROM summary_builds WHERE project_id = ${projectId}`,
      );
      return (row?.n ?? 0) === 0;
    },

    async wide(projectId, kind, key) {
      const [row] = await rows<{ n: number }>(
        sql`SELECT n FROM summary_keys WHERE project_id = ${projectId} AND kind = ${kind} AND key = ${key}`,
      );
      return (row?.n ?? 0) > MAX_VALUES;
    },

    async channelId(projectId, name) {
      const [row] = await rows<{ id: number }>(
        sql`SELECT id FROM channels WHERE project_id = ${projectId} AND name = ${name}`,
      );
      return row?.id ?? null;
    },

    async counts(q, spans) {
      const group =
        q.by === "channel"
          ? sql`(SELECT ch.name FROM channels ch WHERE ch.id = c.channel_id)`
          : q.by === "event"
            ? sql`c.event`
            : sql`NULL::text`;
      const channel = q.channelId === undefined ? sql`` : sql`AND c.channel_id = ${q.channelId}`;
      const name = q.name === undefined ? sql`` : sql`AND c.event = ${q.name}`;
      return sums<Group>(q.projectId, spans, group, sql`event_counts`, sql`${channel} ${name}`);
    },

    async tagCounts(q, spans) {
      const value = q.value === undefined ? sql`` : sql`AND c.value = ${q.value}`;
      return sums<string>(q.projectId, spans, sql`c.value`, sql`tag_counts`, sql`AND c.key = ${q.key} ${value}`);
    },

    async activity(q, each) {
      const columns = sql.raw(["value", "month", "user_id", "days", ...q.columns.map((k) => `d${k}`)].join(", "));
      // A range of the key (kind, key, value, month, user) a page at a time, for each value and month.
      const values =
        q.value !== undefined
          ? [q.value]
          : (
              await rows<{ value: string }>(
                sql`SELECT value FROM summary_values WHERE project_id = ${q.projectId} AND kind = ${q.kind} AND key = ${q.key}`,
              )
            )
              .map((r) => r.value)
              .filter((v) => !q.only || q.only.has(v));
      for (const value of values) {
        for (let month = q.months[0]; month <= q.months[1]; month++) {
          let after = "";
          for (;;) {
            const page = await rows<Record<string, unknown>>(sql`
              SELECT ${columns} FROM activity
               WHERE project_id = ${q.projectId} AND kind = ${q.kind} AND key = ${q.key} AND value = ${value}
                 AND month = ${month} AND user_id > ${after}
               ORDER BY user_id LIMIT ${PAGE}`);
            const list = page.map((row) => Object.values(row) as ActivityRow);
            if (list.length) each(list);
            if (list.length < PAGE) break;
            after = list.at(-1)![2];
          }
        }
      }
    },

    async rawCounts(filter, by, spans) {
      if (!spans.length) return [];
      const source = eventSource(filter, true);
      const { from, group } = groupOf(by, source.from);
      const [lo, hi] = spanArrays(spans);
      const found = await rows<{ i: number; g: Group; n: number }>(sql`
        SELECT s.i::int AS i, x.g, x.n FROM unnest(${lo}::bigint[], ${hi}::bigint[]) WITH ORDINALITY AS s(lo, hi, i)
          CROSS JOIN LATERAL (SELECT ${group} AS g, count(*)::int AS n FROM ${from}
                               WHERE ${and(source.where, within(source, sql`s.lo`, sql`s.hi`))} GROUP BY 1) x`);
      return perSpan(spans.length, found);
    },

    async rawUsers(filter, by, spans) {
      if (!spans.length) return [];
      const source = eventSource(filter, true);
      const { from, group } = groupOf(by, source.from);
      const [lo, hi] = spanArrays(spans);
      const found = await rows<{ i: number; g: Group; u: string }>(sql`
        SELECT s.i::int AS i, x.g, x.u FROM unnest(${lo}::bigint[], ${hi}::bigint[]) WITH ORDINALITY AS s(lo, hi, i)
          CROSS JOIN LATERAL (SELECT DISTINCT ${group} AS g, events.user_id AS u FROM ${from}
                               WHERE ${and(source.where, sql`events.user_id IS NOT NULL`, within(source, sql`s.lo`, sql`s.hi`))}) x`);
      return found.map((r) => [r.i - 1, r.g, r.u] as [number, Group, string]);
    },
  };
}
