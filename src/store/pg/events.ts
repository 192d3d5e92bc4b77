// Events on PostgreSQL: written a batch at a time with ids in commit order (see writer.ts), listed by
// event time with keyset pagination, searched through the tsvector of their folded words.
import { type EventRow, toEvent } from "../rows.ts";
import { and, asc, desc, eq, inArray, lt, sql } from "drizzle-orm";
import type { EventContent, NewEvent, StoredEvent, Tags } from "../../model/event.ts";
import { tagText } from "../../model/event.ts";
import type { EventFilter } from "../../model/filter.ts";
import { feedColumns, keyset, tagIs, tagRange } from "../feed.ts";
import { searchTokens } from "../search-tokens.ts";
import type { EventRepository, Page } from "../store.ts";
import type { SQL as SQL_ } from "bun";
import { batchOf, type Ctx } from "./context.ts";
import { rowsOn } from "./db.ts";
import { conditions, eventSource, within } from "./event-source.ts";
import { idWords } from "./users-search.ts";
import { buildSummaries, removeSummaries } from "./summaries.ts";
import { channels, eventIds, events, eventTags } from "./schema.ts";

const columns = feedColumns(events);

/** tsvector lexemes are at most 2047 bytes; searches are at most 200 characters, so a longer word is matched by its start. */
const MAX_WORD = 500;

/** The words the index holds for an event: its name's and description's, folded as the live matcher folds them. */
export function searchText(name: string, description: string | null): string {
  const words = new Set<string>();
  for (const word of [...searchTokens(name), ...searchTokens(description ?? "")]) words.add(word.slice(0, MAX_WORD));
  return [...words].join(" ");
}

/**
 * Writes `list` through the procedure write_events (drizzle/pg/0005: 0002's with priorities), which also
 * moves the event id counter by as many, taking its lock (the cluster-wide order) until the
 * transaction ends, and with `notify` tells every instance the last id. `commitNow`: outside a
 * transaction, the procedure commits the batch itself without waiting for the disk, holding the
 * order only while it runs (`heldUs`); `wal` is where the WAL must be on disk before the batch
 * is acknowledged. Each event gets its id, in `list`'s order. Rows go as arrays, a column each: as
 * many parameters whatever the number of events.
 */
export async function writeEvents(
  client: Pick<SQL_, "unsafe">,
  list: StoredEvent[],
  notify: string | null,
  commitNow: boolean,
): Promise<{ last: number; wal: string | null; heldUs: number }> {
  const n = list.length;
  const cols = Array.from({ length: 14 }, () => new Array<unknown>(n));
  const tagEvent: number[] = [];
  const tagKey: string[] = [];
  const tagValue: string[] = [];
  for (let i = 0; i < n; i++) {
    const e = list[i]!;
    cols[0]![i] = e.projectId;
    cols[1]![i] = e.channelId;
    cols[2]![i] = e.name;
    cols[3]![i] = e.description;
    cols[4]![i] = e.icon;
    cols[5]![i] = e.notify;
    cols[6]![i] = e.parser;
    cols[7]![i] = e.userId;
    cols[8]![i] = e.tags ? JSON.stringify(e.tags) : null;
    cols[9]![i] = e.ts;
    cols[10]![i] = e.receivedAt;
    cols[11]![i] = e.historical;
    cols[12]![i] = searchText(e.name, e.description);
    cols[13]![i] = e.priority;
    if (e.tags) {
      for (const key in e.tags) {
        tagEvent.push(i + 1);
        tagKey.push(key);
        tagValue.push(tagText(e.tags[key]!));
      }
    }
  }
  const [{ last_event, wal, held }] = (await client.unsafe(WRITE, [
    ...cols,
    tagEvent,
    tagKey,
    tagValue,
    notify,
    commitNow,
  ])) as [{ last_event: string | number; wal: string | null; held: number | null }];
  const last = Number(last_event);
  for (let i = 0; i < n; i++)
    Object.defineProperty(list[i]!, "id", {
      value: last - n + i + 1,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  return { last, wal, heldUs: held ?? 0 };
}

const WRITE = `CALL write_events($1::int[], $2::int[], $3::text[], $4::text[], $5::text[], $6::bool[], $7::text[], $8::text[], $9::text[],
  $10::bigint[], $11::bigint[], $12::bool[], $13::text[], $14::int[], $15::int[], $16::text[], $17::text[], $18, $19)`;

/** An event's id before its batch has written it: reading it is a bug (insert's idNow says when it is needed), not a silent undefined. */
const UNNUMBERED: PropertyDescriptor = {
  get(): never {
    throw new Error("an event's id is not known inside its write unless insert() was asked for it (idNow)");
  },
  enumerable: false,
  configurable: true,
};

/**
 * Returns once the WAL up to `wal` (a position, as PostgreSQL writes it) is on disk: at once when it
 * is already (nearly always by the time a reader asks), else after a WAL message committed
 * synchronously, which flushes everything before it. A batch of events is visible a moment before
 * it is on disk (write_events commits it without waiting); its writer acknowledges it only after
 * this, and what is followed or resumed by id waits for it too: were the database to crash in
 * that moment, the batch's ids would be handed out again, and a reader that had passed them would
 * skip the new events.
 */
export async function onDisk(client: Pick<SQL_, "unsafe">, wal: string): Promise<void> {
  await client.unsafe(
    "SELECT CASE WHEN pg_current_wal_flush_lsn() >= $1::pg_lsn THEN NULL ELSE pg_logical_emit_message(true, 'signalboard', 'on disk') END",
    [wal],
  );
}

export function eventStore(ctx: Ctx): EventRepository {
  const { db } = ctx;
  const select = () => db.select(columns).from(events);
  const rows = rowsOn(db);

  return {
    async insert(e: NewEvent, options?: { idNow?: boolean }) {
      // A user id's first event gives it its row in the users search (users-search.ts); once
      // committed, this instance remembers it, and the user's next events write nothing there.
      if (e.userId !== null && !ctx.names.user(e.projectId, e.userId)) {
        await db.execute(
          sql`insert into user_search (project_id, user_id, part, words) values (${e.projectId}, ${e.userId}, '', ${idWords(e.userId)}) on conflict do nothing`,
        );
        batchOf(ctx).found({ user: { projectId: e.projectId, userId: e.userId } });
      }
      // Queued: the batch writes its events together, and numbers them then (see writer.ts).
      const row = e as StoredEvent; // the caller's new object: given its id rather than copied (this runs per event)
      row.priority ??= 3;
      Object.defineProperty(row, "id", UNNUMBERED);
      await batchOf(ctx).event(row, options?.idNow ?? false);
      return row;
    },

    async contentAt(channelId: number, ts: number): Promise<EventContent[]> {
      const rows = await db
        .select({
          name: events.name,
          description: events.description,
          icon: events.icon,
          parser: events.parser,
          userId: events.userId,
          tags: events.tags,
        })
        .from(events)
        .where(and(eq(events.channelId, channelId), eq(events.ts, ts)));
      return rows.map((r) => ({ ...r, tags: r.tags ? (JSON.parse(r.tags) as Tags) : null }));
    },

    async findById(id: number) {
      const [row] = await select().where(eq(events.id, id)).limit(1);
      return row ? toEvent(row) : null;
    },

    async list(filter: EventFilter & Page) {
      const newestFirst = !filter.after;
      const [firstTag, ...otherTags] = filter.tags ?? [];
      if (firstTag && filter.projectId !== undefined) {
        // The first tag drives the query from its index, in feed order; the rest are checked per row.
        const page = keyset(eventTags.ts, eventTags.eventId, filter);
        const order = newestFirst
          ? [desc(eventTags.ts), desc(eventTags.eventId)]
          : [asc(eventTags.ts), asc(eventTags.eventId)];
        const rows = await db
          .select(columns)
          .from(eventTags)
          .innerJoin(events, eq(events.id, eventTags.eventId))
          .where(
            and(
              tagIs(eventTags, filter.projectId, firstTag),
              tagRange(eventTags.ts, filter),
              page,
              ...conditions(filter, otherTags),
            ),
          )
          .orderBy(...order)
          .limit(filter.limit);
        return rows.map(toEvent);
      }
      const order = newestFirst ? [desc(events.ts), desc(events.id)] : [asc(events.ts), asc(events.id)];
      const rows = await select()
        .where(and(...conditions(filter, filter.tags ?? []), keyset(events.ts, events.id, filter)))
        .orderBy(...order)
        .limit(filter.limit);
      return rows.map(toEvent);
    },

    async count(filter: EventFilter, cap: number) {
      // The feed's conditions, driven as the feed drives them (event-source.ts), the rows read stopping at cap + 1.
      const source = eventSource(filter, true);
      const where = and(source.where, ...conditions({ from: filter.from, to: filter.to }, []));
      const [row] = await rows<{ n: number }>(
        sql`SELECT count(*)::int AS n FROM (SELECT 1 FROM ${source.from} ${where ? sql`WHERE ${where}` : sql``} LIMIT ${cap + 1}) m`,
      );
      return row?.n ?? 0;
    },

    async range(projectId, afterId, throughId, limit) {
      // Every instance follows every event through here (index.ts, follow), so the query is plain
      // SQL with rows as they come (no query built, no row mapped per event). It walks the id range
      // only: `+ 0` keeps the planner from taking the project's index and sorting the whole range
      // (what it does when the table grew faster than its statistics). Ids and times are below
      // 2^53, exact as float8, which arrives as a number.
      const project = projectId === undefined ? sql`` : sql` AND e.project_id + 0 = ${projectId}`;
      const rows = (await db.execute(sql`
        SELECT e.id::float8 AS id, e.project_id AS "projectId", (SELECT p.name FROM projects p WHERE p.id = e.project_id) AS project,
               e.channel_id AS "channelId", (SELECT c.name FROM channels c WHERE c.id = e.channel_id) AS channel,
               e.event AS name, e.description, e.icon, e.notify, e.parser, e.user_id AS "userId", e.tags,
               e.ts::float8 AS ts, e.received_at::float8 AS "receivedAt", e.historical, e.priority, (SELECT pg_current_wal_insert_lsn())::text AS wal
          FROM events e WHERE e.id > ${afterId} AND e.id <= ${throughId}${project} ORDER BY e.id LIMIT ${limit}`)) as unknown as (EventRow & {
        wal: string;
      })[];
      if (!rows.length) return [];
      await onDisk((db as unknown as { $client: Pick<SQL_, "unsafe"> }).$client, rows[0]!.wal); // Drizzle's own client
      return rows.map(({ wal: _, ...row }) => toEvent(row));
    },

    async activity(projectId, start, days, filter = {}) {
      // The feed's own conditions (a first tag drives the query from the tag index, as in list()),
      // counted per channel and day in one pass over the window's matches.
      const source = eventSource({ ...filter, projectId }, true);
      const window = within(source, start, start + days * 86_400_000);
      const range = conditions({ from: filter.from, to: filter.to }, []);
      const found = await rows<{ channelId: number; day: number; n: number }>(
        sql`SELECT events.channel_id AS "channelId", floor((${source.ts} - ${start}) / 86400000)::int AS day, count(*)::int AS n
              FROM ${source.from} WHERE ${and(source.where, window, ...range)} GROUP BY 1, 2`,
      );
      const list = await db
        .select({ id: channels.id, name: channels.name })
        .from(channels)
        .where(eq(channels.projectId, projectId))
        .orderBy(asc(channels.name));
      const counts = new Map(list.map((c) => [c.id, Array.from({ length: days }, () => 0)]));
      for (const r of found) {
        const row = counts.get(Number(r.channelId));
        if (row && r.day >= 0 && r.day < days) row[r.day] = Number(r.n);
      }
      return list.map((c) => ({ channel: c.name, counts: counts.get(c.id)! }));
    },

    async deleteBatch(where, limit) {
      const victims = await db
        .select({
          id: events.id,
          projectId: events.projectId,
          channelId: events.channelId,
          name: events.name,
          userId: events.userId,
          ts: events.ts,
          tags: events.tags,
        })
        .from(events)
        .where(
          and(
            eq(events.projectId, where.projectId),
            where.channelId === undefined ? undefined : eq(events.channelId, where.channelId),
            where.before === undefined ? undefined : lt(events.ts, where.before),
          ),
        )
        .orderBy(asc(events.ts))
        .limit(limit);
      if (!victims.length) return 0;
      // Each tag row by its whole key, known from the event: index lookups, no scan of the tag index.
      const tagKeys = victims.flatMap((v) =>
        v.tags
          ? Object.entries(JSON.parse(v.tags) as Tags).map(([key, value]) => ({
              key,
              value: tagText(value),
              ts: v.ts,
              event_id: v.id,
            }))
          : [],
      );
      if (tagKeys.length) {
        await db.execute(sql`
          delete from event_tags t using jsonb_to_recordset(${JSON.stringify(tagKeys)}::text::jsonb) as v(key text, value text, ts bigint, event_id bigint)
           where t.project_id = ${where.projectId} and t.key = v.key and t.value = v.value and t.ts = v.ts and t.event_id = v.event_id`);
      }
      await db.delete(events).where(
        inArray(
          events.id,
          victims.map((v) => v.id),
        ),
      );
      await removeSummaries(
        db,
        victims.map((v) => ({ ...v, tags: v.tags ? (JSON.parse(v.tags) as Tags) : null })),
        where,
      );
      return victims.length;
    },

    async buildSummaries(limit) {
      return buildSummaries(db, limit);
    },

    async lastId() {
      // The counter, not max(id): ids of deleted events are never handed out again.
      const [row] = await db.select({ id: eventIds.lastId }).from(eventIds).limit(1);
      return row?.id ?? 0;
    },
  };
}
