// Where a question's events are read from on PostgreSQL, driven as the feed drives them: the
// events' indexes, or the tag index for a first tag; and the feed's conditions on them. Shared by
// the feed's count and activity (events.ts), the raw series (analytics.ts) and the summaries'
// reads of the parts of an hour at a bucket's ends (summary-reads.ts).
import { and, type SQL, sql } from "drizzle-orm";
import type { GroupBy } from "../../model/analytics.ts";
import type { EventFilter } from "../../model/filter.ts";
import { eventConditions, tagIs } from "../feed.ts";
import { narrowsEvents } from "../series.ts";
import { channels, events, eventTags } from "./schema.ts";

/**
 * Where a series' events are read from: a FROM clause, its conditions, and the time column to bound
 * (with `also`, the events' own, bound the same way when the tag index drives a join with them).
 */
export type Source = { from: SQL; where: SQL; ts: SQL; also?: SQL };

/** A source's events from `lo` to before `hi`. */
export const within = (source: Source, lo: SQL | number, hi: SQL | number): SQL =>
  sql`${source.ts} >= ${lo} AND ${source.ts} < ${hi}${source.also ? sql` AND ${source.also} >= ${lo} AND ${source.also} < ${hi}` : sql``}`;

/** The events of `filter` (without its range: the buckets bound it), driven as the feed drives them. */
export function eventSource(filter: EventFilter, needsEvents: boolean): Source {
  const scoped: EventFilter = { ...filter, from: undefined, to: undefined };
  const [first, ...others] = scoped.tags ?? [];
  if (!first || scoped.projectId === undefined)
    return { from: sql`events`, where: and(...conditions(scoped, scoped.tags ?? []))!, ts: sql`events.ts` };
  const byTag = tagIs(eventTags, scoped.projectId, first);
  const rest: EventFilter = { ...scoped, tags: others, projectId: undefined };
  if (!needsEvents && !narrowsEvents(rest) && rest.channel === undefined)
    return { from: sql`event_tags`, where: byTag, ts: sql`event_tags.ts` };
  // The events' time bound too (it is the tag's): else the planner may read every event of the project to join them.
  return {
    from: sql`event_tags JOIN events ON events.id = event_tags.event_id`,
    where: and(byTag, ...conditions(scoped, others))!,
    ts: sql`event_tags.ts`,
    also: sql`events.ts`,
  };
}

/** A group's value for each event: its channel's name, its name, or a tag's value as sent (the text event_tags holds). */
export function groupOf(groupBy: GroupBy | null, from: SQL): { from: SQL; group: SQL } {
  if (!groupBy) return { from, group: sql`NULL::text` };
  if (groupBy.by === "channel")
    return { from: sql`${from} JOIN channels ch ON ch.id = events.channel_id`, group: sql`ch.name` };
  if (groupBy.by === "event") return { from, group: sql`events.event` };
  // The tags column is JSON.stringify's text: json (not jsonb) keeps a number's text as written, as tagText() does.
  return { from, group: sql`(events.tags::json ->> ${groupBy.key})` };
}

/** Search words → a tsquery: every word, the last as a prefix (each quoted: nothing typed is tsquery syntax). */
export function tsQuery(terms: string[]): string | null {
  if (!terms.length) return null;
  return terms
    .map((t, i) => `'${t.replace(/\\/g, "\\\\").replace(/'/g, "''")}'${i === terms.length - 1 ? ":*" : ""}`)
    .join(" & ");
}

/** The feed's conditions: the events' own (feed.ts), the tags past the first, the words. */
export function conditions(filter: EventFilter, tags: [string, string][]): (SQL | undefined)[] {
  const list = eventConditions(filter, events, channels);
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
