// Keeping the summaries on PostgreSQL (store/summary/deltas.ts). Inserted events are added by the
// trigger on events (drizzle/pg/0008_summaries.sql), whoever inserts them; here, what the writes
// of this store do beside: deleted events taken out, and the summaries of projects that had events
// before them built from their events, a step at a time (each in a batch that holds the
// cluster-wide order: no event is written meanwhile), as store/sqlite/summaries.ts does on SQLite
// and explains.
import { sql } from "drizzle-orm";
import { type Build, MAX_VALUES, place, SUMMARY_TABLES, SummaryDeltas, type Victim } from "../summary/deltas.ts";
import { type PgDb, rowsOn } from "./db.ts";

/**
 * Deleted events taken out: counted ones at once; their users' activity by what is left. When the
 * oldest events of a project go (retention, a project emptied), every event before the last one
 * deleted is gone: each row of theirs loses its hours up to that event's, and that hour's events
 * left put theirs back. A project whose users are in a deleted channel has its summaries built again.
 */
export async function removeSummaries(
  db: PgDb,
  victims: Victim[],
  where: { projectId: number; channelId?: number },
): Promise<void> {
  if (!victims.length) return;
  const projectId = where.projectId;
  const rows = rowsOn(db);
  const [build] = await rows<{ through: number; counted: number }>(
    sql`SELECT through::float8 AS through, counted FROM summary_builds WHERE project_id = ${projectId}`,
  );
  if (build && build.through < 0) return;
  // Counted: by the build up to `through`, by the trigger once the build caught up.
  const counted = build && !build.counted ? victims.filter((v) => v.id <= build.through) : victims;
  const minus = new SummaryDeltas();
  for (const v of counted) minus.add(v, -1, "counts");
  const counts = [...minus.counts.values()].map((c) => ({
    hour: c.hour,
    channel_id: c.channelId,
    event: c.name,
    n: -c.n,
  }));
  const tags = [...minus.tags.values()].map((t) => ({ key: t.key, value: t.value, hour: t.hour, n: -t.n }));
  // A name counted before the project's names became too many keeps its row: taken out there first.
  await db.execute(sql`
    WITH d AS (SELECT * FROM jsonb_to_recordset(${JSON.stringify(counts)}::text::jsonb) AS d(hour int, channel_id int, event text, n int)),
    named AS (
      UPDATE event_counts c SET n = c.n - d.n FROM d
       WHERE c.project_id = ${projectId} AND c.hour = d.hour AND c.channel_id = d.channel_id AND c.event = d.event
      RETURNING d.hour, d.channel_id, d.event)
    UPDATE event_counts c SET n = c.n - r.n
      FROM (SELECT hour, channel_id, sum(n)::int AS n FROM d
             WHERE NOT EXISTS (SELECT 1 FROM named WHERE named.hour = d.hour AND named.channel_id = d.channel_id AND named.event = d.event)
             GROUP BY 1, 2) r
     WHERE c.project_id = ${projectId} AND c.hour = r.hour AND c.channel_id = r.channel_id AND c.event = ''`);
  if (tags.length)
    await db.execute(sql`
      UPDATE tag_counts c SET n = c.n - d.n
        FROM jsonb_to_recordset(${JSON.stringify(tags)}::text::jsonb) AS d(key text, value text, hour int, n int)
       WHERE c.project_id = ${projectId} AND c.key = d.key AND c.value = d.value AND c.hour = d.hour
         AND NOT EXISTS (SELECT 1 FROM summary_keys k WHERE k.project_id = ${projectId} AND k.kind = 1 AND k.key = d.key AND k.n > ${MAX_VALUES})`);
  const hours = [...new Set(counted.map((v) => place(v.ts).hour))];
  for (const table of hours.length ? ["event_counts", "tag_counts"] : [])
    await db.execute(
      sql`DELETE FROM ${sql.raw(table)} WHERE project_id = ${projectId} AND hour = ANY(${`{${hours.join(",")}}`}::int[]) AND n = 0`,
    );
  const users = victims.filter((v) => v.userId !== null);
  if (!users.length) return;
  if (where.channelId !== undefined) {
    await rebuildSummaries(db, projectId);
    return;
  }
  const last = victims.reduce((a, v) => (v.ts > a.ts ? v : a));
  const at = place(last.ts);
  const touched = new SummaryDeltas();
  for (const v of users) touched.add(v, 1, "activity");
  const keyOf = (a: { kind: number; key: string; value: string; userId: string }) => ({
    kind: a.kind,
    key: a.key,
    value: a.value,
    user_id: a.userId,
  });
  const all = touched.activity;
  const earlier = all.filter((a) => a.month < at.month).map((a) => ({ ...keyOf(a), month: a.month }));
  const current = all.filter((a) => a.month === at.month).map(keyOf);
  if (earlier.length)
    await db.execute(sql`
      DELETE FROM activity a USING jsonb_to_recordset(${JSON.stringify(earlier)}::text::jsonb) AS r(kind int, key text, value text, user_id text, month int)
       WHERE a.project_id = ${projectId} AND a.kind = r.kind AND a.key = r.key AND a.value = r.value AND a.month = r.month AND a.user_id = r.user_id`);
  if (current.length) {
    const day = `d${at.day}`;
    const before = Array.from({ length: at.day }, (_, i) => `d${i} = 0`);
    const hoursLeft = ~((1 << (at.hourOfDay + 1)) - 1) & 0xffffff;
    const daysLeft = ~((1 << (at.day + 1)) - 1);
    const set = [...before, `${day} = a.${day} & ${hoursLeft}`].join(", ");
    const rowsOf = sql`jsonb_to_recordset(${JSON.stringify(current)}::text::jsonb) AS r(kind int, key text, value text, user_id text)`;
    const match = sql`a.project_id = ${projectId} AND a.month = ${at.month} AND a.kind = r.kind AND a.key = r.key AND a.value = r.value AND a.user_id = r.user_id`;
    await db.execute(sql`
      UPDATE activity a SET ${sql.raw(set)}, days = (a.days & ${daysLeft}) | CASE WHEN a.${sql.raw(day)} & ${hoursLeft} <> 0 THEN ${1 << at.day} ELSE 0 END
        FROM ${rowsOf} WHERE ${match}`);
    await db.execute(sql`DELETE FROM activity a USING ${rowsOf} WHERE ${match} AND a.days = 0`);
  }
  // The hour of the last one deleted: what its events left put back (activity is ORed: marking a
  // user a build has not reached yet is harmless).
  const hour = at.hour * 3_600_000;
  await db.execute(
    sql`SELECT summarize(${`(SELECT * FROM events WHERE project_id = ${projectId} AND ts >= ${hour} AND ts < ${hour + 3_600_000})`}, 'activity')`,
  );
}

/** The project's summaries to be made again from its events: cleared first (a step at a time), then built. */
export async function rebuildSummaries(db: PgDb, projectId: number): Promise<void> {
  await db.execute(
    sql`INSERT INTO summary_builds (project_id, through) VALUES (${projectId}, -1) ON CONFLICT (project_id)
        DO UPDATE SET through = -1, counted = 0, active_through = NULL, active_user = NULL, active_ts = NULL, active_id = NULL, active_done = 0`,
  );
}

/**
 * One step of building (store/sqlite/summaries.ts says how): up to `limit` rows of a table of a
 * cleared project deleted, or `limit` events counted, or `limit` events' activity marked. Returns
 * whether there is more to do.
 */
export async function buildSummaries(db: PgDb, limit: number): Promise<boolean> {
  const rows = rowsOn(db);
  const list = await rows<Build>(
    sql`SELECT project_id AS "projectId", through::float8 AS through, counted, active_through::float8 AS "activeThrough",
               active_user AS "activeUser", active_ts::float8 AS "activeTs", active_id::float8 AS "activeId", active_done AS "activeDone"
          FROM summary_builds ORDER BY through`,
  );
  if (!list.length) return false;
  const clearing = list.find((b) => b.through < 0);
  if (clearing) {
    let left = 0;
    for (const table of Object.keys(SUMMARY_TABLES)) {
      const deleted = await rows<{ n: number }>(
        sql`WITH d AS (DELETE FROM ${sql.raw(table)} WHERE ctid IN (SELECT ctid FROM ${sql.raw(table)} WHERE project_id = ${clearing.projectId} LIMIT ${limit}) RETURNING 1) SELECT count(*)::int AS n FROM d`,
      );
      left += deleted[0]?.n ?? 0;
    }
    if (left === 0)
      await db.execute(
        sql`UPDATE summary_builds SET through = 0, active_through = (SELECT coalesce(max(id), 0) FROM events) WHERE project_id = ${clearing.projectId}`,
      );
    return true;
  }
  const counting = list.filter((b) => !b.counted);
  if (counting.length) {
    // The next events by id counted, for every project still counting; caught up, the trigger counts from here.
    const from = Math.min(...counting.map((b) => b.through));
    const [range] = await rows<{ to: number | null; n: number }>(
      sql`SELECT max(id)::float8 AS "to", count(*)::int AS n FROM (SELECT id FROM events WHERE id > ${from} ORDER BY id LIMIT ${limit}) x`,
    );
    const to = range?.to ?? from;
    if (range?.to != null)
      await db.execute(
        sql`SELECT summarize(${`(SELECT e.* FROM events e JOIN summary_builds b ON b.project_id = e.project_id AND b.through >= 0 AND b.counted = 0 AND e.id > b.through WHERE e.id > ${from} AND e.id <= ${to})`}, 'counts')`,
      );
    await db.execute(
      sql`UPDATE summary_builds SET through = greatest(through, ${to}), counted = ${(range?.n ?? 0) < limit ? 1 : 0} WHERE through >= 0 AND counted = 0`,
    );
    return true;
  }
  const marking = list.find((b) => !b.activeDone);
  if (marking) {
    // The next events of the project's users (theirs together, from the users' index) marked active, up to where its build began.
    const after = sql`project_id = ${marking.projectId} AND user_id IS NOT NULL AND id <= ${marking.activeThrough ?? 0}
      AND (user_id, ts, id) > (${marking.activeUser ?? ""}, ${marking.activeTs ?? -1}, ${marking.activeId ?? -1})`;
    const [last] = await rows<{ u: string; ts: number; id: number; n: number }>(
      sql`SELECT u, ts::float8 AS ts, id::float8 AS id, n FROM (
            SELECT user_id AS u, ts, id, row_number() OVER () AS n FROM (
              SELECT user_id, ts, id FROM events WHERE ${after} ORDER BY user_id, ts, id LIMIT ${limit}) x) y
          ORDER BY n DESC LIMIT 1`,
    );
    if (last) {
      const source = await rows<{ q: string }>(
        sql`SELECT format('(SELECT * FROM events WHERE project_id = %s AND user_id IS NOT NULL AND id <= %s AND (user_id, ts, id) > (%L, %s, %s) AND (user_id, ts, id) <= (%L, %s, %s))',
              ${marking.projectId}::int, ${marking.activeThrough ?? 0}::bigint, ${marking.activeUser ?? ""}::text, ${marking.activeTs ?? -1}::bigint, ${marking.activeId ?? -1}::bigint,
              ${last.u}::text, ${last.ts}::bigint, ${last.id}::bigint) AS q`,
      );
      await db.execute(sql`SELECT summarize(${source[0]!.q}, 'activity')`);
    }
    await db.execute(
      sql`UPDATE summary_builds SET active_user = ${last?.u ?? marking.activeUser}, active_ts = ${last?.ts ?? marking.activeTs},
            active_id = ${last?.id ?? marking.activeId}, active_done = ${(last?.n ?? 0) < limit ? 1 : 0} WHERE project_id = ${marking.projectId}`,
    );
    return true;
  }
  await db.execute(sql`DELETE FROM summary_builds WHERE counted = 1 AND active_done = 1`);
  return false;
}
