// Distinct users from the activity rows, counted by PostgreSQL: rows read on the thread that
// acknowledges writes cost a few microseconds each there, so only the counts come back. Each row's
// buckets are a bigint's bits (a CASE per month: a whole day's bit, or the hours of a day the
// buckets cut), or'ed per user (and group), then counted per bit; 64 buckets a statement. What it
// answers is what store/summary/series.ts counts in JavaScript from the same rows (the SQLite store
// does that, in a reader process); the property test holds both to a scan of the events.
import { and, type SQL, sql } from "drizzle-orm";
import { rowsOn } from "./db.ts";
import type { RetentionCounts, RetentionQuery, SeriesLine } from "../../model/analytics.ts";
import { byTotal, zeros } from "../series.ts";
import type { MonthMap } from "../summary/activity.ts";
import { MONTH_DAYS } from "../summary/deltas.ts";
import type { UsersAsk } from "../summary/reads.ts";
import type { Ctx } from "./context.ts";
import { eventSource, groupOf, within } from "./event-source.ts";

const BITS = 64;
const bit = (i: number) => `(${BigInt.asIntN(64, 1n << BigInt(i))})::bigint`;

/** SQL for the bits a row has: `bitOf` gives a bucket's bit (or null: not counted in this statement). */
function maskOf(
  maps: Map<number, MonthMap>,
  bitOf: (bucket: number) => number | null,
): { mask: string; months: number[] } {
  const cases: string[] = [];
  const months: number[] = [];
  for (const [month, map] of maps) {
    const parts: string[] = [];
    const wholeDays = new Map<number, number>();
    for (let k = 0; k < MONTH_DAYS; k++) {
      const bucket = map.day[k]!;
      if (bucket >= 0 && bitOf(bucket) !== null)
        wholeDays.set(bitOf(bucket)!, (wholeDays.get(bitOf(bucket)!) ?? 0) | (1 << k));
      if (bucket !== -2) continue;
      const hours = new Map<number, number>();
      for (let h = 0; h < 24; h++) {
        const b = map.slot[k * 24 + h]!;
        const i = b >= 0 ? bitOf(b) : null;
        if (i !== null) hours.set(i, (hours.get(i) ?? 0) | (1 << h));
      }
      for (const [i, mask] of hours) parts.push(`CASE WHEN d${k} & ${mask} <> 0 THEN ${bit(i)} ELSE 0 END`);
    }
    for (const [i, mask] of wholeDays) parts.push(`CASE WHEN days & ${mask} <> 0 THEN ${bit(i)} ELSE 0 END`);
    if (!parts.length) continue;
    months.push(month);
    cases.push(`WHEN ${month} THEN ${parts.join(" | ")}`);
  }
  return { mask: cases.length ? `CASE month ${cases.join(" ")} ELSE 0::bigint END` : "0::bigint", months };
}

export function usersCounter(ctx: Ctx) {
  const { db } = ctx;
  const rows = rowsOn(db);

  /** Each (group, user) with the bits of the buckets it was seen in, as a CTE `per`. */
  function per(ask: UsersAsk, bitOf: (bucket: number) => number | null): SQL {
    const { mask, months } = maskOf(ask.maps, bitOf);
    const activity = sql`SELECT value AS g, user_id AS u, (${sql.raw(mask)}) AS bits FROM activity
      WHERE project_id = ${ask.projectId} AND kind = ${ask.kind} AND key = ${ask.key}
        ${ask.value === undefined ? sql`` : sql`AND value = ${ask.value}`} AND month = ANY(${`{${months.join(",")}}`}::int[])`;
    const spans = ask.rawSpans.map((span, i) => ({ span, i: bitOf(ask.rawOf[i]!) })).filter((s) => s.i !== null);
    if (!spans.length)
      return sql`per AS (SELECT g, u, bit_or(bits) AS bits FROM (${activity}) h GROUP BY g, u HAVING bit_or(bits) <> 0)`;
    const source = eventSource(ask.filter, true);
    const { from, group } = groupOf(ask.groupBy, source.from);
    const g = ask.value === undefined ? group : sql`${ask.value}::text`;
    const bits = sql.join(
      spans.map(
        ({ span, i }) => sql`WHEN ${source.ts} >= ${span[0]} AND ${source.ts} < ${span[1]} THEN ${sql.raw(bit(i!))}`,
      ),
      sql` `,
    );
    const inSpans = sql.join(
      spans.map(({ span }) => sql`(${within(source, span[0], span[1])})`),
      sql` OR `,
    );
    const raw = sql`SELECT ${g} AS g, events.user_id AS u, CASE ${bits} ELSE 0::bigint END AS bits FROM ${from}
      WHERE ${and(source.where, sql`events.user_id IS NOT NULL`, sql`(${inSpans})`)}`;
    return sql`per AS (SELECT g, u, bit_or(bits) AS bits FROM (${activity} UNION ALL ${raw}) h GROUP BY g, u HAVING bit_or(bits) <> 0)`;
  }

  /** Per group: its users seen in each of up to 64 buckets (`first`…), and in any of them. */
  async function chunk(ask: UsersAsk, first: number, count: number, groups: "each" | string[]) {
    const bitOf = (b: number) => (b >= first && b < first + count ? b - first : null);
    const counts = sql.raw(
      `ARRAY[${Array.from({ length: count }, (_, i) => `count(*) FILTER (WHERE bits & ${bit(i)} <> 0)::int`).join(", ")}]`,
    );
    const which = groups === "each" ? sql`` : sql`WHERE g = ANY(${`{${groups.map(quote).join(",")}}`}::text[])`;
    if (groups === "each")
      return rows<{ g: string; total: number; counts: number[] }>(
        sql`WITH ${per(ask, bitOf)} SELECT g, count(*)::int AS total, ${counts} AS counts FROM per GROUP BY g`,
      );
    // The groups past the limit as one: a user in several counts once.
    return rows<{ g: string; total: number; counts: number[] }>(
      sql`WITH ${per(ask, bitOf)} SELECT NULL AS g, count(*)::int AS total, ${counts} AS counts
            FROM (SELECT u, bit_or(bits) AS bits FROM per ${which} GROUP BY u) x`,
    );
  }

  return async function users(ask: UsersAsk): Promise<SeriesLine[]> {
    const { n } = ask;
    const lines = new Map<string, { total: number; counts: number[] }>();
    const add = (found: { g: string; total: number; counts: ArrayLike<number> }[], first: number, totals: boolean) => {
      for (const row of found) {
        let line = lines.get(row.g);
        if (!line) lines.set(row.g, (line = { total: 0, counts: zeros(n) }));
        if (totals) line.total = row.total;
        Array.from(row.counts).forEach((c, i) => (line!.counts[first + i] = c));
      }
    };
    if (n <= BITS) add(await chunk(ask, 0, n, "each"), 0, true);
    else {
      // A user's total is over every bucket: one bit for all of them, then the buckets 64 at a time.
      const any = await rows<{ g: string; total: number }>(
        sql`WITH ${per(ask, () => 0)} SELECT g, count(*)::int AS total FROM per GROUP BY g`,
      );
      for (const row of any) lines.set(row.g, { total: row.total, counts: zeros(n) });
      for (let first = 0; first < n; first += BITS)
        add(await chunk(ask, first, Math.min(BITS, n - first), "each"), first, false);
    }
    const all = [...lines].map(([g, line]) => ({ group: ask.value === undefined ? g : null, ...line }));
    if (!ask.groupBy) return [{ group: null, other: false, ...(all[0] ?? { total: 0, counts: zeros(n) }) }];
    const sorted = all.filter((l) => l.total > 0).sort(byTotal);
    const out: SeriesLine[] = sorted.slice(0, ask.limit).map((l) => ({ ...l, other: false }));
    const rest = sorted.slice(ask.limit).map((l) => l.group as string);
    if (rest.length) {
      const other = { total: 0, counts: zeros(n) };
      for (let first = 0; first < n; first += BITS) {
        const [row] = await chunk(ask, first, Math.min(BITS, n - first), rest);
        Array.from(row?.counts ?? []).forEach((c, i) => (other.counts[first + i] = c));
      }
      const [whole] =
        n <= BITS
          ? await chunk(ask, 0, n, rest)
          : await rows<{ total: number }>(
              sql`WITH ${per(ask, () => 0)} SELECT count(DISTINCT u)::int AS total FROM per WHERE g = ANY(${`{${rest.map(quote).join(",")}}`}::text[])`,
            );
      other.total = whole?.total ?? 0;
      out.push({ group: null, other: true, ...other });
    }
    return out;
  };
}

/** Retention from the activity rows of its two names: each user's periods of each as a bigint's bits, then counted per cohort and period. */
export function cohortCounter(ctx: Ctx) {
  const { db } = ctx;
  return async function cohorts(q: RetentionQuery & { maps: Map<number, MonthMap> }): Promise<RetentionCounts | null> {
    const n = q.bounds.length - 1;
    if (n > BITS) return null;
    const { mask, months } = maskOf(q.maps, (b) => b);
    const periods = (name: string) => sql`SELECT user_id AS u, bit_or(${sql.raw(mask)}) AS bits FROM activity
      WHERE project_id = ${q.filter.projectId} AND kind = 2 AND key = '' AND value = ${name}
        AND month = ANY(${`{${months.join(",")}}`}::int[]) GROUP BY user_id`;
    const cells: string[] = [];
    for (let c = 0; c < q.cohorts; c++) {
      cells.push(`count(*) FILTER (WHERE s.bits & ${bit(c)} <> 0)::int`);
      for (let k = 0; k <= q.periods; k++)
        cells.push(`count(*) FILTER (WHERE s.bits & ${bit(c)} <> 0 AND r.bits & ${bit(c + k)} <> 0)::int`);
    }
    const [row] = [
      ...((await db.execute(sql`
        WITH s AS MATERIALIZED (${periods(q.startEvent)}), r AS MATERIALIZED (${periods(q.returnEvent)})
        SELECT ARRAY[${sql.raw(cells.join(", "))}] AS cells FROM s LEFT JOIN r ON r.u = s.u`)) as unknown as {
        cells: ArrayLike<number>;
      }[]),
    ];
    const all = Array.from(row?.cells ?? []);
    const width = q.periods + 2;
    return Array.from({ length: q.cohorts }, (_, c) => ({
      users: all[c * width] ?? 0,
      returned: Array.from({ length: q.periods + 1 }, (_, k) => all[c * width + 1 + k] ?? 0),
    }));
  };
}

/** A text as an element of an array literal. */
const quote = (text: string) => `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
