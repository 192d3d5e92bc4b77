// Keeping the summaries on SQLite (store/summary/deltas.ts), in the writer's transactions: the
// events a group commit inserts are noted as they go in and summed when it commits (a row touched
// by many events is written once); deletions take theirs out at once; and the summaries of
// projects that had events before they existed (or lost a channel of users) are built in the
// background from their events, a batch at a time, while questions about them read the events.
import type { Database, Statement } from "bun:sqlite";
import type { Tags } from "../../model/event.ts";
import {
  ACTIVITY,
  type ActivityDelta,
  HOUR,
  MAX_VALUES,
  MONTH_DAYS,
  place,
  type Summarized,
  SummaryDeltas,
  VALUES,
} from "../summary/deltas.ts";

type Bind = string | number | null;
const D = Array.from({ length: MONTH_DAYS }, (_, i) => `d${i}`);
/** The summaries' tables, with their keys. */
const SUMMARY_TABLES: Record<string, string> = {
  event_counts: "project_id, hour, channel_id, event",
  tag_counts: "project_id, key, value, hour",
  activity: "project_id, kind, key, value, month, user_id",
  summary_keys: "project_id, kind, key",
  summary_values: "project_id, kind, key, value",
};

/** What the writer calls around a group commit (store/sqlite/writer.ts). */
export type TxHooks = {
  begin(): void;
  /** A position to go back to when one write of the batch is undone. */
  mark(): number;
  undo(mark: number): void;
  beforeCommit(): void;
  /** The transaction committed (not called when it failed). */
  committed(): void;
};

/** An event being deleted, as its summaries need it. */
export type Victim = Summarized & { id: number };

export type SummaryKeeper = ReturnType<typeof summaryKeeper>;

/** Activity bits known to be in the database, at most this many rows' days of them (then forgotten). */
const KNOWN_ROWS = 200_000;

/**
 * `othersWrote`: a number that changes when another process commits (their deletions may clear
 * bits this process remembers as set).
 */
export function summaryKeeper(sqlite: Database, othersWrote: () => number = () => 0) {
  const q = <T = unknown>(sql: string) => sqlite.prepare<T, Bind[]>(sql);
  const s = {
    building: q<{ through: number }>("SELECT through FROM summary_builds WHERE project_id = ?"),
    keyCount: q<{ n: number }>("SELECT n FROM summary_keys WHERE project_id = ? AND kind = ? AND key = ?"),
    addValue: q("INSERT OR IGNORE INTO summary_values (project_id, kind, key, value) VALUES (?, ?, ?, ?)"),
    bumpKey: q<{ n: number }>(
      "INSERT INTO summary_keys (project_id, kind, key, n) VALUES (?, ?, ?, 1) ON CONFLICT DO UPDATE SET n = n + 1 RETURNING n",
    ),
    count: q(
      "INSERT INTO event_counts (project_id, hour, channel_id, event, n) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET n = n + excluded.n",
    ),
    tag: q(
      "INSERT INTO tag_counts (project_id, key, value, hour, n) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET n = n + excluded.n",
    ),
    // A name counted before the project's names became too many keeps its row: taken out there first.
    uncount: q("UPDATE event_counts SET n = n + ? WHERE project_id = ? AND hour = ? AND channel_id = ? AND event = ?"),
    dropCounts: q("DELETE FROM event_counts WHERE project_id = ? AND hour = ? AND n = 0"),
    dropTags: q("DELETE FROM tag_counts WHERE project_id = ? AND hour = ? AND n = 0"),
    active: q(
      `INSERT INTO activity (project_id, kind, key, value, month, user_id, days, ${D.join(", ")}) VALUES (${Array(38).fill("?").join(", ")})
       ON CONFLICT DO UPDATE SET days = days | excluded.days, ${D.map((d) => `${d} = ${d} | excluded.${d}`).join(", ")}`,
    ),
    dropActivity: q(
      "DELETE FROM activity WHERE project_id = ? AND kind = ? AND key = ? AND value = ? AND month = ? AND user_id = ?",
    ),
    dropIdle: q(
      "DELETE FROM activity WHERE project_id = ? AND kind = ? AND key = ? AND value = ? AND month = ? AND user_id = ? AND days = 0",
    ),
    eventsOfHour: q<Victim & { tags: string | null }>(
      "SELECT id, project_id AS projectId, channel_id AS channelId, event AS name, ts, user_id AS userId, tags FROM events WHERE project_id = ? AND ts >= ? AND ts < ? AND user_id IS NOT NULL AND id <= ?",
    ),
  };
  const oneDayStatements = new Map<number, Statement>();
  const oneDay = (day: number): Statement => {
    let statement = oneDayStatements.get(day);
    if (!statement) {
      statement = q(
        `INSERT INTO activity (project_id, kind, key, value, month, user_id, days, d${day}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT DO UPDATE SET days = days | excluded.days, d${day} = d${day} | excluded.d${day}`,
      );
      oneDayStatements.set(day, statement);
    }
    return statement;
  };
  /** Per transaction: whether a project's summaries are kept as its events come (not while built). */
  let keeping = new Map<number, boolean>();
  let pending: Summarized[] = [];
  /**
   * The hours of a day (by activity row and day) this process knows the database holds: most events
   * of a user fall in an hour already marked, and then write nothing. Learned at commit; forgotten
   * when anything may have cleared bits (a deletion, a rebuild, another process's commit).
   */
  let known = new Map<string, number>();
  let learned: [string, number][] = [];
  let othersSeen: number | null = null;
  /** Statements clearing the hours of a month up to a day and hour, by day: made when first needed. */
  const clearers = new Map<number, Statement>();

  const keeps = (projectId: number): boolean => {
    let kept = keeping.get(projectId);
    if (kept === undefined) keeping.set(projectId, (kept = s.building.get(projectId) === null));
    return kept;
  };

  /** Whether the values of (kind, key) are too many to be summarized; per batch, `wide` remembers the answers. */
  function isWide(wide: Map<string, boolean>, projectId: number, kind: number, key: string): boolean {
    const k = `${projectId}:${kind}:${key}`;
    let w = wide.get(k);
    if (w === undefined) wide.set(k, (w = (s.keyCount.get(projectId, kind, key)?.n ?? 0) > MAX_VALUES));
    return w;
  }

  /** Whether values of (kind, key) are summarized; registers `value` among them (once a batch: `wide` remembers). */
  function summarized(
    wide: Map<string, boolean>,
    projectId: number,
    kind: number,
    key: string,
    value: string,
  ): boolean {
    const k = `${projectId}:${kind}:${key}`;
    const v = `${k}:${value}`;
    if (isWide(wide, projectId, kind, key)) return false;
    if (wide.has(v)) return true;
    if (s.addValue.run(projectId, kind, key, value).changes && s.bumpKey.get(projectId, kind, key)!.n > MAX_VALUES) {
      wide.set(k, true);
      return false;
    }
    wide.set(v, false);
    return true;
  }

  function apply(d: SummaryDeltas): void {
    const wide = new Map<string, boolean>();
    const hours = new Set<string>();
    for (const c of d.counts.values()) {
      if (c.n < 0) {
        hours.add(`${c.projectId}:${c.hour}`);
        if (s.uncount.run(c.n, c.projectId, c.hour, c.channelId, c.name).changes) continue;
        s.uncount.run(c.n, c.projectId, c.hour, c.channelId, "");
        continue;
      }
      const name = summarized(wide, c.projectId, VALUES.event, "", c.name) ? c.name : "";
      s.count.run(c.projectId, c.hour, c.channelId, name, c.n);
    }
    for (const t of d.tags.values()) {
      // A key too wide now was too wide when the value came (it only grows): it never counted it.
      if (
        t.n < 0
          ? isWide(wide, t.projectId, VALUES.tag, t.key)
          : !summarized(wide, t.projectId, VALUES.tag, t.key, t.value)
      )
        continue;
      s.tag.run(t.projectId, t.key, t.value, t.hour, t.n);
      if (t.n < 0) hours.add(`${t.projectId}:${t.hour}`);
    }
    for (const key of hours) {
      const [projectId, hour] = key.split(":").map(Number) as [number, number];
      s.dropCounts.run(projectId, hour);
      s.dropTags.run(projectId, hour);
    }
    for (const a of d.activity.values()) {
      if (a.kind === ACTIVITY.event && !summarized(wide, a.projectId, VALUES.event, "", a.value)) continue;
      if (a.kind === ACTIVITY.tag && !summarized(wide, a.projectId, VALUES.tag, a.key, a.value)) continue;
      const day = 31 - Math.clz32(a.days);
      // Most rows a batch touches gain hours of one day: a statement that writes that day's column only.
      if (a.days === 1 << day)
        oneDay(day).run(a.projectId, a.kind, a.key, a.value, a.month, a.userId, a.days, a.d[day]!);
      else s.active.run(a.projectId, a.kind, a.key, a.value, a.month, a.userId, a.days, ...a.d);
    }
  }

  function flush(): void {
    if (!pending.length) return;
    const deltas = new SummaryDeltas();
    for (const e of pending) deltas.add(e);
    pending = [];
    apply(deltas);
  }

  /**
   * Deleted events taken out: counted ones at once; their users' activity by what is left. When the
   * oldest events of a project go (retention, a project emptied), every event before the last one
   * deleted is gone: each row of theirs loses its hours up to that event's, and that hour's events
   * left put theirs back. A channel's events are not the oldest: a project whose users are in them
   * has its summaries built again.
   */
  function removed(victims: Victim[], where: { projectId: number; channelId?: number }): void {
    if (!victims.length) return;
    flush();
    forgetKnown();
    const projectId = where.projectId;
    const build = s.building.get(projectId);
    if (build && build.through < 0) return; // cleared, to be built from scratch
    const through = build ? build.through : Number.MAX_SAFE_INTEGER;
    const counted = victims.filter((v) => v.id <= through);
    if (!counted.length) return;
    const minus = new SummaryDeltas();
    for (const v of counted) minus.add(v, -1);
    apply(minus);
    const users = counted.filter((v) => v.userId !== null);
    if (!users.length) return;
    if (where.channelId !== undefined) {
      rebuild(projectId);
      return;
    }
    const last = counted.reduce((a, v) => (v.ts > a.ts ? v : a));
    const at = place(last.ts);
    const touched = new SummaryDeltas();
    for (const v of users) touched.add(v);
    for (const a of touched.activity.values()) clearUpTo(a, at);
    const hour = at.hour * HOUR;
    const back = new SummaryDeltas();
    for (const e of s.eventsOfHour.all(projectId, hour, hour + HOUR, through))
      back.add({ ...e, tags: e.tags ? (JSON.parse(e.tags as unknown as string) as Tags) : null });
    // Their activity only: their counts are there already.
    back.counts.clear();
    back.tags.clear();
    apply(back);
  }

  /** The row of `a` without its hours up to and including `at`'s (gone with the events before). */
  function clearUpTo(a: ActivityDelta, at: { month: number; day: number; hourOfDay: number }): void {
    const key = [a.projectId, a.kind, a.key, a.value, a.month, a.userId] as const;
    if (a.month < at.month) {
      s.dropActivity.run(...key);
      return;
    }
    let clear = clearers.get(at.day);
    if (!clear) {
      const day = `d${at.day}`;
      const before = D.slice(0, at.day).map((d) => `${d} = 0`);
      clear = q(
        `UPDATE activity SET ${[...before, `${day} = ${day} & ?1`].join(", ")}, days = (days & ?2) | (CASE WHEN ${day} & ?1 <> 0 THEN ?3 ELSE 0 END)
          WHERE project_id = ?4 AND kind = ?5 AND key = ?6 AND value = ?7 AND month = ?8 AND user_id = ?9`,
      );
      clearers.set(at.day, clear);
    }
    const hoursLeft = ~((1 << (at.hourOfDay + 1)) - 1) & 0xffffff;
    const daysLeft = ~((1 << (at.day + 1)) - 1);
    clear.run(hoursLeft, daysLeft, 1 << at.day, ...key);
    s.dropIdle.run(...key);
  }

  function forgetKnown(): void {
    known = new Map();
    learned = [];
  }

  /** The project's summaries to be made again from its events: cleared first (a batch at a time), then built. */
  function rebuild(projectId: number): void {
    forgetKnown();
    sqlite
      .prepare<never, [number]>(
        "INSERT INTO summary_builds (project_id, through) VALUES (?, -1) ON CONFLICT DO UPDATE SET through = -1",
      )
      .run(projectId);
    keeping.set(projectId, false);
    pending = pending.filter((e) => e.projectId !== projectId);
  }

  /**
   * One step of building: the rows of a cleared project deleted (up to `limit` of a table), or the
   * next `limit` events (by id) of the projects being built added. A project whose events are all
   * in is kept from then on, in the same transaction (its next event is summed as it commits).
   * Returns whether there is more to do.
   */
  function buildStep(limit: number): boolean {
    flush();
    const builds = sqlite.query<{ projectId: number; through: number }, []>(
      "SELECT project_id AS projectId, through FROM summary_builds ORDER BY through",
    );
    const list = builds.all();
    if (!list.length) return false;
    const clearing = list.find((b) => b.through < 0);
    if (clearing) {
      let left = 0;
      for (const [table, key] of Object.entries(SUMMARY_TABLES)) {
        left += sqlite
          .prepare<never, [number, number]>(
            `DELETE FROM ${table} WHERE (${key}) IN (SELECT ${key} FROM ${table} WHERE project_id = ? LIMIT ?)`,
          )
          .run(clearing.projectId, limit).changes;
      }
      if (left === 0)
        sqlite
          .prepare<never, [number]>("UPDATE summary_builds SET through = 0 WHERE project_id = ?")
          .run(clearing.projectId);
      return true;
    }
    const from = list[0]!.through;
    const through = new Map(list.map((b) => [b.projectId, b.through]));
    const rows = sqlite
      .prepare<Victim & { tags: string | null }, [number, number]>(
        "SELECT id, project_id AS projectId, channel_id AS channelId, event AS name, ts, user_id AS userId, tags FROM events WHERE id > ? ORDER BY id LIMIT ?",
      )
      .all(from, limit);
    const deltas = new SummaryDeltas();
    for (const e of rows) {
      const done = through.get(e.projectId);
      if (done === undefined || e.id <= done) continue;
      deltas.add({ ...e, tags: e.tags ? (JSON.parse(e.tags as unknown as string) as Tags) : null });
    }
    apply(deltas);
    if (rows.length === limit) {
      sqlite
        .prepare<never, [number]>("UPDATE summary_builds SET through = max(through, ?) WHERE through >= 0")
        .run(rows.at(-1)!.id);
      return true;
    }
    sqlite.exec("DELETE FROM summary_builds WHERE through >= 0");
    keeping = new Map();
    return false;
  }

  /** A deleted project's summaries go with it. */
  function forget(projectId: number): void {
    for (const table of [...Object.keys(SUMMARY_TABLES), "summary_builds"])
      sqlite.prepare<never, [number]>(`DELETE FROM ${table} WHERE project_id = ?`).run(projectId);
    keeping.delete(projectId);
  }

  const hooks: TxHooks = {
    begin() {
      keeping = new Map();
      pending = [];
      learned = [];
      const others = othersWrote();
      if (others !== othersSeen) {
        othersSeen = others;
        known = new Map();
      }
    },
    committed() {
      if (known.size + learned.length > KNOWN_ROWS) known = new Map();
      for (const [key, hours] of learned) known.set(key, (known.get(key) ?? 0) | hours);
      learned = [];
    },
    mark: () => pending.length,
    undo(mark) {
      pending.length = mark;
    },
    beforeCommit: flush,
  };

  return {
    hooks,
    /** An event inserted in this transaction, summed at its commit if its project's summaries are kept. */
    note(e: Summarized): void {
      if (keeps(e.projectId)) pending.push(e);
    },
    removed,
    buildStep,
    rebuild,
    forget,
  };
}
