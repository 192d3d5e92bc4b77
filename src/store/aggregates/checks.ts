// Checks and the project's ping key: what each check expects and what its pings made of it. A ping
// reads its check locked (PostgreSQL's FOR UPDATE) in the transaction that writes its event, so two
// pings of one check, on two instances, take turns; the silence round changes a check only if it is
// still where the round saw it.
import { and, asc, count, desc, eq, isNotNull, isNull, lte, type SQL, sql } from "drizzle-orm";
import type { Check, CheckChanges, CheckKey, CheckMark, CheckRun } from "../../model/check.ts";
import type { CheckRepository } from "../store.ts";
import { hasNul, type Sql } from "./sql.ts";

/** A row of checks, as the query builder gives it. */
export type CheckRow = Sql["t"]["checks"]["$inferSelect"];
type RowChanges = Partial<CheckRow>;

/** The check a row holds. */
export function checkRow(r: CheckRow): Check {
  return {
    id: r.id,
    projectId: r.projectId,
    name: r.name,
    slug: r.slug,
    uuid: r.uuid,
    pushToken: r.pushToken,
    channel: r.channel,
    schedule:
      r.cron !== null ? { kind: "cron", expr: r.cron, tz: r.tz ?? "UTC" } : { kind: "period", seconds: r.period ?? 0 },
    grace: r.grace,
    paused: r.paused,
    state: r.state,
    since: r.since,
    lastPing: r.lastPing,
    lastStart: r.lastStart,
    lastStartRid: r.lastStartRid,
    runs: JSON.parse(r.runs) as Record<string, number>,
    nextDue: r.nextDue,
    lastDurationMs: r.lastDuration,
    notifyAfter: r.notifyAfter,
    streak: r.streak,
    notified: r.notified,
    counted: r.counted,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

/** The fields kept in a column of their own name. */
const SAME = [
  "name",
  "slug",
  "uuid",
  "pushToken",
  "channel",
  "grace",
  "paused",
  "state",
  "since",
  "lastPing",
  "lastStart",
  "lastStartRid",
  "nextDue",
  "notifyAfter",
  "streak",
  "notified",
  "counted",
] as const satisfies (keyof CheckChanges & keyof CheckRow)[];

/** The columns a change writes: only those it names. */
export function checkUpdate(c: CheckChanges): RowChanges {
  const row: RowChanges = {};
  for (const key of SAME) if (c[key] !== undefined) (row as Record<string, unknown>)[key] = c[key];
  const { schedule, runs, lastDurationMs } = c;
  if (schedule)
    Object.assign(
      row,
      schedule.kind === "cron"
        ? { period: null, cron: schedule.expr, tz: schedule.tz }
        : { period: schedule.seconds, cron: null, tz: null },
    );
  if (runs !== undefined) row.runs = JSON.stringify(runs);
  if (lastDurationMs !== undefined) row.lastDuration = lastDurationMs;
  return row;
}

/** Ping events read per check for its runs: its latest finishes among its starts and logs. */
const PINGS_PER_RUN = 4;
/** Checks whose runs one statement reads: under SQLite's most parts of a compound SELECT (500). */
const RUNS_READ_AT_ONCE = 200;

/** A run from its ping event's tags (kind, exit-status, duration); null for a start, a log, or another event tagged `check`. */
function runOf(ts: number, tags: Record<string, unknown>): CheckRun | null {
  const kind = tags.kind;
  if (kind !== "success" && kind !== "fail" && kind !== "exit") return null;
  const duration = typeof tags.duration === "number" ? Math.round(tags.duration * 1000) : null;
  const status = tags["exit-status"];
  const label = kind === "exit" ? `exit ${String(status)}` : kind;
  return { at: ts, ok: kind === "success" || (kind === "exit" && status === 0), label, durationMs: duration };
}

export function checkStore({ db, t, forUpdate, lockName }: Sql): CheckRepository {
  const { checks, checkKeys, events, eventTags } = t;
  const where = (key: CheckKey): SQL =>
    "uuid" in key
      ? eq(checks.uuid, key.uuid)
      : "pushToken" in key
        ? eq(checks.pushToken, key.pushToken)
        : and(eq(checks.projectId, key.projectId), eq(checks.slug, key.slug))!;

  const keyRow = async (condition: SQL) => (await db.select().from(checkKeys).where(condition).limit(1))[0] ?? null;

  return {
    async create(check, now) {
      const [created] = await db
        .insert(checks)
        .values({
          ...checkUpdate(check),
          projectId: check.projectId,
          state: check.paused ? "paused" : "new",
          since: now,
          runs: "{}",
          createdAt: now,
          updatedAt: now,
        } as typeof checks.$inferInsert)
        .returning();
      return checkRow(created!);
    },

    async find(id) {
      const [found] = await db.select().from(checks).where(eq(checks.id, id)).limit(1);
      return found ? checkRow(found) : null;
    },

    async count(projectId) {
      const [row] = await db.select({ n: count() }).from(checks).where(eq(checks.projectId, projectId));
      return Number(row?.n ?? 0);
    },

    async findBy(key, options) {
      if (Object.values(key).some((v) => typeof v === "string" && hasNul(v))) return [];
      // Two at most: one is the check, two say the slug is not unique.
      const read = db.select().from(checks).where(where(key)).orderBy(asc(checks.id)).limit(2);
      return (options?.lock ? await forUpdate(read) : await read).map(checkRow);
    },

    async list(projectId) {
      return (await db.select().from(checks).where(eq(checks.projectId, projectId)).orderBy(asc(checks.id))).map(
        checkRow,
      );
    },

    async update(id, changes, now) {
      const [updated] = await db
        .update(checks)
        .set({ ...checkUpdate(changes), updatedAt: now })
        .where(eq(checks.id, id))
        .returning();
      return updated ? checkRow(updated) : null;
    },

    async delete(id) {
      return (await db.delete(checks).where(eq(checks.id, id)).returning({ id: checks.id })).length > 0;
    },

    async due(now, limit) {
      // A range of the next_due index, soonest first: as cheap with a million checks as with ten.
      const rows = await db
        .select()
        .from(checks)
        .where(and(isNotNull(checks.nextDue), lte(checks.nextDue, now)))
        .orderBy(asc(checks.nextDue))
        .limit(limit);
      return rows.map(checkRow);
    },

    async transition(id, from: CheckMark, changes, now) {
      // Compared and set in one statement: of two writers that saw the same check, one changes it.
      const changed = await db
        .update(checks)
        .set({ ...checkUpdate(changes), updatedAt: now })
        .where(
          and(
            eq(checks.id, id),
            eq(checks.state, from.state),
            from.nextDue === null ? isNull(checks.nextDue) : eq(checks.nextDue, from.nextDue),
            eq(checks.streak, from.streak),
            eq(checks.notified, from.notified),
          ),
        )
        .returning({ id: checks.id });
      return changed.length > 0;
    },

    lockNames: () => lockName("checks"),

    async pingKey(projectId) {
      return (await keyRow(eq(checkKeys.projectId, projectId)))?.pingKey ?? null;
    },

    async setPingKey(projectId, key, now) {
      await db
        .insert(checkKeys)
        .values({ projectId, pingKey: key, createdAt: now })
        .onConflictDoUpdate({ target: checkKeys.projectId, set: { pingKey: key, createdAt: now } });
    },

    async projectOfPingKey(key) {
      if (hasNul(key)) return null;
      return (await keyRow(eq(checkKeys.pingKey, key)))?.projectId ?? null;
    },

    async badgeKey(projectId) {
      return (await keyRow(eq(checkKeys.projectId, projectId)))?.badgeKey ?? null;
    },

    async setBadgeKey(projectId, key) {
      await db.update(checkKeys).set({ badgeKey: key }).where(eq(checkKeys.projectId, projectId));
    },

    async projectOfBadgeKey(key) {
      if (hasNul(key)) return null;
      return (await keyRow(eq(checkKeys.badgeKey, key)))?.projectId ?? null;
    },

    async runs(projectId, slugs, limit) {
      const out: Record<string, CheckRun[]> = Object.fromEntries(slugs.map((s) => [s, []]));
      const wanted = slugs.filter((s) => !hasNul(s));
      // Each check's newest pings, a range of the tag index (project, key, value, ts) read backwards;
      // a statement for each RUNS_READ_AT_ONCE checks (SQLite takes at most 500 parts in a UNION),
      // whose events are then read by id.
      for (let from = 0; from < wanted.length; from += RUNS_READ_AT_ONCE) {
        const parts = wanted.slice(from, from + RUNS_READ_AT_ONCE).map(
          (slug, i) =>
            sql`SELECT r${sql.raw(String(i))}.event_id FROM (${db
              .select({ event_id: eventTags.eventId })
              .from(eventTags)
              .where(and(eq(eventTags.projectId, projectId), eq(eventTags.key, "check"), eq(eventTags.value, slug)))
              .orderBy(desc(eventTags.ts), desc(eventTags.eventId))
              .limit(limit * PINGS_PER_RUN)}) AS r${sql.raw(String(i))}`,
        );
        const rows = await db
          .select({ ts: events.ts, id: events.id, tags: events.tags })
          .from(events)
          .where(sql`${events.id} IN (${sql.join(parts, sql` UNION ALL `)})`)
          .orderBy(asc(events.ts), asc(events.id));
        for (const row of rows) {
          const tags = row.tags ? (JSON.parse(row.tags) as Record<string, unknown>) : {};
          const slug = tags.check;
          if (typeof slug !== "string" || !out[slug]) continue;
          const run = runOf(row.ts, tags);
          if (run) out[slug]!.push(run);
        }
      }
      for (const slug of wanted) out[slug] = out[slug]!.slice(-limit);
      return out;
    },
  };
}
