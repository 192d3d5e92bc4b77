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
  type Build,
  HOUR,
  MAX_VALUES,
  MONTH_DAYS,
  place,
  type Parts,
  type Summarized,
  SUMMARY_TABLES,
  SummaryDeltas,
  VALUES,
  type Victim,
} from "../summary/deltas.ts";

type Bind = string | number | null;
const D = Array.from({ length: MONTH_DAYS }, (_, i) => `d${i}`);

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

/** What the writer keeps of a project's new events while its summaries are built: its counts, its activity. */
type Kept = { counts: boolean; activity: boolean };
const KEPT_ALL: Kept = { counts: true, activity: true };

const BUILD =
  "project_id AS projectId, through, counted, active_through AS activeThrough, active_user AS activeUser, active_ts AS activeTs, active_id AS activeId, active_done AS activeDone";
const EVENT = "id, project_id AS projectId, channel_id AS channelId, event AS name, ts, user_id AS userId, tags";
type EventRow = Omit<Victim, "tags"> & { tags: string | null };
/** The tags of the last few events read, parsed: a build reads many events with the same tags (read only). */
const parsedTags = new Map<string, Tags>();
const fromRow = (e: EventRow): Victim => {
  if (!e.tags) return { ...e, tags: null };
  let tags = parsedTags.get(e.tags);
  if (!tags) {
    if (parsedTags.size >= 1000) parsedTags.clear();
    parsedTags.set(e.tags, (tags = JSON.parse(e.tags) as Tags));
  }
  return { ...e, tags };
};

export type SummaryKeeper = ReturnType<typeof summaryKeeper>;

/** Near the activity table's key order (project, kind, key, value, month, user): writes in it land beside each other. */
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
function byActivityKey(a: ActivityDelta, b: ActivityDelta): number {
  return (
    a.projectId - b.projectId ||
    a.kind - b.kind ||
    cmp(a.key, b.key) ||
    cmp(a.value, b.value) ||
    a.month - b.month ||
    cmp(a.userId, b.userId)
  );
}

/** Activity bits known to be in the database, at most this many rows' days of them (then forgotten). */
const KNOWN_ROWS = 200_000;

/**
 * `othersWrote`: a number that changes when another process commits (their deletions may clear
 * bits this process remembers as set).
 */
export function summaryKeeper(sqlite: Database, othersWrote: () => number = () => 0) {
  const q = <T = unknown>(sql: string) => sqlite.prepare<T, Bind[]>(sql);
  const s = {
    building: q<Build>(`SELECT ${BUILD} FROM summary_builds WHERE project_id = ?`),
    builds: q<Build>(`SELECT ${BUILD} FROM summary_builds ORDER BY through`),
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
    eventsOfHour: q<EventRow>(
      `SELECT ${EVENT} FROM events WHERE project_id = ? AND ts >= ? AND ts < ? AND user_id IS NOT NULL`,
    ),
    byId: q<EventRow>(`SELECT ${EVENT} FROM events WHERE id > ? ORDER BY id LIMIT ?`),
    // The users' index holds (project, user, time, id): a user's events together, read from where the last step ended.
    byUser: q<EventRow>(
      `SELECT ${EVENT} FROM events INDEXED BY events_user_ts WHERE project_id = ?1 AND user_id IS NOT NULL AND id <= ?2
        AND (user_id, ts, id) > (?3, ?4, ?5) ORDER BY user_id, ts, id LIMIT ?6`,
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
  /** Per transaction: what of a project's summaries the writer keeps as its events come (all but while it is built). */
  let keeping = new Map<number, Kept>();
  let pending: { e: Summarized; parts: Parts }[] = [];
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

  const keeps = (projectId: number): Kept => {
    let kept = keeping.get(projectId);
    if (kept === undefined) {
      const build = s.building.get(projectId);
      kept = !build ? KEPT_ALL : { counts: build.counted === 1, activity: build.through >= 0 };
      keeping.set(projectId, kept);
    }
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

  /** Writes the deltas; `remember`: learn the activity bits written (a build's are too many to be worth it). */
  function apply(d: SummaryDeltas, remember = true): void {
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
    // In the order of the table's key: each write lands beside the last (a build writes many).
    const rows = [...d.activity];
    if (rows.length > 64) rows.sort(byActivityKey);
    for (const a of rows) {
      if (a.kind === ACTIVITY.event && !summarized(wide, a.projectId, VALUES.event, "", a.value)) continue;
      if (a.kind === ACTIVITY.tag && !summarized(wide, a.projectId, VALUES.tag, a.key, a.value)) continue;
      if (remember && !fresh(a)) continue;
      const day = 31 - Math.clz32(a.days);
      // Most rows a batch touches gain hours of one day: a statement that writes that day's column only.
      if (a.days === 1 << day)
        oneDay(day).run(a.projectId, a.kind, a.key, a.value, a.month, a.userId, a.days, a.d[day]!);
      else s.active.run(a.projectId, a.kind, a.key, a.value, a.month, a.userId, a.days, ...a.d);
    }
  }

  /** Whether `a` marks an hour this process does not know to be marked; remembered at commit. */
  function fresh(a: ActivityDelta): boolean {
    const row = `${a.projectId}:${a.kind}:${a.month}:${a.key}:${a.value.length}:${a.value}${a.userId}`;
    let unknown = false;
    for (let days = a.days; days !== 0; days &= days - 1) {
      const k = 31 - Math.clz32(days & -days);
      const key = `${k}:${row}`;
      const hours = a.d[k]!;
      if (((known.get(key) ?? 0) & hours) !== hours) {
        unknown = true;
        learned.push([key, hours]);
      }
    }
    return unknown;
  }

  function flush(): void {
    if (!pending.length) return;
    const deltas = new SummaryDeltas();
    for (const { e, parts } of pending) deltas.add(e, 1, parts);
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
    // Counted: by the build up to `through`, by the writer once the build caught up.
    const counted = build && !build.counted ? victims.filter((v) => v.id <= build.through) : victims;
    const minus = new SummaryDeltas();
    for (const v of counted) minus.add(v, -1, "counts");
    apply(minus);
    const users = victims.filter((v) => v.userId !== null);
    if (!users.length) return;
    if (where.channelId !== undefined) {
      rebuild(projectId);
      return;
    }
    const last = victims.reduce((a, v) => (v.ts > a.ts ? v : a));
    const at = place(last.ts);
    const touched = new SummaryDeltas();
    for (const v of users) touched.add(v, 1, "activity");
    for (const a of touched.activity) clearUpTo(a, at);
    // What that hour's events left put back (activity is ORed: marking a user a build has not reached yet is harmless).
    const hour = at.hour * HOUR;
    const back = new SummaryDeltas();
    for (const e of s.eventsOfHour.all(projectId, hour, hour + HOUR)) back.add(fromRow(e), 1, "activity");
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
        `INSERT INTO summary_builds (project_id, through) VALUES (?, -1)
         ON CONFLICT DO UPDATE SET through = -1, counted = 0, active_through = NULL, active_user = NULL, active_ts = NULL, active_id = NULL, active_done = 0`,
      )
      .run(projectId);
    keeping.set(projectId, { counts: false, activity: false });
    pending = pending.filter(({ e }) => e.projectId !== projectId);
  }

  /**
   * One step of building (see the top of this file): up to `limit` rows of a table of a cleared
   * project deleted, or `limit` events counted, or `limit` events' activity marked. Returns whether
   * there is more to do.
   */
  function buildStep(limit: number): boolean {
    flush();
    const list = s.builds.all();
    if (!list.length) return false;
    keeping = new Map(); // what this step changes holds for the writes after it
    const clearing = list.find((b) => b.through < 0);
    if (clearing) return clear(clearing.projectId, limit);
    const counting = list.filter((b) => !b.counted);
    if (counting.length) return count(counting, limit);
    const marking = list.find((b) => !b.activeDone);
    if (marking) return mark(marking, limit);
    sqlite.exec("DELETE FROM summary_builds WHERE counted = 1 AND active_done = 1");
    return false;
  }

  function clear(projectId: number, limit: number): boolean {
    forgetKnown();
    let left = 0;
    for (const [table, key] of Object.entries(SUMMARY_TABLES)) {
      left += sqlite
        .prepare<never, [number, number]>(
          `DELETE FROM ${table} WHERE (${key}) IN (SELECT ${key} FROM ${table} WHERE project_id = ? LIMIT ?)`,
        )
        .run(projectId, limit).changes;
    }
    if (left === 0)
      sqlite
        .prepare<never, [number]>(
          "UPDATE summary_builds SET through = 0, active_through = (SELECT coalesce(max(id), 0) FROM events) WHERE project_id = ?",
        )
        .run(projectId);
    return true;
  }

  /** The next events by id counted, for every project still counting; caught up, the writer counts from here. */
  function count(counting: Build[], limit: number): boolean {
    const from = Math.min(...counting.map((b) => b.through));
    const through = new Map(counting.map((b) => [b.projectId, b.through]));
    const rows = s.byId.all(from, limit);
    const deltas = new SummaryDeltas();
    for (const e of rows) {
      const done = through.get(e.projectId);
      if (done !== undefined && e.id > done) deltas.add(fromRow(e), 1, "counts");
    }
    apply(deltas);
    const update = sqlite.prepare<never, [number, number]>(
      "UPDATE summary_builds SET through = max(through, ?), counted = ? WHERE through >= 0 AND counted = 0",
    );
    update.run(rows.at(-1)?.id ?? from, rows.length < limit ? 1 : 0);
    return true;
  }

  /** The next events of a project's users (theirs together) marked active, up to where its build began. */
  function mark(build: Build, limit: number): boolean {
    const rows = s.byUser.all(
      build.projectId,
      build.activeThrough ?? 0,
      build.activeUser ?? "",
      build.activeTs ?? -1,
      build.activeId ?? -1,
      limit,
    );
    const deltas = new SummaryDeltas();
    for (const e of rows) deltas.add(fromRow(e), 1, "activity");
    apply(deltas, false);
    const last = rows.at(-1);
    sqlite
      .prepare<never, [string | null, number | null, number | null, number, number]>(
        "UPDATE summary_builds SET active_user = ?, active_ts = ?, active_id = ?, active_done = ? WHERE project_id = ?",
      )
      .run(
        last?.userId ?? build.activeUser,
        last?.ts ?? build.activeTs,
        last?.id ?? build.activeId,
        rows.length < limit ? 1 : 0,
        build.projectId,
      );
    return true;
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
      const kept = keeps(e.projectId);
      if (kept.counts || kept.activity)
        pending.push({ e, parts: kept.counts ? (kept.activity ? "all" : "counts") : "activity" });
    },
    removed,
    buildStep,
    rebuild,
    forget,
  };
}
