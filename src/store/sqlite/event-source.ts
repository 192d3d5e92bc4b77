// Where a question's events are read from on SQLite, driven as the feed drives them: the events'
// time index, or the tag index for a first tag; and the feed's conditions on them. Shared by the
// feed's count and activity (events.ts), the raw series (analytics.ts) and the summaries' reads of
// the parts of an hour at a bucket's ends (summary-reads.ts).
import { and, type Column, inArray, type SQL, sql } from "drizzle-orm";
import type { GroupBy } from "../../model/analytics.ts";
import type { EventFilter } from "../../model/filter.ts";
import { eventConditions, tagIs } from "../feed.ts";
import { ftsQuery } from "../search-tokens.ts";
import { narrowsEvents } from "../series.ts";
import type { Db } from "./db.ts";
import { eventTags } from "./manual-tables.ts";
import { channels, events } from "./schema.ts";

/** Where a series' events are read from: a FROM clause, its conditions, and the time column to bound. */
export type Source = { db: Db; from: string; where: SQL; ts: string };

/** The events of `filter` (without its range: the buckets bound it), driven as the feed drives them. */
export function eventSource(db: Db, searching: () => Db, filter: EventFilter, needsEvents: boolean): Source {
  const scoped: EventFilter = { ...filter, from: undefined, to: undefined };
  const from = filter.terms?.length ? searching() : db;
  const [first, ...others] = scoped.tags ?? [];
  if (!first || scoped.projectId === undefined)
    return { db: from, from: "events", where: and(...conditions(scoped, scoped.tags ?? []))!, ts: "events.ts" };
  // The first tag drives from its index (project, key, value, ts): a range per bucket.
  const byTag = tagIs(eventTags, scoped.projectId, first);
  const rest = { ...scoped, tags: others, projectId: undefined };
  if (!needsEvents && !narrowsEvents(rest) && rest.channel === undefined)
    return { db: from, from: "event_tags", where: byTag, ts: "event_tags.ts" };
  return {
    db: from,
    from: "event_tags JOIN events ON events.id = event_tags.event_id",
    where: and(byTag, ...conditions(scoped, others))!,
    ts: "event_tags.ts",
  };
}

/** A group's value for each event: a channel's id (named afterwards), the name, or a tag's value as event_tags holds it. */
export function groupColumn(groupBy: GroupBy | null): string {
  if (!groupBy) return "NULL";
  if (groupBy.by === "channel") return "events.channel_id";
  if (groupBy.by === "event") return "events.event";
  if (!/^[a-z0-9-]{1,64}$/.test(groupBy.key)) throw new Error(`not a tag key: ${JSON.stringify(groupBy.key)}`); // it is written into the statement
  // The tags column is JSON.stringify's text: ->> gives a string as sent, -> a number or boolean as its JSON text (what tagText() stores).
  const path = `'$."${groupBy.key}"'`;
  return `CASE json_type(events.tags, ${path}) WHEN 'text' THEN events.tags ->> ${path} ELSE events.tags -> ${path} END`;
}

/** `+column`: the same value, but SQLite will not pick an index for it. */
export const unindexed = (column: Column): SQL => sql`+${column}`;
export const indexed = (column: Column): SQL => sql`${column}`;

/** The feed's conditions: the events' own (feed.ts), the tags past the first, the words. */
export function conditions(
  filter: EventFilter,
  tags: [string, string][],
  col: (c: Column) => SQL = indexed,
): (SQL | undefined)[] {
  const list = eventConditions(filter, events, channels, col);
  for (const [key, value] of tags) {
    // Every column of event_tags' key is known per row: a point lookup, not a scan.
    list.push(
      sql`exists (select 1 from ${eventTags} where ${eventTags.projectId} = ${events.projectId} and ${eventTags.key} = ${key} and ${eventTags.value} = ${value} and ${eventTags.ts} = ${events.ts} and ${eventTags.eventId} = ${events.id})`,
    );
  }
  const match = ftsQuery(filter.terms ?? []);
  if (match) list.push(textSearch(match));
  return list;
}

/** Full-text search: the matching ids come from the FTS5 index (in search.db, attached as search). */
function textSearch(match: string): SQL {
  return inArray(events.id, sql`(select rowid from search.events_fts where events_fts match ${match})`);
}
