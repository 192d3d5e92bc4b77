// Events on PostgreSQL: inserted with ids in commit order (the batch's, see writer.ts), listed by
// event time with keyset pagination, searched through the tsvector of their folded words.
import { type EventRow, toEvent } from "../rows.ts";
import { and, asc, desc, eq, gt, gte, inArray, lt, lte, or, type SQL, sql } from "drizzle-orm";
import type { PgColumn } from "drizzle-orm/pg-core";
import type { EventContent, NewEvent, StoredEvent, Tags } from "../../model/event.ts";
import { tagText } from "../../model/event.ts";
import type { EventFilter, Position } from "../../model/filter.ts";
import { searchTokens } from "../search-tokens.ts";
import type { EventRepository, Page } from "../store.ts";
import { batchOf, type Ctx } from "./context.ts";
import { idWords } from "./users-search.ts";
import { channels, eventIds, events, eventTags } from "./schema.ts";

const columns = {
  id: events.id,
  projectId: events.projectId,
  project: sql<string>`(select p.name from projects p where p.id = ${events.projectId})`,
  channelId: events.channelId,
  channel: sql<string>`(select c.name from channels c where c.id = ${events.channelId})`,
  name: events.name,
  description: events.description,
  icon: events.icon,
  notify: events.notify,
  parser: events.parser,
  userId: events.userId,
  tags: events.tags,
  ts: events.ts,
  receivedAt: events.receivedAt,
  historical: events.historical,
};


/** tsvector lexemes are at most 2047 bytes; searches are at most 200 characters, so a longer word is matched by its start. */
const MAX_WORD = 500;

/** The words the index holds for an event: its name's and description's, folded as the live matcher folds them. */
export function searchText(name: string, description: string | null): string {
  const words = new Set<string>();
  for (const word of [...searchTokens(name), ...searchTokens(description ?? "")]) words.add(word.slice(0, MAX_WORD));
  return [...words].join(" ");
}

/** Search words → a tsquery: every word, the last as a prefix (each quoted: nothing typed is tsquery syntax). */
export function tsQuery(terms: string[]): string | null {
  if (!terms.length) return null;
  return terms.map((t, i) => `'${t.replace(/\\/g, "\\\\").replace(/'/g, "''")}'${i === terms.length - 1 ? ":*" : ""}`).join(" & ");
}

export function eventStore(ctx: Ctx): EventRepository {
  const { db } = ctx;
  const select = () => db.select(columns).from(events);

  return {
    async insert(e: NewEvent) {
      const id = batchOf(ctx).nextEventId();
      const tags = e.tags ? JSON.stringify(e.tags) : null;
      const tagRows = e.tags ? JSON.stringify(Object.entries(e.tags).map(([key, value]) => ({ key, value: tagText(value) }))) : "[]";
      // A user id's first event gives it its row in the users search (users-search.ts); once
      // committed, this instance remembers it, and the user's next events write nothing there.
      const known = e.userId === null || ctx.names.user(e.projectId, e.userId);
      const user = known ? sql`` : sql`, seen as (insert into user_search (project_id, user_id, part, words) values (${e.projectId}, ${e.userId}, '', ${idWords(e.userId!)}) on conflict do nothing)`;
      if (!known) batchOf(ctx).found({ user: { projectId: e.projectId, userId: e.userId! } });
      // The event, its tag rows and its user's row in one statement: one round trip per event on the ingest path.
      await db.execute(sql`
        with event as (
          insert into events (id, project_id, channel_id, event, description, icon, notify, parser, user_id, tags, ts, received_at, historical, search_text)
          values (${id}, ${e.projectId}, ${e.channelId}, ${e.name}, ${e.description}, ${e.icon}, ${e.notify}, ${e.parser}, ${e.userId}, ${tags}, ${e.ts}, ${e.receivedAt}, ${e.historical}, ${searchText(e.name, e.description)})
          returning id)${user}
        insert into event_tags (project_id, key, value, ts, event_id)
        select ${e.projectId}, t.key, t.value, ${e.ts}, event.id from event, jsonb_to_recordset(${tagRows}::text::jsonb) as t(key text, value text)`);
      const row = e as StoredEvent;
      row.id = id;
      return row;
    },

    async contentAt(channelId: number, ts: number): Promise<EventContent[]> {
      const rows = await db
        .select({ name: events.name, description: events.description, icon: events.icon, parser: events.parser, userId: events.userId, tags: events.tags })
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
        const [key, value] = firstTag;
        const page = keyset(eventTags.ts, eventTags.eventId, filter);
        const order = newestFirst ? [desc(eventTags.ts), desc(eventTags.eventId)] : [asc(eventTags.ts), asc(eventTags.eventId)];
        const rows = await db
          .select(columns)
          .from(eventTags)
          .innerJoin(events, eq(events.id, eventTags.eventId))
          .where(and(eq(eventTags.projectId, filter.projectId), eq(eventTags.key, key), eq(eventTags.value, value), page, ...conditions(filter, otherTags)))
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

    async range(projectId, afterId, throughId, limit) {
      // Walks the id range only: `+ 0` keeps the planner from taking the project's index and
      // sorting the whole range (what it does when the table grew faster than its statistics).
      const rows = await select()
        .where(and(gt(events.id, afterId), lte(events.id, throughId), projectId === undefined ? undefined : sql`${events.projectId} + 0 = ${projectId}`))
        .orderBy(asc(events.id))
        .limit(limit);
      return rows.map(toEvent);
    },

    async activity(projectId, start, days, filter = {}) {
      // The feed's own conditions (a first tag drives the query from the tag index, as in list()),
      // counted per channel and day in one pass over the window's matches.
      const scoped: EventFilter = { ...filter, projectId };
      const end = start + days * 86_400_000;
      const [firstTag, ...otherTags] = scoped.tags ?? [];
      const day = sql<number>`floor((${events.ts} - ${start}) / 86400000)::int`;
      const fields = { channelId: events.channelId, day, n: sql<number>`count(*)::int` };
      const rows = firstTag
        ? await db
            .select(fields)
            .from(eventTags)
            .innerJoin(events, eq(events.id, eventTags.eventId))
            .where(and(eq(eventTags.projectId, projectId), eq(eventTags.key, firstTag[0]), eq(eventTags.value, firstTag[1]), gte(eventTags.ts, start), lt(eventTags.ts, end), ...conditions(scoped, otherTags)))
            .groupBy(sql`1`, sql`2`)
        : await db
            .select(fields)
            .from(events)
            .where(and(...conditions(scoped, []), gte(events.ts, start), lt(events.ts, end)))
            .groupBy(sql`1`, sql`2`);
      const list = await db.select({ id: channels.id, name: channels.name }).from(channels).where(eq(channels.projectId, projectId)).orderBy(asc(channels.name));
      const counts = new Map(list.map((c) => [c.id, Array.from({ length: days }, () => 0)]));
      for (const r of rows) {
        const row = counts.get(Number(r.channelId));
        if (row && r.day >= 0 && r.day < days) row[r.day] = Number(r.n);
      }
      return list.map((c) => ({ channel: c.name, counts: counts.get(c.id)! }));
    },

    async deleteBatch(where, limit) {
      const victims = await db
        .select({ id: events.id, ts: events.ts, tags: events.tags })
        .from(events)
        .where(and(eq(events.projectId, where.projectId), where.channelId === undefined ? undefined : eq(events.channelId, where.channelId), where.before === undefined ? undefined : lt(events.ts, where.before)))
        .orderBy(asc(events.ts))
        .limit(limit);
      if (!victims.length) return 0;
      // Each tag row by its whole key, known from the event: index lookups, no scan of the tag index.
      const tagKeys = victims.flatMap((v) => (v.tags ? Object.entries(JSON.parse(v.tags) as Tags).map(([key, value]) => ({ key, value: tagText(value), ts: v.ts, event_id: v.id })) : []));
      if (tagKeys.length) {
        await db.execute(sql`
          delete from event_tags t using jsonb_to_recordset(${JSON.stringify(tagKeys)}::text::jsonb) as v(key text, value text, ts bigint, event_id bigint)
           where t.project_id = ${where.projectId} and t.key = v.key and t.value = v.value and t.ts = v.ts and t.event_id = v.event_id`);
      }
      await db.delete(events).where(inArray(events.id, victims.map((v) => v.id)));
      return victims.length;
    },

    async lastId() {
      // The counter, not max(id): ids of deleted events are never handed out again.
      const [row] = await db.select({ id: eventIds.lastId }).from(eventIds).limit(1);
      return row?.id ?? 0;
    },
  };
}

function conditions(filter: EventFilter, tags: [string, string][]): (SQL | undefined)[] {
  const channelId = filter.channel === undefined ? undefined : sql`(select ${channels.id} from ${channels} where ${channels.projectId} = ${filter.projectId ?? -1} and ${channels.name} = ${filter.channel})`;
  const list: (SQL | undefined)[] = [
    filter.projectId === undefined ? undefined : eq(events.projectId, filter.projectId),
    channelId === undefined ? undefined : eq(events.channelId, channelId),
    filter.userId === undefined ? undefined : eq(events.userId, filter.userId),
    filter.from === undefined ? undefined : gte(events.ts, filter.from),
    filter.to === undefined ? undefined : lt(events.ts, filter.to),
    filter.liveOnly ? eq(events.historical, false) : undefined,
  ];
  for (const [key, value] of tags) {
    // A lookup per row of the page: `offset 0` keeps the planner from turning it into a join over
    // every event with that tag (half a second at a million events, instead of two milliseconds).
    list.push(
      sql`exists (select 1 from ${eventTags} where ${eventTags.projectId} = ${events.projectId} and ${eventTags.key} = ${key} and ${eventTags.value} = ${value} and ${eventTags.ts} = ${events.ts} and ${eventTags.eventId} = ${events.id} offset 0)`,
    );
  }
  const query = tsQuery(filter.terms ?? []);
  if (query) list.push(sql`${events.search} @@ ${query}::tsquery`);
  return list;
}

function keyset(tsColumn: PgColumn, idColumn: PgColumn, filter: Page & { before?: Position; after?: Position }): SQL | undefined {
  if (filter.before) {
    const { ts, id } = filter.before;
    return or(lt(tsColumn, ts), and(eq(tsColumn, ts), lt(idColumn, id)));
  }
  if (filter.after) {
    const { ts, id } = filter.after;
    return or(gt(tsColumn, ts), and(eq(tsColumn, ts), gt(idColumn, id)));
  }
  return undefined;
}
