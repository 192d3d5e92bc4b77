// The summaries' reads on SQLite (store/summary/series.ts asks them): ranges of the hourly counts and
// of the monthly activity rows, each a range of a table's key; and the few events of the parts of
// an hour at a bucket's ends, through the same source as the raw series.
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import type { GroupBy } from "../../model/analytics.ts";
import type { EventFilter } from "../../model/filter.ts";
import { MAX_VALUES } from "../summary/deltas.ts";
import type { ActivityRow, Group, SummaryReads } from "../summary/reads.ts";
import type { Db } from "./db.ts";
import { eventSource, groupColumn } from "./event-source.ts";

const dialect = new SQLiteSyncDialect();
type Bind = string | number | null;
/** Activity rows handed over at a time. */
const PAGE = 50_000;

export function summaryReads(db: Db, searching: () => Db): SummaryReads {
  const client = db.$client;
  const building = client.prepare<{ n: number }, [number]>(
    "SELECT count(*) AS n FROM summary_builds WHERE project_id = ?",
  );
  const keyCount = client.prepare<{ n: number }, [number, number, string]>(
    "SELECT n FROM summary_keys WHERE project_id = ? AND kind = ? AND key = ?",
  );
  const valuesOf = client.prepare<never, [number, number, string]>(
    "SELECT value FROM summary_values WHERE project_id = ? AND kind = ? AND key = ?",
  );
  const channelByName = client.prepare<{ id: number }, [number, string]>(
    "SELECT id FROM channels WHERE project_id = ? AND name = ?",
  );
  const channelNames = (projectId: number) =>
    new Map(
      client.prepare("SELECT id, name FROM channels WHERE project_id = ?").values(projectId) as [number, string][],
    );

  return {
    async ready(projectId) {
      return building.get(projectId)!.n === 0;
    },

    async wide(projectId, kind, key) {
      return (keyCount.get(projectId, kind, key)?.n ?? 0) > MAX_VALUES;
    },

    async channelId(projectId, name) {
      return channelByName.get(projectId, name)?.id ?? null;
    },

    async counts(q, spans) {
      const where = ["project_id = ?", "hour >= ?", "hour < ?"];
      const params: Bind[] = [q.projectId];
      if (q.channelId !== undefined) where.push("channel_id = ?");
      if (q.name !== undefined) where.push("event = ?");
      const group = q.by === "channel" ? "channel_id" : q.by === "event" ? "event" : "NULL";
      const statement = client.prepare<[number | string | null, number], Bind[]>(
        `SELECT ${group}, sum(n) FROM event_counts WHERE ${where.join(" AND ")} GROUP BY 1`,
      );
      const extra = [q.channelId, q.name].filter((v) => v !== undefined) as Bind[];
      const names = q.by === "channel" ? channelNames(q.projectId) : null;
      return spans.map(([lo, hi]) => summed(statement.values(...params, lo, hi, ...extra), names));
    },

    async tagCounts(q, spans) {
      const statement = client.prepare<never, Bind[]>(
        `SELECT value, sum(n) FROM tag_counts WHERE project_id = ? AND key = ? ${q.value === undefined ? "" : "AND value = ?"} AND hour >= ? AND hour < ? GROUP BY value`,
      );
      const keyed: Bind[] = q.value === undefined ? [q.projectId, q.key] : [q.projectId, q.key, q.value];
      return spans.map(([lo, hi]) => new Map(statement.values(...keyed, lo, hi) as [string, number][]));
    },

    async activity(q, each) {
      const columns = ["value", "month", "user_id", "days", ...q.columns.map((k) => `d${k}`)].join(", ");
      // A range of the key (kind, key, value, month, user) a page at a time, for each value and month.
      const page = client.prepare<never, Bind[]>(
        `SELECT ${columns} FROM activity WHERE project_id = ? AND kind = ? AND key = ? AND value = ? AND month = ? AND user_id > ?
          ORDER BY user_id LIMIT ${PAGE}`,
      );
      const values =
        q.value !== undefined
          ? [q.value]
          : (valuesOf.values(q.projectId, q.kind, q.key) as [string][])
              .map(([v]) => v)
              .filter((v) => !q.only || q.only.has(v));
      for (const value of values) {
        for (let month = q.months[0]; month <= q.months[1]; month++) {
          let after = "";
          for (;;) {
            const rows = page.values(q.projectId, q.kind, q.key, value, month, after) as ActivityRow[];
            if (rows.length) each(rows);
            if (rows.length < PAGE) break;
            after = rows.at(-1)![2];
          }
        }
      }
    },

    async rawCounts(filter, by, spans) {
      if (!spans.length) return [];
      const { statement, names } = rawStatement(filter, by, "count(*)", "GROUP BY 1");
      return spans.map(([lo, hi]) => summed(statement.values(lo, hi), names));
    },

    async rawUsers(filter, by, spans) {
      if (!spans.length) return [];
      const { statement, names } = rawStatement(filter, by, "events.user_id", "", "AND events.user_id IS NOT NULL");
      const out: [number, Group, string][] = [];
      spans.forEach(([lo, hi], i) => {
        for (const [g, user] of statement.values(lo, hi) as [number | string | null, string][])
          out.push([i, names ? (names.get(g as number) ?? null) : (g as Group), user]);
      });
      return out;
    },
  };

  /** A statement over the events of `filter` between two times (its last two parameters), selecting the group and `what`. */
  function rawStatement(filter: EventFilter, by: GroupBy | null, what: string, tail: string, also = "") {
    const source = eventSource(db, searching, filter, true);
    const where = dialect.sqlToQuery(source.where);
    const statement = source.db.$client.prepare<never, Bind[]>(
      `SELECT ${groupColumn(by)}, ${what} FROM ${source.from} WHERE ${where.sql} ${also} AND ${source.ts} >= ? AND ${source.ts} < ? ${tail}`,
    );
    const bound = where.params as Bind[];
    const names = by?.by === "channel" ? channelNames(filter.projectId!) : null;
    return {
      statement: { values: (lo: number, hi: number) => statement.values(...bound, lo, hi) },
      names,
    };
  }
}

/** Sums per group from rows of (group, n); `names`: a channel's name for its id, when the groups are channels. */
function summed(rows: unknown[][], names: Map<number, string> | null): Map<Group, number> {
  const found = new Map<Group, number>();
  for (const [g, n] of rows as [number | string | null, number][]) {
    const group = names ? (names.get(g as number) ?? null) : (g as Group);
    found.set(group, (found.get(group) ?? 0) + n);
  }
  return found;
}
