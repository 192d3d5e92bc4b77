// What both dialects' event feeds build the same way (store/sqlite/events.ts, store/pg/events.ts):
// the columns a feed selects, a filter's conditions on the events' own columns, the first tag's
// seek on the tag index, and a page's keyset. The tags past the first and the words stay per
// dialect: their SQL differs.
import { and, type Column, eq, gt, gte, lt, lte, or, type SQL, type SQLWrapper, sql, type Table } from "drizzle-orm";
import type { EventFilter } from "../model/filter.ts";
import type { Page } from "./store.ts";

type EventColumns = Record<"projectId" | "channelId" | "userId" | "name" | "ts" | "historical", Column>;
type EventRowColumns = EventColumns &
  Record<"id" | "description" | "icon" | "notify" | "parser" | "tags" | "receivedAt" | "priority", Column>;
type ChannelTable = Table & Record<"id" | "projectId" | "name", Column>;
type TagColumns = Record<"projectId" | "key" | "value", Column>;

/**
 * An event's columns as a feed selects them (store/rows.ts makes the event). The names come from
 * scalar subqueries, not joins: a join lets the planner put the small table first, and then
 * ORDER BY ts can no longer walk an index (a 250k-row sort instead of a 51-row seek).
 */
export function feedColumns<E extends EventRowColumns>(
  events: E,
): Pick<E, keyof EventRowColumns> & Record<"project" | "channel", SQL<string>> {
  return {
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
    priority: events.priority,
  };
}

/** The filter's conditions on the events' columns; `col` is how a dialect names a column (SQLite may hide one from its planner). */
export function eventConditions(
  filter: EventFilter,
  events: EventColumns,
  channels: ChannelTable,
  col: (c: Column) => SQLWrapper = (c) => c,
): (SQL | undefined)[] {
  const channelId =
    filter.channel === undefined
      ? undefined
      : sql`(select ${channels.id} from ${channels} where ${channels.projectId} = ${filter.projectId ?? -1} and ${channels.name} = ${filter.channel})`;
  return [
    filter.projectId === undefined ? undefined : eq(col(events.projectId), filter.projectId),
    channelId === undefined ? undefined : eq(col(events.channelId), channelId),
    filter.userId === undefined ? undefined : eq(col(events.userId), filter.userId),
    filter.event === undefined ? undefined : eq(col(events.name), filter.event),
    filter.from === undefined ? undefined : gte(col(events.ts), filter.from),
    filter.to === undefined ? undefined : lt(col(events.ts), filter.to),
    filter.liveOnly ? eq(col(events.historical), false) : undefined,
  ];
}

/** The project's rows of the tag index with that key and value: where a first tag drives a query from. */
export function tagIs(eventTags: TagColumns, projectId: number, [key, value]: [string, string]): SQL {
  return and(eq(eventTags.projectId, projectId), eq(eventTags.key, key), eq(eventTags.value, value))!;
}

/**
 * The filter's range on the tag index's time (an event's own, copied there): the events' `ts` bound
 * alone is checked per row, so a walk down one tag's rows would not stop at `from` and would read
 * every older row of that tag.
 */
export function tagRange(tagTs: Column, filter: EventFilter): SQL | undefined {
  return and(
    filter.from === undefined ? undefined : gte(tagTs, filter.from),
    filter.to === undefined ? undefined : lt(tagTs, filter.to),
  );
}

// The bound on time alone repeats what the OR says, because the planner cannot seek on an OR:
// without it, a page far into a big project walked the index past every row before the position.
export function keyset(tsColumn: SQLWrapper, idColumn: SQLWrapper, filter: Page): SQL | undefined {
  if (filter.before) {
    const { ts, id } = filter.before;
    return and(lte(tsColumn, ts), or(lt(tsColumn, ts), and(eq(tsColumn, ts), lt(idColumn, id))));
  }
  if (filter.after) {
    const { ts, id } = filter.after;
    return and(gte(tsColumn, ts), or(gt(tsColumn, ts), and(eq(tsColumn, ts), gt(idColumn, id))));
  }
  return undefined;
}
