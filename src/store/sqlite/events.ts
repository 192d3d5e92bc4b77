// Events: the insert on the ingest path (prepared once), and keyset-paginated listing by event
// time. Never OFFSET: every page is an index seek from the last row of the previous one.
import { toEvent } from "../rows.ts";
import { and, desc, eq, gt, lte, type SQL, sql } from "drizzle-orm";
import type { EventFilter } from "../../model/filter.ts";
import type { Db } from "./db.ts";
import type { Victim } from "../summary/deltas.ts";
import type { SummaryKeeper } from "./summaries.ts";
import { eventTags } from "./manual-tables.ts";
import { events } from "./schema.ts";
import { conditions, eventSource, indexed, unindexed } from "./event-source.ts";
import { feedColumns, keyset, tagIs, tagRange } from "../feed.ts";
import { ftsQuery } from "../search-tokens.ts";
import { narrowsEvents } from "../series.ts";
import type { Page } from "../store.ts";
import { type EventContent, type NewEvent, type StoredEvent, type Tags, tagText } from "../../model/event.ts";

const columns = feedColumns(events);

type Bind = string | number | null;

/**
 * `searching` is the connection that can see the full-text index (see search.ts); `summaries`, the
 * writer's, keeps the summaries of what is written and deleted (summaries.ts).
 */
export function eventStore(db: Db, searching: () => Db, summaries?: SummaryKeeper) {
  // The ingest path: plain prepared statements (a query builder would cost more than the insert).
  const insertEvent = db.$client.prepare<never, Bind[]>(
    "INSERT INTO events (project_id, channel_id, event, description, icon, notify, parser, user_id, tags, ts, received_at, historical, priority) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const insertTag = db.$client.prepare<never, Bind[]>(
    "INSERT INTO event_tags (project_id, key, value, ts, event_id) VALUES (?, ?, ?, ?, ?)",
  );
  // Asked once per imported event, so it must stay a seek. INDEXED BY, because statistics taken
  // while the table was tiny (PRAGMA optimize at close) make SQLite scan the table instead.
  const contentAt = db.$client.prepare<Omit<EventContent, "tags"> & { tags: string | null }, [number, number]>(
    "SELECT event AS name, description, icon, parser, user_id AS userId, tags FROM events INDEXED BY events_channel_ts WHERE channel_id = ? AND ts = ?",
  );

  function select(from: Db = db) {
    return from.select(columns).from(events);
  }

  return {
    insert(e: NewEvent): StoredEvent {
      const tags = e.tags ? JSON.stringify(e.tags) : null;
      const row = e as StoredEvent; // the caller's new object: given its id rather than copied (this runs per event)
      row.priority ??= 3;
      const id = Number(
        insertEvent.run(
          e.projectId,
          e.channelId,
          e.name,
          e.description,
          e.icon,
          e.notify ? 1 : 0,
          e.parser,
          e.userId,
          tags,
          e.ts,
          e.receivedAt,
          e.historical ? 1 : 0,
          row.priority,
        ).lastInsertRowid,
      );
      if (e.tags) {
        for (const key in e.tags) insertTag.run(e.projectId, key, tagText(e.tags[key]!), e.ts, id);
      }
      row.id = id;
      summaries?.note(row);
      return row;
    },

    /** The content of each event the channel holds at exactly `ts`. */
    contentAt(channelId: number, ts: number): EventContent[] {
      return contentAt
        .all(channelId, ts)
        .map((row) => ({ ...row, tags: row.tags ? (JSON.parse(row.tags) as Tags) : null }));
    },

    findById(id: number): StoredEvent | null {
      const row = select().where(eq(events.id, id)).get();
      return row ? toEvent(row) : null;
    },

    /** Newest first by event time (then id), or oldest first when paging forward with `after`. */
    list(filter: EventFilter & Page): StoredEvent[] {
      const newestFirst = !filter.after;
      const match = ftsQuery(filter.terms ?? []);
      const source = match ? searching() : db;
      const [firstTag, ...otherTags] = filter.tags ?? [];
      if (firstTag && filter.projectId !== undefined) {
        return listByTag(source, filter, firstTag, and(...conditions(filter, otherTags)), newestFirst);
      }
      // A rare full-text match drives the query from its few ids: no other index may take over.
      const col = match && fewMatches(source, match) ? unindexed : indexed;
      const where = and(
        ...conditions(filter, filter.tags ?? [], col),
        keyset(col(events.ts), indexed(events.id), filter),
      );
      const ts = col(events.ts);
      const order = newestFirst ? [desc(ts), desc(events.id)] : [ts, events.id];
      return select(source)
        .where(where)
        .orderBy(...order)
        .limit(filter.limit)
        .all()
        .map(toEvent);
    },

    /**
     * How many events match, up to cap + 1: the feed's conditions, the rows read stopping there.
     * Words drive the query from the search index, whose matches come one by one (the feed's
     * `id IN (matches)` would collect every match first); else a first tag from its index, as in list().
     */
    count(filter: EventFilter, cap: number): number {
      const match = ftsQuery(filter.terms ?? []);
      if (match) {
        const where = and(...conditions({ ...filter, terms: undefined }, filter.tags ?? []));
        const [row] = searching().all<{ n: number }>(
          sql`select count(*) as n from (select 1 from search.events_fts join ${events} on ${events.id} = events_fts.rowid where events_fts match ${match}${where ? sql` and ${where}` : sql``} limit ${cap + 1})`,
        );
        return row?.n ?? 0;
      }
      const source = eventSource(db, searching, filter, true);
      const where = and(source.where, ...conditions({ from: filter.from, to: filter.to }, []));
      const query = sql`SELECT count(*) AS n FROM (SELECT 1 FROM ${sql.raw(source.from)} ${where ? sql`WHERE ${where}` : sql``} LIMIT ${cap + 1})`;
      return source.db.all<{ n: number }>(query)[0]?.n ?? 0;
    },

    /**
     * Events of a project (or all) with ids in (afterId, throughId], in id order, at most `limit`:
     * what a reconnecting stream missed. It walks the id range only (the `+` keeps SQLite from
     * taking the project's index instead), so the work is bounded by the range however rare the
     * project's events are in it; callers bound the range and filter the rest in memory.
     */
    range(projectId: number | undefined, afterId: number, throughId: number, limit: number): StoredEvent[] {
      const where = and(
        gt(events.id, afterId),
        lte(events.id, throughId),
        projectId === undefined ? undefined : eq(unindexed(events.projectId), projectId),
      );
      return select().where(where).orderBy(events.id).limit(limit).all().map(toEvent);
    },

    /**
     * Events per channel for each of `days` consecutive days starting at `start` (Unix ms); with
     * `filter`, only the events a feed with that filter shows (its projectId is ignored).
     */
    async activity(
      projectId: number,
      start: number,
      days: number,
      filter: EventFilter = {},
    ): Promise<{ channel: string; counts: number[] }[]> {
      const channelsOf = db.$client.query<{ id: number; name: string }, [number]>(
        "SELECT id, name FROM channels WHERE project_id = ? ORDER BY name",
      );
      const list = channelsOf.all(projectId);
      if (!narrowsEvents(filter)) {
        // Read from the (channel_id, ts) index alone: no event row is read and nothing is sorted (a
        // GROUP BY over the day would sort every event). A channel's count over the window comes
        // first; a channel with few events in it has their times bucketed here, one with many a
        // count per day. So the cost is the channels plus the events in the window, however many
        // channels there are. A channel or a date range only narrows the channels and the ranges.
        const count = db.$client.query<{ n: number }, [number, number, number]>(
          "SELECT count(*) AS n FROM events WHERE channel_id = ? AND ts >= ? AND ts < ?",
        );
        const times = db.$client.query<{ ts: number }, [number, number, number]>(
          "SELECT ts FROM events WHERE channel_id = ? AND ts >= ? AND ts < ?",
        );
        const lo = Math.max(start, filter.from ?? -Infinity);
        const hi = Math.min(start + days * 86_400_000, filter.to ?? Infinity);
        const perDay = ({ id, name }: { id: number; name: string }) => {
          const counts = Array.from({ length: days }, () => 0);
          if (lo >= hi || (filter.channel !== undefined && name !== filter.channel)) return counts;
          const n = count.get(id, lo, hi)!.n;
          if (n === 0) return counts;
          if (n <= days * 8) {
            for (const { ts } of times.all(id, lo, hi)) counts[Math.floor((ts - start) / 86_400_000)]!++;
            return counts;
          }
          for (let d = 0; d < days; d++) {
            const a = Math.max(start + d * 86_400_000, lo);
            const b = Math.min(start + (d + 1) * 86_400_000, hi);
            if (a < b) counts[d] = count.get(id, a, b)!.n;
          }
          return counts;
        };
        // In slices, with a turn for other requests between them: a project with thousands of
        // channels must not hold the event loop (and /healthz) for the whole chart.
        const rows: { channel: string; counts: number[] }[] = [];
        for (const [i, c] of list.entries()) {
          if (i > 0 && i % 256 === 0) await new Promise((resolve) => setImmediate(resolve));
          rows.push({ channel: c.name, counts: perDay(c) });
        }
        return rows;
      }
      // Filtered: the feed's own conditions (a first tag drives the query from the tag index, as
      // in list()), counted per channel and day in one pass over the window's matches.
      const source = eventSource(db, searching, { ...filter, projectId }, true);
      const ts = sql.raw(source.ts);
      const where = and(source.where, ...conditions({ from: filter.from, to: filter.to }, []));
      const rows = source.db.all<{ channelId: number; day: number; n: number }>(
        sql`SELECT events.channel_id AS channelId, (${ts} - ${start}) / 86400000 AS day, count(*) AS n FROM ${sql.raw(source.from)}
              WHERE ${where} AND ${ts} >= ${start} AND ${ts} < ${start + days * 86_400_000} GROUP BY 1, 2`,
      );
      const counts = new Map(list.map((c) => [c.id, Array.from({ length: days }, () => 0)]));
      for (const r of rows) {
        const row = counts.get(r.channelId);
        if (row && r.day >= 0 && r.day < days) row[r.day] = r.n;
      }
      return list.map((c) => ({ channel: c.name, counts: counts.get(c.id)! }));
    },

    /**
     * Deletes up to `limit` events matching `where` (oldest first) with their tags and search
     * entries; returns how many. Callers loop in separate transactions, so deleting a million
     * events never holds the write lock for more than a moment.
     */
    deleteBatch(where: { projectId: number; channelId?: number; before?: number }, limit: number): number {
      const victims = db.$client
        .query<Omit<Victim, "tags"> & { tags: string | null }, [number, number | null, number | null, number]>(
          `SELECT id, project_id AS projectId, channel_id AS channelId, event AS name, user_id AS userId, ts, tags FROM events
            WHERE project_id = ?1 AND (?2 IS NULL OR channel_id = ?2) AND (?3 IS NULL OR ts < ?3) ORDER BY ts LIMIT ?4`,
        )
        .all(where.projectId, where.channelId ?? null, where.before ?? null, limit);
      if (!victims.length) return 0;
      // Each tag row is found by its whole key, known from the event: no scan of the tag index.
      const dropTag = db.$client.prepare<never, [number, string, string, number, number]>(
        "DELETE FROM event_tags WHERE project_id = ? AND key = ? AND value = ? AND ts = ? AND event_id = ?",
      );
      const dropEvent = db.$client.prepare<never, [number]>("DELETE FROM events WHERE id = ?");
      for (const v of victims) {
        if (v.tags)
          for (const [key, value] of Object.entries(JSON.parse(v.tags) as Tags))
            dropTag.run(where.projectId, key, tagText(value), v.ts, v.id);
        dropEvent.run(v.id);
      }
      summaries?.removed(
        victims.map((v) => ({ ...v, tags: v.tags ? (JSON.parse(v.tags) as Tags) : null })),
        where,
      );
      return victims.length;
    },

    buildSummaries(limit: number): boolean {
      return summaries?.buildStep(limit) ?? false;
    },

    lastId(): number {
      return (
        db
          .select({ id: sql<number>`coalesce(max(${events.id}), 0)` })
          .from(events)
          .get()?.id ?? 0
      );
    },
  };

  // The first tag drives the query from its index, in feed order; the rest are checked per row.
  function listByTag(
    from: Db,
    filter: EventFilter & Page,
    tag: [string, string],
    where: SQL | undefined,
    newestFirst: boolean,
  ): StoredEvent[] {
    const page = keyset(indexed(eventTags.ts), indexed(eventTags.eventId), filter);
    const order = newestFirst ? [desc(eventTags.ts), desc(eventTags.eventId)] : [eventTags.ts, eventTags.eventId];
    return from
      .select(columns)
      .from(eventTags)
      .innerJoin(events, eq(events.id, eventTags.eventId))
      .where(and(tagIs(eventTags, filter.projectId!, tag), tagRange(eventTags.ts, filter), page, where))
      .orderBy(...order)
      .limit(filter.limit)
      .all()
      .map(toEvent);
  }
}

const FEW_MATCHES = 5000;

/**
 * How to order a full-text search. With few matches, look them up by id and sort them (the `+`
 * keeps SQLite from walking the whole feed index instead); with many, walk the feed index in
 * order and stop at a page of matches.
 */
function fewMatches(db: Db, match: string): boolean {
  const row = db.$client
    .query<{ n: number }, [string, number]>(
      "SELECT count(*) AS n FROM (SELECT rowid FROM search.events_fts WHERE events_fts MATCH ? LIMIT ?)",
    )
    .get(match, FEW_MATCHES + 1);
  return (row?.n ?? 0) <= FEW_MATCHES;
}
