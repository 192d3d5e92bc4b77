// Tables whose DDL is hand-written in a migration, because drizzle-kit cannot express it; they are
// declared here only so queries stay typed. drizzle.config.ts does not read this file.
import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { MONTH_DAYS } from "../summary/deltas.ts";

/**
 * One row per (event, tag), keyed for "events of project P with tag k=v, newest first": WITHOUT
 * ROWID, so the key is the table and an insert touches one B-tree instead of three. No foreign key
 * (it would need a second index): deleting events deletes their tags explicitly (store/projects.ts).
 */
export const eventTags = sqliteTable(
  "event_tags",
  {
    projectId: integer("project_id").notNull(),
    key: text("key").notNull(),
    value: text("value").notNull(), // strings as sent; numbers and booleans as their JSON text
    ts: integer("ts").notNull(),
    eventId: integer("event_id").notNull(),
  },
  // As drizzle/sqlite/0001 makes it: what `signalboard copy` reads its rows in the order of.
  (t) => [primaryKey({ columns: [t.projectId, t.key, t.value, t.ts, t.eventId] })],
);

/** Summaries (drizzle/sqlite/0014_summaries.sql, store/sqlite/summaries.ts): events per hour of each channel and name. */
export const eventCounts = sqliteTable(
  "event_counts",
  {
    projectId: integer("project_id").notNull(),
    hour: integer("hour").notNull(),
    channelId: integer("channel_id").notNull(),
    name: text("event").notNull(),
    n: integer("n").notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.hour, t.channelId, t.name] })],
);

/** Events per hour with each value of a tag. */
export const tagCounts = sqliteTable(
  "tag_counts",
  {
    projectId: integer("project_id").notNull(),
    key: text("key").notNull(),
    value: text("value").notNull(),
    hour: integer("hour").notNull(),
    n: integer("n").notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.key, t.value, t.hour] })],
);

const dayColumns = Object.fromEntries(
  Array.from({ length: MONTH_DAYS }, (_, i) => [`d${i}`, integer(`d${i}`).notNull().default(0)]),
) as Record<`d${number}`, ReturnType<typeof integer>>;

/** Who was active when: per user and UTC month, a bit per day and per hour. */
export const activity = sqliteTable(
  "activity",
  {
    projectId: integer("project_id").notNull(),
    kind: integer("kind").notNull(),
    key: text("key").notNull(),
    value: text("value").notNull(),
    month: integer("month").notNull(),
    userId: text("user_id").notNull(),
    days: integer("days").notNull().default(0),
    ...dayColumns,
  },
  (t) => [primaryKey({ columns: [t.projectId, t.kind, t.key, t.value, t.month, t.userId] })],
);

/** How many values each tag key, and the event names, have had (up to the limit past which they are not summarized). */
export const summaryKeys = sqliteTable(
  "summary_keys",
  {
    projectId: integer("project_id").notNull(),
    kind: integer("kind").notNull(),
    key: text("key").notNull(),
    n: integer("n").notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.kind, t.key] })],
);

export const summaryValues = sqliteTable(
  "summary_values",
  {
    projectId: integer("project_id").notNull(),
    kind: integer("kind").notNull(),
    key: text("key").notNull(),
    value: text("value").notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.kind, t.key, t.value] })],
);

/** Projects whose summaries are being built, and how far. */
export const summaryBuilds = sqliteTable("summary_builds", {
  projectId: integer("project_id").primaryKey(),
  through: integer("through").notNull().default(0),
  counted: integer("counted").notNull().default(0),
  activeThrough: integer("active_through"),
  activeUser: text("active_user"),
  activeTs: integer("active_ts"),
  activeId: integer("active_id"),
  activeDone: integer("active_done").notNull().default(0),
});
